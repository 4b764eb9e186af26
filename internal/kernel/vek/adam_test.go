package vek

import (
	"math"
	"math/rand/v2"
	"testing"
)

// adamImplementations runs f with Adam's AVX-512 kernels, its AVX2 ones
// and the Go loops, those the processor and the build have.
func adamImplementations(t *testing.T, f func(t *testing.T)) {
	defer setUseAsm(useAsm)
	defer setUseAVX512(useAVX512)
	for _, impl := range []struct {
		name      string
		asm, wide bool
	}{{"AVX-512", true, true}, {"AVX2", true, false}, {"Go", false, false}} {
		if !setUseAsm(impl.asm) || !setUseAVX512(impl.wide) {
			t.Logf("%s: not on this processor or in this build", impl.name)
			continue
		}
		t.Run(impl.name, f)
	}
}

// adamSteps is Adam's step as the separate calls its documentation lists,
// each over the whole slices.
func adamSteps[T Float](p1, m1, v1, p, g, m, v []T, k *AdamScalars[T]) {
	n := len(p1)
	a, b := make([]T, n), make([]T, n)
	base := p
	switch k.Mode {
	case L2Decay:
		gd := make([]T, n)
		VS(Mul, gd, p, k.Decay)
		VV(Add, gd, g, gd)
		g = gd
	case DecoupledDecay:
		base = make([]T, n)
		VS(Mul, base, p, k.Decay)
	}
	VS(Mul, a, m, k.Beta1)
	VS(Mul, b, g, k.OneMinusBeta1)
	VV(Add, m1, a, b)
	VS(Mul, a, v, k.Beta2)
	Unary(Square, b, g)
	VS(Mul, b, b, k.OneMinusBeta2)
	VV(Add, v1, a, b)
	Unary(Sqrt, a, v1)
	VS(Div, a, a, k.Correction)
	VS(Add, a, a, k.Eps)
	VV(Div, a, m1, a)
	SV(Mul, a, k.StepSize, a)
	VV(Sub, p1, base, a)
}

// checkAdam compares Adam with adamSteps bit for bit on every length up to
// len(p), into fresh outputs and in place, and checks that it writes
// nothing past the outputs' ends.
func checkAdam[T Float](t *testing.T, p, g, m, v []T, k *AdamScalars[T]) {
	t.Helper()
	for _, n := range []int{0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, len(p)} {
		want := [3][]T{make([]T, n), make([]T, n), make([]T, n)}
		adamSteps(want[0], want[1], want[2], p[:n], g[:n], m[:n], v[:n], k)
		for _, inPlace := range []bool{false, true} {
			var out [3][]T
			for j, src := range [][]T{p, m, v} {
				out[j] = make([]T, n+guard)
				if inPlace {
					copy(out[j], src[:n])
				}
				for i := n; i < n+guard; i++ {
					out[j][i] = T(-7.5)
				}
			}
			ins := [4][]T{p[:n], g[:n], m[:n], v[:n]}
			if inPlace {
				ins[0], ins[2], ins[3] = out[0][:n], out[1][:n], out[2][:n]
			}
			Adam(out[0][:n], out[1][:n], out[2][:n], ins[0], ins[1], ins[2], ins[3], k)
			for j := range out {
				for i := range n {
					if bits(out[j][i]) != bits(want[j][i]) {
						t.Fatalf("n=%d in place=%v output %d [%d]: p=%v g=%v m=%v v=%v: got %v (%#x), want %v (%#x)",
							n, inPlace, j, i, p[i], g[i], m[i], v[i], out[j][i], bits(out[j][i]), want[j][i], bits(want[j][i]))
					}
				}
				for i := n; i < n+guard; i++ {
					if out[j][i] != T(-7.5) {
						t.Fatalf("n=%d: output %d: wrote element %d past the end", n, j, i)
					}
				}
			}
		}
	}
}

// TestAdam: Adam's results are those of its separate steps bit for bit,
// on ordinary and special values and scalars, in both element types, with
// every decay, with a bias correction of 1 (which the assembly does not
// divide by) and others, with the AVX-512 and AVX2 assembly and with the
// Go loops.
func TestAdam(t *testing.T) {
	adamImplementations(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for round := range 45 {
			const n = 300
			mode := AdamDecay(round % 3)
			k64 := AdamScalars[float64]{0.9, 0.1, 0.999, 0.001, 0.01 / 0.19, 0.0447, 1e-8, 0.99, mode}
			k32 := AdamScalars[float32]{0.9, 0.1, 0.999, 0.001, 0.01 / 0.19, 0.0447, 1e-8, 0.99, mode}
			switch round % 5 {
			case 4: // special scalars too
				s := values64(rng, 8)
				k64 = AdamScalars[float64]{s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], mode}
				f := values32(rng, 8)
				k32 = AdamScalars[float32]{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], mode}
			case 2: // a correction of 1: the kernel without its division
				k64.Correction, k32.Correction = 1, 1
			}
			checkAdam(t, values64(rng, n), values64(rng, n), values64(rng, n), values64(rng, n), &k64)
			checkAdam(t, values32(rng, n), values32(rng, n), values32(rng, n), values32(rng, n), &k32)
		}
	})
}

func TestAdamDoesNotAllocate(t *testing.T) {
	x := make([]float32, 100)
	x64 := make([]float64, 100)
	k, k64 := &AdamScalars[float32]{Beta1: 0.9, Mode: L2Decay}, &AdamScalars[float64]{Beta1: 0.9, Mode: DecoupledDecay}
	if allocs := testing.AllocsPerRun(20, func() {
		Adam(x, x, x, x, x, x, x, k)
		Adam(x64, x64, x64, x64, x64, x64, x64, k64)
	}); allocs != 0 {
		t.Fatalf("%v allocations per run", allocs)
	}
}

// TestAdamQuotient: the AVX-512 kernels' quotient of the square root x by
// the bias correction c, which they compute with FMAs from RN(1/c) where x
// and c are in range, is x/c correctly rounded: with m = RN(√v/c) from Go's
// math.Sqrt and division, and the other scalars making m1 = m, v1 = v and
// p1 = -(m1/(√v1/c)), every p1 is -1 (a quotient one ulp off makes it
// another number), and all outputs are the separate steps' bit for bit.
// The c are the bias corrections √(1-β2^t) of the first 3,000 steps with
// β2 = 0.999 and 0.99, random ones over the whole range, powers of two,
// significands of all ones and the range's ends; the v are random, of
// every exponent, so that x spans the fast range, its ends and past them
// (zeros, subnormals, infinities and NaNs are TestAdam's).
func TestAdamQuotient(t *testing.T) {
	adamImplementations(t, func(t *testing.T) {
		checkQuotient[float64](t, 100, 700, func(rng *rand.Rand) float64 {
			return math.Float64frombits(rng.Uint64()&^(1<<63|0x7ff<<52) | uint64(rng.IntN(2046)+1)<<52)
		})
		checkQuotient[float32](t, 20, 60, func(rng *rand.Rand) float32 {
			return math.Float32frombits(rng.Uint32()&^(1<<31|0xff<<23) | uint32(rng.IntN(254)+1)<<23)
		})
	})
}

// checkQuotient runs TestAdamQuotient in one element type: cRange is the
// exponent range of the correction's fast path and xRange the square
// root's, random gives positive normal numbers of any exponent.
func checkQuotient[T Float](t *testing.T, cRange, xRange int, random func(*rand.Rand) T) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	var cs []T
	for _, beta2 := range []float64{0.999, 0.99} {
		for step := 1; step <= 3000; step++ {
			cs = append(cs, T(math.Sqrt(1-math.Pow(beta2, float64(step)))))
		}
	}
	for range 300 {
		cs = append(cs, T(math.Ldexp(1+rng.Float64(), rng.IntN(2*cRange)-cRange)))
	}
	edge := T(math.Exp2(float64(cRange)))
	cs = append(cs, 1/edge, edge, 0.5, 4, T(math.Nextafter(2, 0)), T(math.Nextafter(0.5, 0)), 3)
	const n = 1000
	p, g, m, v := make([]T, n), make([]T, n), make([]T, n), make([]T, n)
	want := [3][]T{make([]T, n), make([]T, n), make([]T, n)}
	var out [3][]T
	for i := range out {
		out[i] = make([]T, n)
	}
	for _, c := range cs {
		for i := range v {
			v[i] = random(rng)
			if i%8 == 0 { // the fast range's ends, and past them, with ordinary ones
				x := math.Ldexp(1+float64(i%3)/4, []int{-1, 0, 1}[i/8%3]+[]int{-xRange, xRange}[i/24%2])
				v[i] = T(x * x)
			}
			m[i] = T(math.Sqrt(float64(v[i]))) / c
			if is32[T]() { // float32's square root, rounded once
				m[i] = T(float32(math.Sqrt(float64(v[i])))) / c
			}
		}
		k := AdamScalars[T]{Beta1: 1, OneMinusBeta1: 0, Beta2: 1, OneMinusBeta2: 0, StepSize: 1, Correction: c, Eps: 0}
		adamSteps(want[0], want[1], want[2], p, g, m, v, &k)
		Adam(out[0], out[1], out[2], p, g, m, v, &k)
		for i := range n {
			if math.IsInf(float64(m[i]), 0) || m[i] == 0 {
				continue // x/c past the type's range: -(Inf/Inf) or -(0/0)
			}
			if out[0][i] != -1 {
				t.Fatalf("c=%v (%#x), x=√%v: p1 = %v, want -1: x/c is not %v", c, bits(c), v[i], out[0][i], m[i])
			}
		}
		for j := range out {
			for i := range n {
				if bits(out[j][i]) != bits(want[j][i]) {
					t.Fatalf("c=%v: output %d [%d]: v=%v: got %v, want %v", c, j, i, v[i], out[j][i], want[j][i])
				}
			}
		}
	}
}

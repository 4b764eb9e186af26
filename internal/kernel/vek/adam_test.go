package vek

import (
	"math/rand/v2"
	"testing"
)

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
// divide by) and others, with the assembly and with the Go loops.
func TestAdam(t *testing.T) {
	implementations(t, func(t *testing.T) {
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

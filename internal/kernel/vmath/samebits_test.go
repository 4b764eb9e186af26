package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sameBitsInputs returns the inputs TestAVX512SameBits compares on: the
// specials (±0, ±Inf, NaN, subnormals and each algorithm's thresholds),
// GELU's thresholds (erf's times √2), the float64s next to all of them,
// f's sweeps and random bit patterns; positive for Log.
func sameBitsInputs(f fn, positive bool) []float64 {
	var xs []float64
	for _, s := range specials {
		for _, x := range []float64{s, s * math.Sqrt2} {
			xs = append(xs, x, math.Nextafter(x, math.Inf(-1)), math.Nextafter(x, math.Inf(1)),
				float64(math.Nextafter32(float32(x), float32(math.Inf(-1)))),
				float64(math.Nextafter32(float32(x), float32(math.Inf(1)))))
		}
	}
	xs = append(xs, math.Float64frombits(0x7ff8000000000001), math.Float64frombits(0xfff4000000000000),
		math.Float64frombits(1), math.Float64frombits(0x000fffffffffffff),
		float64(math.Float32frombits(1)), float64(math.Float32frombits(0x007fffff)))
	xs = append(xs, inputs64(f, 20000)...)
	rng := rand.New(rand.NewPCG(9, 10))
	for range 1 << 16 {
		xs = append(xs, float64(math.Float32frombits(rng.Uint32())), 60*rng.Float64()-30, rng.NormFloat64())
	}
	if positive {
		for i, x := range xs {
			xs[i] = math.Abs(x)
		}
	}
	return xs
}

// TestAVX512SameBits checks that the AVX-512 kernels return the same bits
// as the AVX2 ones, both dtypes, on the whole inputs and on every length
// up to 17 (each tail).
func TestAVX512SameBits(t *testing.T) {
	if avx512Kernels == nil {
		t.Skip("no AVX-512 kernels on this processor or build")
	}
	for _, e := range exported {
		f := e.fn
		x64 := sameBitsInputs(f, e.name == "Log")
		x32 := make([]float32, len(x64))
		for i, v := range x64 {
			x32[i] = float32(v)
		}
		check := func(x64 []float64, x32 []float32) {
			a64, b64 := make([]float64, len(x64)), make([]float64, len(x64))
			f.k64(avx2Kernels)(a64, x64)
			f.k64(avx512Kernels)(b64, x64)
			for i := range a64 {
				if math.Float64bits(a64[i]) != math.Float64bits(b64[i]) {
					t.Fatalf("%s64(%v) n=%d: avx2 %v (%#x), avx512 %v (%#x)", e.name, x64[i], len(x64),
						a64[i], math.Float64bits(a64[i]), b64[i], math.Float64bits(b64[i]))
				}
			}
			a32, b32 := make([]float32, len(x32)), make([]float32, len(x32))
			f.k32(avx2Kernels)(a32, x32)
			f.k32(avx512Kernels)(b32, x32)
			for i := range a32 {
				if math.Float32bits(a32[i]) != math.Float32bits(b32[i]) {
					t.Fatalf("%s32(%v) n=%d: avx2 %v (%#x), avx512 %v (%#x)", e.name, x32[i], len(x32),
						a32[i], math.Float32bits(a32[i]), b32[i], math.Float32bits(b32[i]))
				}
			}
		}
		check(x64, x32)
		for n := range 18 {
			check(x64[n:2*n], x32[n:2*n])
		}
	}
}

// TestGELUDerivSameBits checks GELUDeriv32 (float32 only, so not in
// exported): the AVX-512 kernel returns the AVX2 one's bits on the whole
// inputs, and for each implementation, on every length up to 19 and in
// place, each element is the bits of the element computed alone, and the
// exported function uses the active implementation.
func TestGELUDerivSameBits(t *testing.T) {
	defer use(active())
	f := fn{name: "GELUDeriv", k32: func(k *kernelSet) func(dst, src []float32) { return k.geluDeriv32 }}
	x64 := sameBitsInputs(f, false)
	xs := make([]float32, len(x64))
	for i, v := range x64 {
		xs[i] = float32(v)
	}
	if avx512Kernels != nil {
		a, b := make([]float32, len(xs)), make([]float32, len(xs))
		avx2Kernels.geluDeriv32(a, xs)
		avx512Kernels.geluDeriv32(b, xs)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("GELUDeriv32(%v): avx2 %v, avx512 %v", xs[i], a[i], b[i])
			}
		}
	}
	for _, set := range kernelSets() {
		use(set)
		for n := range 20 {
			x := xs[3*n : 4*n]
			got, in := make([]float32, n), append(append([]float32(nil), x...), 1)
			GELUDeriv32(got, x)
			GELUDeriv32(in[:n], in)
			for i := range n {
				var one [1]float32
				set.geluDeriv32(one[:], x[i:i+1])
				for _, g := range []float32{got[i], in[i]} {
					if ulps32(g, one[0]) != 0 {
						t.Fatalf("%s GELUDeriv32 n=%d element %d (%v): %v, alone %v", set.name, n, i, x[i], g, one[0])
					}
				}
			}
			if in[n] != 1 {
				t.Fatalf("%s GELUDeriv32 n=%d wrote past dst", set.name, n)
			}
		}
	}
}

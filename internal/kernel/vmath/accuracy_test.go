package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// fn is one function under test: its float64 and float32 kernels in a
// set, and the reference it is measured against (built from the math
// package).
type fn struct {
	name  string
	k64   func(*kernelSet) func(dst, src []float64)
	k32   func(*kernelSet) func(dst, src []float32)
	ref   func(float64) float64
	sweep [][2]float64 // ranges swept densely, besides the common inputs
}

// refExp is math.Exp, except above 709, where math.Exp in assembly on
// amd64 overflows too early: there e^x = 2^1023·e^y, y = x - 1023·ln2
// (x - 1023·ln2Hi is exact).
func refExp(x float64) float64 {
	if x > 709 && x < 710 {
		return math.Exp((x-1023*ln2Hi)-1023*ln2Lo) * 0x1p1023
	}
	return math.Exp(x)
}

// refLog is math.Log, except for subnormals, which math.Log in assembly on
// amd64 gets wrong: there log x = log(x·2^54) - 54·ln2 (the subtraction
// of 54·ln2Hi is exact).
func refLog(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return (math.Log(x*0x1p54) - 54*ln2Hi) - 54*ln2Lo
	}
	return math.Log(x)
}

func refSigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func refSoftplus(x float64) float64 { return max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

var fns = []fn{
	{"Exp", func(k *kernelSet) func(dst, src []float64) { return k.exp64 },
		func(k *kernelSet) func(dst, src []float32) { return k.exp32 }, refExp,
		[][2]float64{{-750, 712}, {-1, 1}, {-1e-6, 1e-6}, {700, 710}, {-746, -700}, {-104, -85}, {85, 90}}},
	{"Log", func(k *kernelSet) func(dst, src []float64) { return k.log64 },
		func(k *kernelSet) func(dst, src []float32) { return k.log32 }, refLog,
		[][2]float64{{0, 10}, {0.5, 2}, {1 - 1e-6, 1 + 1e-6}, {0, 1e-300}, {1e300, 1.7e308}}},
	{"Tanh", func(k *kernelSet) func(dst, src []float64) { return k.tanh64 },
		func(k *kernelSet) func(dst, src []float32) { return k.tanh32 }, math.Tanh,
		[][2]float64{{-25, 25}, {-1, 1}, {0.6, 0.65}, {-1e-6, 1e-6}}},
	{"Sigmoid", func(k *kernelSet) func(dst, src []float64) { return k.sigmoid64 },
		func(k *kernelSet) func(dst, src []float32) { return k.sigmoid32 }, refSigmoid,
		[][2]float64{{-750, 750}, {-40, 40}, {-1e-6, 1e-6}, {-746, -700}}},
	{"Softplus", func(k *kernelSet) func(dst, src []float64) { return k.softplus64 },
		func(k *kernelSet) func(dst, src []float32) { return k.softplus32 }, refSoftplus,
		[][2]float64{{-750, 750}, {-40, 40}, {-1e-6, 1e-6}, {0.85, 0.92}, {-0.92, -0.85}, {-746, -700}}},
	{"Erf", func(k *kernelSet) func(dst, src []float64) { return k.erf64 },
		func(k *kernelSet) func(dst, src []float32) { return k.erf32 }, math.Erf,
		[][2]float64{{-7, 7}, {-1, 1}, {-1e-6, 1e-6}, {0.84, 0.85}, {-1.26, -1.24}, {2.85, 2.86}, {5.9, 6.1},
			{-1e-300, 1e-300}}},
}

// kernelSets are the implementations this build and processor can run.
func kernelSets() []*kernelSet {
	return append([]*kernelSet{&goKernels}, asmSets...)
}

// specials are inputs every function is checked on exactly or by ulps.
var specials = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2, -2, math.Inf(1), math.Inf(-1), math.NaN(),
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
	0x1p-1022, -0x1p-1022, 0x1p-1023, 0.625, -0.625, math.Nextafter(0.625, 0), 709.78, 709.79, 710, -745.13, -745.14,
	-708.4, 88.72, 88.73, -103.97, -87.34, 1e-310, 1e-20, -1e-20, math.Sqrt2 - 1, 0.881373587019543, -0.881373587019543,
	22, -22, 44, 37, -37, 750, -750, 1e10, -1e10,
	0.84375, -0.84375, 1.25, -1.25, 1 / 0.35, -1 / 0.35, 6, -6, 0x1p-28, 2.848094538889218e-306,
}

// inputs64 returns the inputs f is measured on: the specials, random bit
// patterns (every exponent, subnormals, NaNs), and n points spread over
// each of f's ranges.
func inputs64(f fn, n int) []float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := append([]float64(nil), specials...)
	for range 4 * n {
		xs = append(xs, math.Float64frombits(rng.Uint64()))
	}
	for _, r := range f.sweep {
		for i := range n {
			xs = append(xs, r[0]+(r[1]-r[0])*float64(i)/float64(n-1))
			xs = append(xs, r[0]+(r[1]-r[0])*rng.Float64())
		}
	}
	return xs
}

// ulps64 is the distance between a and b in units in the last place
// (the number of float64s between them, +1); two NaNs are 0 apart, a NaN
// and a number infinitely far, and so are zeros of different signs.
func ulps64(a, b float64) float64 {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		if math.IsNaN(a) && math.IsNaN(b) {
			return 0
		}
		return math.Inf(1)
	case a == 0 && b == 0 && math.Signbit(a) != math.Signbit(b):
		return math.Inf(1)
	}
	d := ordered64(a) - ordered64(b)
	return math.Abs(float64(d))
}

// ordered64 maps a float64's bits to an integer that orders as the
// floats do.
func ordered64(x float64) int64 {
	i := int64(math.Float64bits(x))
	if i < 0 {
		i = math.MinInt64 - i
	}
	return i
}

func ulps32(a, b float32) float64 {
	switch {
	case a != a || b != b:
		if a != a && b != b {
			return 0
		}
		return math.Inf(1)
	case a == 0 && b == 0 && math.Signbit(float64(a)) != math.Signbit(float64(b)):
		return math.Inf(1)
	}
	return math.Abs(float64(ordered32(a) - ordered32(b)))
}

func ordered32(x float32) int64 {
	i := int64(int32(math.Float32bits(x)))
	if i < 0 {
		i = math.MinInt32 - i
	}
	return i
}

// TestAccuracy64 measures each float64 kernel of each implementation
// against its reference: at most 2 ulp.
func TestAccuracy64(t *testing.T) {
	for _, set := range kernelSets() {
		for _, f := range fns {
			xs := inputs64(f, 200000)
			got := make([]float64, len(xs))
			f.k64(set)(got, xs)
			worst, at, fails := 0.0, 0.0, 0
			for i, x := range xs {
				want := f.ref(x)
				if d := ulps64(got[i], want); d > worst || d != d {
					worst, at = d, x
				}
				if d := ulps64(got[i], want); d > 2 {
					t.Errorf("%s %s64(%v) = %v, want %v (%v ulp)", set.name, f.name, x, got[i], want, d)
					if fails++; fails > 10 {
						break
					}
				}
			}
			t.Logf("%s %s64: max %v ulp (at %v) over %d inputs", set.name, f.name, worst, at, len(xs))
		}
	}
}

// TestAccuracy32 measures each float32 kernel against float32 of the
// float64 reference: at most 1 ulp, over every 509th float32 bit pattern
// (every exponent, subnormals, NaNs) and the float32 ranges of the sweeps.
func TestAccuracy32(t *testing.T) {
	const step = 509
	var xs []float32
	for b := uint64(0); b < 1<<32; b += step {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	for _, x := range specials {
		xs = append(xs, float32(x))
	}
	for _, set := range kernelSets() {
		for _, f := range fns {
			in := append([]float32(nil), xs...)
			for _, x := range inputs64(f, 50000)[len(specials):] {
				in = append(in, float32(x))
			}
			got := make([]float32, len(in))
			f.k32(set)(got, in)
			worst, at := 0.0, float32(0)
			for i, x := range in {
				want := float32(f.ref(float64(x)))
				d := ulps32(got[i], want)
				if d > worst || d != d {
					worst, at = d, x
				}
				if d > 1 {
					t.Errorf("%s %s32(%v) = %v, want %v (%v ulp)", set.name, f.name, x, got[i], want, d)
					break
				}
			}
			t.Logf("%s %s32: max %v ulp (at %v) over %d inputs", set.name, f.name, worst, at, len(in))
		}
	}
}

// refGELU is x/2·(1+erf(x/√2)) with math.Erf.
func refGELU(x float64) float64 { return x * 0.5 * (1 + math.Erf(x*sqrtHalf)) }

// TestGELU measures GELU64 and GELU32 of each implementation against
// refGELU: GELU64 within 2 ulp, except below -1, where 1+erf cancels and
// both carry the rounding of erf: there within 2^-52·|x|/2. GELU32
// within 2 ulp from -1 up (the assembly computes in float32; the pure
// Go in float64, 1 ulp), and below -1 within 2^-23·|x|/2 of
// x/2·erfc(|x|/√2) (math.Erfc, no cancellation): PyTorch's float32
// formula rounds 1+erf to float32, 2^-25 of |x| there.
func TestGELU(t *testing.T) {
	f := fn{sweep: [][2]float64{{-10, 10}, {-1.5, 1.5}, {-1e-6, 1e-6}, {-9, -7}, {-1.4, -1}, {-6, -5.5}}}
	xs := inputs64(f, 200000)
	for _, set := range kernelSets() {
		got := make([]float64, len(xs))
		set.gelu64(got, xs)
		in32 := make([]float32, len(xs))
		for i, x := range xs {
			in32[i] = float32(x)
		}
		got32 := make([]float32, len(xs))
		set.gelu32(got32, in32)
		worst, worst32 := 0.0, 0.0
		for i, x := range xs {
			want := refGELU(x)
			d := ulps64(got[i], want)
			if x < -1 && math.Abs(got[i]-want) <= 0x1p-52*math.Abs(x)/2 {
				d = 0
			}
			worst = max(worst, d)
			if d > 2 {
				t.Fatalf("%s GELU64(%v) = %v, want %v (%v ulp)", set.name, x, got[i], want, d)
			}
			x32 := float64(in32[i])
			want32 := refGELU(x32)
			d32 := ulps32(got32[i], float32(want32))
			if x32 < -1 && !math.IsInf(x32, -1) {
				want32 = x32 / 2 * math.Erfc(-x32*sqrtHalf)
				if d32 = math.Abs(float64(got32[i]) - want32); d32 <= 0x1p-23*math.Abs(x32)/2 {
					d32 = 0
				}
			}
			worst32 = max(worst32, d32)
			if !(d32 <= 2) {
				t.Fatalf("%s GELU32(%v) = %v, want %v (%v ulp)", set.name, in32[i], got32[i], want32, d32)
			}
		}
		t.Logf("%s GELU: max %v ulp (float64), %v (float32) outside the cancellation", set.name, worst, worst32)
	}
}

// TestGELUDeriv measures GELUDeriv32 of each implementation against
// Φ(x) + x·φ(x) in float64 (math.Erfc and math.Exp): within
// 6·2^-24·(Φ(x) + |x|·φ(x)), the magnitudes of its terms (the sum
// crosses 0 near -0.75, where no ulp bound holds), or 2^-149 (float32's
// smallest subnormal), and below -5.5, where the assembly takes Φ as 0
// from x/√2 < -4 on (Φ(-4√2) < 2^-26), within 2^-26.
func TestGELUDeriv(t *testing.T) {
	f := fn{sweep: [][2]float64{{-10, 10}, {-1.5, 1.5}, {-0.8, -0.7}, {-1e-6, 1e-6}, {-6, -5.5}, {-16, -14}}}
	xs := inputs64(f, 200000)
	in := make([]float32, len(xs))
	for i, x := range xs {
		in[i] = float32(x)
	}
	for _, set := range kernelSets() {
		got := make([]float32, len(in))
		set.geluDeriv32(got, in)
		worst := 0.0
		for i, x32 := range in {
			x := float64(x32)
			if math.IsInf(x, 0) || x != x {
				// x·φ is ∞·0: NaN, as in the ops Φ + x·φ.
				if got[i] == got[i] {
					t.Fatalf("%s GELUDeriv32(%v) = %v, want NaN", set.name, x32, got[i])
				}
				continue
			}
			cdf, pdf := 0.5*math.Erfc(-x*sqrtHalf), math.Exp(-x*x/2)*invSqrt2Pi
			want := cdf + x*pdf
			diff := math.Abs(float64(got[i]) - want)
			d := diff / (0x1p-24 * (cdf + math.Abs(x)*pdf))
			if diff <= 0x1p-149 || x < -5.5 && diff <= 0x1p-26 {
				d = 0
			}
			worst = max(worst, d)
			if !(d <= 6) {
				t.Fatalf("%s GELUDeriv32(%v) = %v, want %v (%v × 2^-24 of the terms)", set.name, x32, got[i], want, d)
			}
		}
		t.Logf("%s GELUDeriv32: max %v × 2^-24·(Φ + |x|·φ)", set.name, worst)
	}
}

package vmath

import "math"

// sigmoid64 is 1/(1+e^-x), computed as 1/(1+e) for x ≥ 0 and e/(1+e)
// for x < 0 with e = e^-|x| ≤ 1, so that nothing overflows. The numerator
// is chosen by x's sign bit without a branch, which random signs would
// mispredict (-0 gives e = 1 and 0.5 either way).
func sigmoid64(x float64) float64 {
	e := exp64(-math.Abs(x))
	neg := uint64(int64(math.Float64bits(x)) >> 63) // all ones when x < 0
	num := math.Float64frombits(math.Float64bits(1)&^neg | math.Float64bits(e)&neg)
	return num / (1 + e)
}

// softplus64 is log(1+e^x) = max(x, 0) + log1p(e^-|x|), which neither
// overflows for large x nor loses e^x for very negative x.
func softplus64(x float64) float64 { return max(x, 0) + log1p01(exp64(-math.Abs(x))) }

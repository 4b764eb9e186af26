package vmath

import "math"

// sigmoid64 is 1/(1+e^-x), computed as 1/(1+e) for x ≥ 0 and e/(1+e)
// for x < 0 with e = e^-|x| ≤ 1, so that nothing overflows.
func sigmoid64(x float64) float64 {
	e := exp64(-math.Abs(x))
	num := 1.0
	if x < 0 {
		num = e
	}
	return num / (1 + e)
}

// softplus64 is log(1+e^x) = max(x, 0) + log1p(e^-|x|), which neither
// overflows for large x nor loses e^x for very negative x.
func softplus64(x float64) float64 { return max(x, 0) + log1p01(exp64(-math.Abs(x))) }

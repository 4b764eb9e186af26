package vmath

import "math"

// Exp's argument is clamped to [expMin, expMax] (NaN passes): e^x
// overflows above about 709.78 and rounds to 0 below about -745.13, and
// the clamped arguments give the same results, +Inf and 0.
const (
	expMin = -746.0
	expMax = 710.0
)

// Taylor coefficients 1/k! of e^r; with |r| ≤ ln2/2 the terms after
// r^13 are below 2^-60.
const (
	exp2  = 1.0 / 2
	exp3  = 1.0 / 6
	exp4  = 1.0 / 24
	exp5  = 1.0 / 120
	exp6  = 1.0 / 720
	exp7  = 1.0 / 5040
	exp8  = 1.0 / 40320
	exp9  = 1.0 / 362880
	exp10 = 1.0 / 3628800
	exp11 = 1.0 / 39916800
	exp12 = 1.0 / 479001600
	exp13 = 1.0 / 6227020800
)

// exp64 is e^x: x = n·ln2 + r with n an integer and |r| ≤ ln2/2 (the
// Cody-Waite reduction, n·ln2 in two parts), e^r by its Taylor
// polynomial, written as 1 + (r + r²·(A(r²) + r·B(r²))) so that the
// rounding errors of the high-order terms are scaled down by r², and the
// result scaled by 2^n as 2^n1·2^n2 with n1+n2 = n, both normal powers of
// two, so that results overflow to +Inf and round into the subnormals
// correctly.
func exp64(x float64) float64 {
	x = min(max(x, expMin), expMax)
	n := x*log2e + roundMagic - roundMagic
	r := x - n*ln2Hi - n*ln2Lo
	z := r * r
	a := exp2 + z*(exp4+z*(exp6+z*(exp8+z*(exp10+z*exp12))))
	b := exp3 + z*(exp5+z*(exp7+z*(exp9+z*(exp11+z*exp13))))
	p := 1 + (r + z*(a+r*b))
	s1, s2 := scale2(n)
	return p * s1 * s2
}

// scale2 returns the two factors 2^n1 and 2^n2, n1+n2 = n, each a normal
// float64 for |n| ≤ 2044, multiplied in order into p by the caller: a
// single 2^n is out of range below -1022 and above 1023.
func scale2(n float64) (s1, s2 float64) {
	ni := int64(n) // NaN gives some integer: the result is NaN anyway
	n1 := ni >> 1
	return pow2(n1), pow2(ni - n1)
}

// pow2 returns 2^n for -1022 ≤ n ≤ 1023.
func pow2(n int64) float64 { return math.Float64frombits(uint64(n+expBias) << 52) }

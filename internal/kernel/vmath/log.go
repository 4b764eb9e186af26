package vmath

import "math"

// Coefficients of FreeBSD msun's log: R(z) = Lg1·z + … + Lg7·z^7
// approximates (log((1+s)/(1-s)) - 2s)/s, z = s², to 2^-58.45 for
// |s| ≤ 0.1716.
const (
	lg1 = 6.666666666666735130e-01
	lg2 = 3.999999999940941908e-01
	lg3 = 2.857142874366239149e-01
	lg4 = 2.222219843214978396e-01
	lg5 = 1.818357216161805012e-01
	lg6 = 1.531383769920937332e-01
	lg7 = 1.479819860511658591e-01
)

// Log's reduction: adding logOffset to x's bits carries into the
// exponent exactly when the mantissa is at least √2/2's, so that the
// mantissa, re-biased with logMantBase, lies in [√2/2, √2).
const (
	logMantBase    = 0x3fe6a09e00000000
	logOffset      = 0x3ff0000000000000 - logMantBase
	smallestNormal = 0x1p-1022
)

// log64 is the natural logarithm: x = 2^k·m with √2/2 ≤ m < √2 (scaling
// subnormals up by 2^54 first), then log m = log1p(f), f = m-1, by
// logTail.
func log64(x float64) float64 {
	if !(x > 0 && x <= math.MaxFloat64) {
		return logSpecial(x)
	}
	k := 0.0
	if x < smallestNormal {
		x *= 0x1p54
		k = -54
	}
	bits := math.Float64bits(x) + logOffset
	k += float64(int64(bits>>52) - expBias)
	f := math.Float64frombits(bits&fracMask+logMantBase) - 1
	return logTail(f, f/(2+f), k, 0)
}

// logSpecial is log x for x outside (0, +Inf): -Inf at ±0, NaN below 0,
// and x itself for +Inf and NaN.
func logSpecial(x float64) float64 {
	switch {
	case x == 0:
		return math.Inf(-1)
	case x < 0:
		return math.NaN()
	}
	return x
}

// logTail returns k·ln2 + log1p(f) + c, for √2/2-1 ≤ f < √2-1 and s =
// f/(2+f) (to within a few ulp: its error is scaled down by s²/3), by
// msun's formula log1p(f) = f - hfsq + s·(hfsq+R(s²)), hfsq = f²/2; c is
// a small correction added with the low-order terms.
func logTail(f, s, k, c float64) float64 {
	hfsq := 0.5 * f * f
	z := s * s
	w := z * z
	t1 := w * (lg2 + w*(lg4+w*lg6))
	t2 := z * (lg1 + w*(lg3+w*(lg5+w*lg7)))
	return s*(hfsq+(t1+t2)) + (k*ln2Lo + c) - hfsq + f + k*ln2Hi
}

// sqrt2m1 is √2-1: log1p01 takes f = e below it.
const sqrt2m1 = 0.41421356237309504880

// log1p01 is log(1+e) for 0 ≤ e ≤ 1 (NaN passes). Below √2-1, f = e;
// above, 1+e = 2·(1+f) with f = (1+e)/2 - 1 exact, and c = (e -
// ((1+e)-1))/(1+e) corrects for the rounding of 1+e.
func log1p01(e float64) float64 {
	if !(e >= sqrt2m1) {
		return logTail(e, e/(2+e), 0, 0)
	}
	u := 1 + e
	f := 0.5*u - 1
	return logTail(f, f/(2+f), 1, (e-(u-1))/u)
}

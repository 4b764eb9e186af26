package vmath

import "math"

// Cephes' rational approximation of tanh on |x| < 0.625 (the math
// package's): tanh x = x + x·z·P(z)/Q(z), z = x².
const (
	tanhP0 = -9.64399179425052238628e-1
	tanhP1 = -9.92877231001918586564e1
	tanhP2 = -1.61468768441708447952e3
	tanhQ0 = 1.12811678491632931402e2
	tanhQ1 = 2.23548839060100448583e3
	tanhQ2 = 4.84406305325125486048e3

	tanhSmall = 0.625
	// tanhClamp bounds 2|x|: at 44, 2/(e^44+1) < 2^-62 and tanh rounds
	// to 1.
	tanhClamp = 44.0
)

// tanh64 is tanh x: for |x| < 0.625 the rational function, above it
// 1 - 2/(e^2|x|+1), with x's sign; ±0 and NaN pass.
func tanh64(x float64) float64 {
	a := math.Abs(x)
	var r float64
	if a < tanhSmall {
		z := a * a
		r = a + a*z*((tanhP0*z+tanhP1)*z+tanhP2)/(((z+tanhQ0)*z+tanhQ1)*z+tanhQ2)
	} else {
		r = 1 - 2/(exp64(min(2*a, tanhClamp))+1)
	}
	return math.Copysign(r, x)
}

package vmath

// The functions below set dst[i] = f(src[i]) for each i of dst. src must
// be at least as long as dst; dst may be src (but must not overlap it
// otherwise). They call the assembly or the pure-Go kernels directly (not
// through kernelSet's function values), so that their arguments do not
// escape.

// Exp64 sets dst[i] = e^src[i]. Measured error (TestAccuracy64): at most
// 2 ulp from math.Exp.
func Exp64(dst, src []float64) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			exp64AVX512(dst, src)
			return
		}
		exp64AVX2(dst, src)
		return
	}
	map64(dst, src, exp64)
}

// Exp32 sets dst[i] = e^src[i]. Measured error (TestAccuracy32): at most
// 1 ulp from float32(math.Exp(float64(x))).
func Exp32(dst, src []float32) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			exp32AVX512(dst, src)
			return
		}
		exp32AVX2(dst, src)
		return
	}
	map32(dst, src, exp64)
}

// Log64 sets dst[i] to the natural logarithm of src[i] (-Inf at ±0, NaN
// below 0). Measured error (TestAccuracy64): at most 1 ulp from math.Log.
func Log64(dst, src []float64) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			log64AVX512(dst, src)
			return
		}
		log64AVX2(dst, src)
		return
	}
	map64(dst, src, log64)
}

// Log32 sets dst[i] to the natural logarithm of src[i]. Measured error:
// at most 1 ulp from float32(math.Log(float64(x))).
func Log32(dst, src []float32) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			log32AVX512(dst, src)
			return
		}
		log32AVX2(dst, src)
		return
	}
	map32(dst, src, log64)
}

// Tanh64 sets dst[i] = tanh(src[i]). Measured error (TestAccuracy64): at
// most 2 ulp from math.Tanh.
func Tanh64(dst, src []float64) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			tanh64AVX512(dst, src)
			return
		}
		tanh64AVX2(dst, src)
		return
	}
	map64(dst, src, tanh64)
}

// Tanh32 sets dst[i] = tanh(src[i]). Measured error: at most 1 ulp from
// float32(math.Tanh(float64(x))).
func Tanh32(dst, src []float32) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			tanh32AVX512(dst, src)
			return
		}
		tanh32AVX2(dst, src)
		return
	}
	map32(dst, src, tanh64)
}

// Sigmoid64 sets dst[i] = 1/(1+e^-src[i]), without overflow for large
// |src[i]|. Measured error (TestAccuracy64): at most 2 ulp from the same
// formula in math
// (1/(1+math.Exp(-x)) for x ≥ 0, e/(1+e) with e = math.Exp(x) below).
func Sigmoid64(dst, src []float64) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			sigmoid64AVX512(dst, src)
			return
		}
		sigmoid64AVX2(dst, src)
		return
	}
	map64(dst, src, sigmoid64)
}

// Sigmoid32 sets dst[i] = 1/(1+e^-src[i]). Measured error: at most 1 ulp
// from the float64 formula rounded to float32.
func Sigmoid32(dst, src []float32) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			sigmoid32AVX512(dst, src)
			return
		}
		sigmoid32AVX2(dst, src)
		return
	}
	map32(dst, src, sigmoid64)
}

// Softplus64 sets dst[i] = log(1+e^src[i]) = max(x,0) + log1p(e^-|x|),
// without overflow. Measured error (TestAccuracy64): at most 2 ulp from
// that formula with math.Log1p and math.Exp.
func Softplus64(dst, src []float64) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			softplus64AVX512(dst, src)
			return
		}
		softplus64AVX2(dst, src)
		return
	}
	map64(dst, src, softplus64)
}

// Softplus32 sets dst[i] = log(1+e^src[i]). Measured error: at most 1 ulp
// from the float64 formula rounded to float32.
func Softplus32(dst, src []float32) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			softplus32AVX512(dst, src)
			return
		}
		softplus32AVX2(dst, src)
		return
	}
	map32(dst, src, softplus64)
}

// Erf64 sets dst[i] = erf(src[i]). Measured error (TestAccuracy64): at
// most 1 ulp from math.Erf.
func Erf64(dst, src []float64) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			erf64AVX512(dst, src)
			return
		}
		erf64AVX2(dst, src)
		return
	}
	map64(dst, src, erf64)
}

// Erf32 sets dst[i] = erf(src[i]), in float32 arithmetic in the assembly
// (in float64 in the pure Go). Measured error (TestAccuracy32,
// TestExhaustive32): at most 1 ulp from float32(math.Erf(float64(x))).
func Erf32(dst, src []float32) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			erf32AVX512(dst, src)
			return
		}
		erf32AVX2(dst, src)
		return
	}
	map32(dst, src, erf64)
}

// GELU64 sets dst[i] = x·Φ(x) = x/2·(1+erf(x/√2)) for x = src[i], PyTorch's
// exact GELU, with Erf64's erf. Measured error (TestGELU): within 2 ulp
// of the same formula with math.Erf, or, where 1+erf cancels (x < -1),
// within 2^-52·|x|/2 of it, the rounding of 1+erf that both share.
func GELU64(dst, src []float64) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			gelu64AVX512(dst, src)
			return
		}
		gelu64AVX2(dst, src)
		return
	}
	map64(dst, src, gelu64)
}

// GELU32 sets dst[i] = x/2·(1+erf(x/√2)), in float32 arithmetic in the
// assembly (in float64 in the pure Go). Measured error (TestGELU): from
// -1 up, within 2 ulp of float32 of GELU64's reference; below -1, where
// 1+erf(x/√2) is erfc(|x|/√2), taken from erf's tail without
// cancelling, within 2^-23·|x|/2 of x/2·erfc(|x|/√2) (PyTorch's float32
// formula, which rounds 1+erf, is within 2^-25·|x| there). Below about
// -5.66 it returns -0.
func GELU32(dst, src []float32) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			gelu32AVX512(dst, src)
			return
		}
		gelu32AVX2(dst, src)
		return
	}
	map32(dst, src, gelu64)
}

// GELUDeriv32 sets dst[i] = Φ(x) + x·φ(x) for x = src[i], the derivative
// of GELU32's function, Φ and φ the standard normal distribution and
// density; in float32 arithmetic in the assembly (in float64 in the pure
// Go). Φ's 1+erf does not cancel for x < 0 (as in GELU32), and φ's x² is
// carried in two parts. Measured error (TestGELUDeriv): within
// 6·2^-24·(Φ(x) + |x|·φ(x)) of the float64 value (at most 4.9; the sum
// crosses 0 near -0.75, so no ulp bound holds), and within 2^-26 below
// -5.5, where the assembly takes Φ as 0 from x/√2 < -4 on. ±Inf give NaN,
// as x·φ(x) does.
func GELUDeriv32(dst, src []float32) {
	src = src[:len(dst)]
	if useAsm {
		if useAVX512 {
			geluDeriv32AVX512(dst, src)
			return
		}
		geluDeriv32AVX2(dst, src)
		return
	}
	map32(dst, src, geluDeriv64)
}

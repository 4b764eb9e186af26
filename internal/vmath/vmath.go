package vmath

// The functions below set dst[i] = f(src[i]) for each i of dst. src must
// be at least as long as dst; dst may be src (but must not overlap it
// otherwise).

// Exp64 sets dst[i] = e^src[i]. Measured error: at most 1 ulp from
// math.Exp.
func Exp64(dst, src []float64) { active.exp64(dst, src[:len(dst)]) }

// Exp32 sets dst[i] = e^src[i]. Measured error: at most 1 ulp from
// float32(math.Exp(float64(x))).
func Exp32(dst, src []float32) { active.exp32(dst, src[:len(dst)]) }

// Log64 sets dst[i] to the natural logarithm of src[i] (-Inf at ±0, NaN
// below 0). Measured error: at most 1 ulp from math.Log.
func Log64(dst, src []float64) { active.log64(dst, src[:len(dst)]) }

// Log32 sets dst[i] to the natural logarithm of src[i]. Measured error:
// at most 1 ulp from float32(math.Log(float64(x))).
func Log32(dst, src []float32) { active.log32(dst, src[:len(dst)]) }

// Tanh64 sets dst[i] = tanh(src[i]). Measured error: at most 1 ulp from
// math.Tanh.
func Tanh64(dst, src []float64) { active.tanh64(dst, src[:len(dst)]) }

// Tanh32 sets dst[i] = tanh(src[i]). Measured error: at most 1 ulp from
// float32(math.Tanh(float64(x))).
func Tanh32(dst, src []float32) { active.tanh32(dst, src[:len(dst)]) }

// Sigmoid64 sets dst[i] = 1/(1+e^-src[i]), without overflow for large
// |src[i]|. Measured error: at most 1 ulp from the same formula in math
// (1/(1+math.Exp(-x)) for x ≥ 0, e/(1+e) with e = math.Exp(x) below).
func Sigmoid64(dst, src []float64) { active.sigmoid64(dst, src[:len(dst)]) }

// Sigmoid32 sets dst[i] = 1/(1+e^-src[i]). Measured error: at most 1 ulp
// from the float64 formula rounded to float32.
func Sigmoid32(dst, src []float32) { active.sigmoid32(dst, src[:len(dst)]) }

// Softplus64 sets dst[i] = log(1+e^src[i]) = max(x,0) + log1p(e^-|x|),
// without overflow. Measured error: at most 1 ulp from that formula with
// math.Log1p and math.Exp.
func Softplus64(dst, src []float64) { active.softplus64(dst, src[:len(dst)]) }

// Softplus32 sets dst[i] = log(1+e^src[i]). Measured error: at most 1 ulp
// from the float64 formula rounded to float32.
func Softplus32(dst, src []float32) { active.softplus32(dst, src[:len(dst)]) }

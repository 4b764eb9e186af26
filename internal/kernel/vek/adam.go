package vek

import "math"

// AdamScalars are the scalars of Adam's step (see Adam).
type AdamScalars[T Float] struct {
	Beta1, OneMinusBeta1, Beta2, OneMinusBeta2 T
	StepSize, Correction, Eps                  T
	// Decay is the weight decay's factor (see AdamDecay); Mode says how
	// it applies.
	Decay T
	Mode  AdamDecay
}

// AdamDecay is how Adam decays the weights.
type AdamDecay uint8

// The decays of Adam.
const (
	NoDecay        AdamDecay = iota // none: Decay is not read
	L2Decay                         // g + p·Decay (VV(Add, g, VS(Mul, p, Decay))) stands for g
	DecoupledDecay                  // p·Decay (VS(Mul, p, Decay)) stands for p in p1's difference (AdamW)
)

// A Mode past DecoupledDecay is NoDecay.

// adamBlock is the number of elements the Go loops compute a step over at
// a time.
const adamBlock = 256

// Adam sets, for each i of p1 (the other slices must be at least as long),
//
//	m1[i] = m[i]*Beta1 + g[i]*OneMinusBeta1
//	v1[i] = v[i]*Beta2 + (g[i]*g[i])*OneMinusBeta2
//	p1[i] = p[i] - StepSize*(m1[i] / (sqrt(v1[i])/Correction + Eps))
//
// with g and p decayed as k.Mode says,
// each operation rounded on its own, with the results, NaNs included, of
// the calls VS(Mul, ·, m, Beta1), VS(Mul, ·, g, OneMinusBeta1), VV(Add),
// VS(Mul, ·, v, Beta2), Unary(Square, ·, g), VS(Mul, ·, ·, OneMinusBeta2),
// VV(Add), Unary(Sqrt), VS(Div, ·, ·, Correction), VS(Add, ·, ·, Eps),
// VV(Div, ·, m1, ·), SV(Mul, ·, StepSize, ·) and VV(Sub, ·, p, ·) in that
// order. With AVX2 or AVX-512 it reads every input once and writes every
// output once, a vector at a time, instead of making a pass per operation,
// and with a Correction of 1 it leaves out that division (the quotient
// would be its dividend, bit for bit). With AVX-512 the division by the
// Correction is, where the square root and the Correction are in a range
// that keeps every step normal, Markstein's FMA correction of the product
// by RN(1/Correction), which gives the correctly rounded quotient (the
// division's bits) without the divider (see quotientRange). An output
// may be one of the inputs (p1 over p, m1 over m, v1 over v, or any
// other), but must not overlap them otherwise.
func Adam[T Float](p1, m1, v1, p, g, m, v []T, k *AdamScalars[T]) {
	n := len(p1)
	m1, v1, p, g, m, v = m1[:n], v1[:n], p[:n], g[:n], m[:n], v[:n]
	if useAsm && k.Mode <= DecoupledDecay {
		noCorr := k.Correction == 1 // x/1 is x: the kernel without the division
		recip, lo, hi := quotientRange(k.Correction)
		ks := [11]T{k.Beta1, k.OneMinusBeta1, k.Beta2, k.OneMinusBeta2, k.StepSize, k.Correction, k.Eps, k.Decay, recip, lo, hi}
		if is32[T]() {
			adam32(k.Mode, noCorr, as[float32](p1), as[float32](m1), as[float32](v1), as[float32](p), as[float32](g), as[float32](m), as[float32](v), as[float32](ks[:]))
		} else {
			adam64(k.Mode, noCorr, as[float64](p1), as[float64](m1), as[float64](v1), as[float64](p), as[float64](g), as[float64](m), as[float64](v), as[float64](ks[:]))
		}
		return
	}
	adamGo(p1, m1, v1, p, g, m, v, k)
}

// quotientRange returns, for the AVX-512 kernels, RN(1/c) and the range
// [lo, hi] of square roots x whose quotient x/c they compute with FMAs
// (see the generator, _asm/adam512.go): a c in [2^-100, 2^100] (float64)
// or [2^-20, 2^20] (float32) and an x in [2^-700, 2^700] or [2^-60,
// 2^60], so that x/c, 1/c and every product and remainder the steps
// compute are normal, none underflowing or overflowing; for another c an
// empty range (+Inf, 0), which makes every vector divide.
func quotientRange[T Float](c T) (recip, lo, hi T) {
	xExp, cExp := 700.0, 100.0
	if is32[T]() {
		xExp, cExp = 60, 20
	}
	if c >= T(math.Exp2(-cExp)) && c <= T(math.Exp2(cExp)) {
		return 1 / c, T(math.Exp2(-xExp)), T(math.Exp2(xExp))
	}
	return 0, T(math.Inf(1)), 0
}

// adamGo is Adam as the Go loops, a block at a time.
func adamGo[T Float](p1, m1, v1, p, g, m, v []T, k *AdamScalars[T]) {
	var a, b, c [adamBlock]T
	for lo := 0; lo < len(p1); lo += adamBlock {
		hi := min(lo+adamBlock, len(p1))
		x, y, gd := a[:hi-lo], b[:hi-lo], g[lo:hi]
		if k.Mode == L2Decay {
			gd = c[:hi-lo]
			vsGo(Mul, gd, p[lo:hi], k.Decay)
			vvGo(Add, gd, g[lo:hi], gd)
		}
		vsGo(Mul, x, m[lo:hi], k.Beta1)
		vsGo(Mul, y, gd, k.OneMinusBeta1)
		vvGo(Add, m1[lo:hi], x, y)
		vsGo(Mul, x, v[lo:hi], k.Beta2)
		unaryGo(Square, y, gd)
		vsGo(Mul, y, y, k.OneMinusBeta2)
		vvGo(Add, v1[lo:hi], x, y)
		unaryGo(Sqrt, x, v1[lo:hi])
		vsGo(Div, x, x, k.Correction)
		vsGo(Add, x, x, k.Eps)
		vvGo(Div, x, m1[lo:hi], x)
		svGo(Mul, x, k.StepSize, x)
		base := p[lo:hi]
		if k.Mode == DecoupledDecay {
			base = c[:hi-lo]
			vsGo(Mul, base, p[lo:hi], k.Decay)
		}
		vvGo(Sub, p1[lo:hi], base, x)
	}
}

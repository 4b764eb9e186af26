package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Native float32 erf and GELU: 8 lanes (AVX2) or 16 (AVX-512) of float32
// arithmetic, one instruction sequence for both, so the same bits. With
// a = |x|:
//
//	a < erf32Mid   erf = a + a·P(a²)        P of degree 5
//	a ≥ erf32Mid   erf = 1 - e^R(a)         R of degree 7, e^R ≈ erfc(a)
//
// P and R are minimax fits (Lawson's iteration on 4,000 and 6,000
// points; R weighted by max(erfc(a), 10^-3), since 1 - e^R carries
// R's error times erfc) with their coefficients rounded to float32: P's
// relative error is below 1.6e-8, R's weighted one below 2.1e-9, so
// that the float32 arithmetic's roundings dominate. a is clamped to
// erf32Clamp for R, and e^R is taken as 0 from there on, where erf
// rounds to 1 in float32 and erfc(a) is below 1.6e-8.
const (
	invSqrt2Pi = 0.39894228040143267794 // 1/√(2π)
	erf32Mid   = 0.921875
	erf32Clamp = 4.0
	sqrtHalf32 = float32(sqrtHalf)
)

// erf32P and erf32R are P's and R's coefficients from the highest degree.
var (
	erf32P = []float32{
		-0.0006013350212015212, 0.004997992422431707, -0.026770226657390594,
		0.11281926929950714, -0.3761250674724579, 0.12837915122509003,
	}
	erf32R = []float32{
		-1.7015063349390402e-05, 0.0003796844684984535, -0.0038677805569022894,
		0.02422182634472847, -0.10674494504928589, -0.6348665952682495,
		-1.1287070512771606, -3.6351391372591024e-06,
	}
)

// native32 emits fn32<isa>(dst, src []float32), body on 8 float32 lanes
// (16 with wide) at a time, masked loads and stores for the last ones.
func native32(fn string, body func(x VecVirtual) VecVirtual) {
	n := 2 * lanes()
	kernel(fn+"32"+isa(), "func(dst, src []float32)",
		fmt.Sprintf("sets dst[i] = %s(src[i]) for each i of dst, %d at a time, in float32.", fn, n),
		n, 4, tailMaskReg, ps.load, ps.store, body)
}

// The float32 helpers: each returns a new register; b may be memory.

func add32(a VecVirtual, b Op) VecVirtual { r := vec(); VADDPS(b, a, r); return r }
func sub32(a VecVirtual, b Op) VecVirtual { r := vec(); VSUBPS(b, a, r); return r }
func mul32(a VecVirtual, b Op) VecVirtual { r := vec(); VMULPS(b, a, r); return r }

// horner32 returns c[0]·z^(n-1) + … + c[n-1].
func horner32(z VecVirtual, c []float32) VecVirtual {
	acc := k32reg(c[0])
	for _, ci := range c[1:] {
		VFMADD213PS(k32(ci), z, acc) // acc = z·acc + ci
	}
	return acc
}

// erf32Parts returns, for a = |x| (NaN passing), erf(a) by the first
// form where a < erf32Mid, e^R(a) ≈ erfc(a) (0 from erf32Clamp on and for
// NaN), and the mask of the lanes of the second form.
func erf32Parts(a VecVirtual) (small, tail VecVirtual, far Register) {
	s := mul32(a, a)
	small = horner32(s, erf32P)
	VFMADD213PS(a, a, small) // small = a·P + a

	ac := k32reg(erf32Clamp)
	VMINPS(a, ac, ac) // a second: NaN passes
	r := horner32(ac, erf32R)
	tail = pick32(cmp32(cmpLT, a, k32(erf32Clamp)), exp32Normal(r)) // R in [-18, 0]
	return small, tail, cmp32(cmpGE, a, k32(erf32Mid))
}

// erf32Vec is erf on float32 lanes.
func erf32Vec(x VecVirtual) VecVirtual {
	a := abs32(x)
	small, tail, far := erf32Parts(a)
	r := blend32(far, sub32(k32reg(1), tail), small)
	return or32(r, sign32(x))
}

// gelu32Vec is x/2·(1+erf(x/√2)) on float32 lanes.
func gelu32Vec(x VecVirtual) VecVirtual {
	return mul32(mul32(x, k32(0.5)), onePlusErf32(x))
}

// onePlusErf32 is 1+erf(x/√2), which is 2Φ(x): where x < 0 it is
// 1 - erf(|x|/√2), which in erf's second form is e^R itself, so it does
// not cancel.
func onePlusErf32(x VecVirtual) VecVirtual {
	u := mul32(x, k32(sqrtHalf32))
	a := abs32(u)
	small, tail, far := erf32Parts(a)
	two := k32reg(2)
	one := k32reg(1)
	pos := blend32(far, sub32(two, tail), add32(one, small))
	neg := blend32(far, tail, sub32(one, small))
	return blend32(cmp32(cmpLT, x, k32(0)), neg, pos)
}

// geluDeriv32Vec is GELU's derivative Φ(x) + x·φ(x) on float32 lanes, φ
// the normal density e^(-x²/2)/√(2π). -x²/2 is taken as h + l, h its
// float32 rounding and l the rest (by FMA), and e^(h+l) as e^h·(1+l), so
// that φ carries no error from rounding x². |x| is clamped to 16 for φ,
// where e^(-128) rounds to 0, so that h stays finite.
func geluDeriv32Vec(x VecVirtual) VecVirtual {
	cdf := mul32(onePlusErf32(x), k32(0.5))
	ac := k32reg(16)
	VMINPS(abs32(x), ac, ac)  // NaN passes
	t := mul32(ac, k32(-0.5)) // exact
	h := mul32(t, ac)
	l := vec()
	VMOVUPS(t, l)
	VFMSUB213PS(h, ac, l) // l = t·ac - h, exact
	e := exp32Vec(h)
	VFMADD231PS(l, e, e) // e = e·l + e
	m := mul32(x, k32(float32(invSqrt2Pi)))
	VFMADD213PS(cdf, e, m) // m = e·m + cdf
	return m
}

// abs32 is |x|, sign32 x's sign bit (and32: the integer form with wide).
func abs32(x VecVirtual) VecVirtual { return and32(x, broadcast(0x7fffffff, 4)) }

func sign32(x VecVirtual) VecVirtual { return and32(x, broadcast(0x80000000, 4)) }

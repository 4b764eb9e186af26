package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// erf's constants and coefficients, as in the pure-Go kernel (erf.go):
// for each coefficient, its value in the four ranges of |x|.
const (
	erfX       = 8.45062911510467529297e-01
	erfSmall   = 0.84375
	erfMid     = 1.25
	erfTail    = 1 / 0.35
	erfClamp   = 6.0
	erfTailOff = 0.5625
	sqrtHalf   = 0.70710678118654752440
)

var erfP = [4][8]float64{
	{1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
		-5.77027029648944159157e-03, -2.37630166566501626084e-05},
	{-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
		3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
		-2.16637559486879084300e-03},
	{-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
		-6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
		-8.12874355063065934246e+01, -9.81432934416914548592e+00},
	{-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
		-1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
		-4.83519191608651397019e+02},
}

var erfQ = [4][8]float64{
	{3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
		1.32494738004321644526e-04, -3.96022827877536812320e-06},
	{1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
		1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02},
	{1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
		6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
		6.57024977031928170135e+00, -6.04244152148580987438e-02},
	{3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
		3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
		-2.24409524465858183362e+01},
}

var erfTables = map[string]Mem{}

// erfCoef returns the vector constant holding coefficient j of table
// (erfP or erfQ) for the ranges 0 to 3 in its first lanes (the others
// zero), which VPERMD (VPERMPD with wide) picks from by each lane's range.
func erfCoef(name string, table *[4][8]float64, j int) Mem {
	key := fmt.Sprintf("erf%s%d", name, j)
	if wide {
		key = "z" + key
	}
	if m, ok := erfTables[key]; ok {
		return m
	}
	m := GLOBL(key, RODATA|NOPTR)
	for r := range 4 {
		DATA(8*r, U64(math.Float64bits(table[r][j])))
	}
	if wide {
		for r := 4; r < 8; r++ {
			DATA(8*r, U64(0))
		}
	}
	erfTables[key] = m
	return m
}

// erfRational returns P(t) or Q(t)-1's Horner sum with each lane's
// coefficients, picked from the tables by idx (VPERMD's dword indices,
// or with wide VPERMPD's qword ones).
func erfRational(name string, table *[4][8]float64, t, idx VecVirtual) VecVirtual {
	perm := func(j int) VecVirtual {
		c := vec()
		if wide {
			VPERMPD(erfCoef(name, table, j), idx, c)
		} else {
			VPERMD(erfCoef(name, table, j), idx, c)
		}
		return c
	}
	acc := perm(7)
	for j := 6; j >= 0; j-- {
		c := perm(j)
		VFMADD213PD(c, t, acc) // acc = t·acc + c
	}
	return acc
}

// erfVec is erf64 on the lanes, computing both of its forms and blending
// them: each lane's range k (0 to 3) picks its coefficients by VPERMD
// from a register holding the four ranges' values.
func erfVec(x VecVirtual, deg int) VecVirtual {
	a := clampHigh(and(x, kbits(signMask-1)), erfClamp) // NaN passes
	m1 := cmp(cmpGE, a, k(erfSmall))
	m2 := cmp(cmpGE, a, k(erfMid))
	m3 := cmp(cmpGE, a, k(erfTail))
	idx := erfIndex(m1, m2, m3)

	a2 := mul(a, a)
	inv := div(kreg(1), a2)
	t := blend(m1, sub(a, k(1)), a2)
	t = blend(m2, inv, t)
	num := erfRational("P", &erfP, t, idx)
	den := erfRational("Q", &erfQ, t, idx)
	VFMADD213PD(k(1), t, den) // den = t·den + 1
	y := div(num, den)

	// Near 0: c + m·y with c, m = a, a or erx, 1.
	near := blend(m1, k(erfX), a)
	VFMADD231PD(blend(m1, k(1), a), y, near)

	// The tail: 1 - e^(hi+lo)·a·inv, hi = -z²-0.5625, lo = (z-a)(z+a)+y.
	z := and(a, kbits(0xffffffff00000000))
	hi := kreg(-erfTailOff)
	VFNMADD231PD(z, z, hi) // exact
	lo := sub(z, a)
	VFMADD213PD(y, add(z, a), lo)
	tt := kreg(roundMagic)
	VFMADD231PD(k(log2e), add(hi, lo), tt)
	n := sub(tt, k(roundMagic))
	r := vec()
	VMOVUPD(hi, r)
	VFNMADD231PD(k(ln2Hi), n, r) // exact
	VADDPD(lo, r, r)
	VFNMADD231PD(k(ln2Lo), n, r)
	e := expPoly(tt, n, r, deg, false)
	far := kreg(1)
	VFNMADD231PD(mul(a, inv), e, far)

	res := blend(m2, far, near)
	return or(res, and(x, kbits(signMask)))
}

// erfIndex returns the lanes' table indices for erfRational from the
// masks of |x| ≥ each range's start: the range k = m1+m2+m3 as the dwords
// 2k and 2k+1, or with wide as a qword.
func erfIndex(m1, m2, m3 Register) VecVirtual {
	if wide {
		idx := blend(m1, kbits(1), kreg(0))
		idx = blend(m2, kbits(2), idx)
		return blend(m3, kbits(3), idx)
	}
	// k = -(m1+m2+m3) as integers (all-ones lanes are -1).
	neg := YMM()
	VPADDQ(m1, m2, neg)
	VPADDQ(m3, neg, neg)
	k2 := YMM()
	VPXOR(k2, k2, k2)
	VPSUBQ(neg, k2, k2)
	VPADDQ(k2, k2, k2)
	idx := YMM()
	VPSLLQ(Imm(32), k2, idx)
	VPOR(k2, idx, idx)
	VPADDQ(kbits(1<<32), idx, idx)
	return idx
}

// geluVec is gelu64: x/2·(1+erf(x/√2)).
func geluVec(x VecVirtual, deg int) VecVirtual {
	e := erfVec(mul(x, k(sqrtHalf)), deg)
	return mul(mul(x, k(0.5)), add(e, k(1)))
}

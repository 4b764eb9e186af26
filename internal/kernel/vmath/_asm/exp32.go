package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Native float32 exp: 8 lanes, in float32 arithmetic. With |r| ≤ ln2/2
// and FMA, its error before the final rounding is below 0.5 ulp (the
// Taylor terms after r^7 are below 2^-27 of the result; r's error, from
// ln2 in two float32 parts, below 2^-28), so rounded it is within 1 ulp
// of the correctly rounded e^x.
const (
	exp32Min   = -104.0 // e^-104 rounds to 0 in float32
	exp32Max   = 89.0   // e^89 overflows
	log2e32    = 1.44269504088896341
	ln2Hi32    = 0.693359375 // 9 bits: n·ln2Hi32 is exact
	ln2Lo32    = -2.12194440e-4
	roundMag32 = 0x1.8p23
)

// k32 returns a vector constant holding v in each float32 lane.
func k32(v float32) Mem { return broadcast(uint64(math.Float32bits(v)), 4) }

func k32reg(v float32) VecVirtual {
	r := vec()
	VMOVUPS(k32(v), r)
	return r
}

// exp32Vec is e^x on float32 lanes: the algorithm of expVec with
// float32 constants, degree 7, and the scale 2^n always in two factors.
func exp32Vec(x VecVirtual) VecVirtual {
	lo := k32reg(exp32Min)
	VMAXPS(x, lo, lo) // x second: NaN passes
	xc := k32reg(exp32Max)
	VMINPS(lo, xc, xc)
	return exp32Reduced(xc, true)
}

// exp32Normal is exp32Vec for x in [-87, 88] (or NaN, whose lanes give
// garbage), where e^x and 2^n are normal floats: no clamping, and 2^n in
// one factor, which gives the same bits as the two (each product by a
// power of two is exact).
func exp32Normal(x VecVirtual) VecVirtual {
	xc := vec()
	VMOVUPS(x, xc)
	return exp32Reduced(xc, false)
}

// exp32Reduced is exp32Vec's algorithm on xc, which it overwrites; split
// scales by 2^n in two factors, so that subnormal results and 2^n
// outside the normal range come out right.
func exp32Reduced(xc VecVirtual, split bool) VecVirtual {
	t := k32reg(roundMag32)
	VFMADD231PS(k32(log2e32), xc, t) // t = x·log2e + magic: n in its low bits
	n := vec()
	VSUBPS(k32(roundMag32), t, n)
	r := xc
	VFNMADD231PS(k32(ln2Hi32), n, r) // r = x - n·ln2Hi32, exact
	VFNMADD231PS(k32(ln2Lo32), n, r)
	z := vec()
	VMULPS(r, r, z)
	// 1 + (r + z·(A(z) + r·B(z))): A = 1/2! + z/4! + z²/6!, B = 1/3! + z/5! + z²/7!.
	a := k32reg(float32(1.0 / 720))
	VFMADD213PS(k32(float32(1.0/24)), z, a)
	VFMADD213PS(k32(0.5), z, a)
	q := k32reg(float32(1.0 / 5040))
	VFMADD213PS(k32(float32(1.0/120)), z, q)
	VFMADD213PS(k32(float32(1.0/6)), z, q)
	VFMADD213PS(a, r, q) // q = r·B + A
	VFMADD213PS(r, z, q) // q = z·q + r
	p := vec()
	VADDPS(k32(1), q, p)
	if !split {
		VMULPS(pow2f32(t), p, p)
		return p
	}
	// 2^n1·2^n2, n1 = round(n/2), n2 = n - n1, each a normal float32.
	h := k32reg(roundMag32)
	VFMADD231PS(k32(0.5), n, h)
	n1 := vec()
	VSUBPS(k32(roundMag32), h, n1)
	n2 := vec()
	VSUBPS(n1, n, n2)
	VADDPS(k32(roundMag32), n2, n2)
	VMULPS(pow2f32(h), p, p)
	VMULPS(pow2f32(n2), p, p)
	return p
}

// pow2f32 returns 2^n from t = n + roundMag32, whose low bits hold n.
func pow2f32(t VecVirtual) VecVirtual {
	r := vec()
	VPSLLD(Imm(23), t, r)
	VPADDD(broadcast(127<<23, 4), r, r)
	return r
}

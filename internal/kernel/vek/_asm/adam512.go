package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// avx512 holds one element type's AVX-512 instructions, beside t's.
type avx512 struct {
	t              dtype
	lanes          int // elements in a ZMM register
	full           uint64
	cmp, fma, fnma func(...Op)
	maskLoad       func(m, k, z Op)
	maskStore      func(...Op)
}

var (
	f32x16 = avx512{t: f32, lanes: 16, full: 0xFFFF, cmp: VCMPPS, fma: VFMADD231PS, fnma: VFNMADD231PS,
		maskLoad: VMOVUPS_Z, maskStore: VMOVUPS}
	f64x8 = avx512{t: f64, lanes: 8, full: 0xFF, cmp: VCMPPD, fma: VFMADD231PD, fnma: VFNMADD231PD,
		maskLoad: VMOVUPD_Z, maskStore: VMOVUPD}
)

// VCMPPS's and VCMPPD's ordered predicates "greater or equal" and "less or
// equal" (false when either operand is NaN).
const (
	cmpGEOQ = 0x1D
	cmpLEOQ = 0x12
)

// adam512 emits func adam<mode>[NoCorr]<t.name>AVX512, adam's kernel with
// AVX-512, a ZMM register (a.lanes elements) at a time: the same
// instructions, with the same operand order, in wider registers, so the
// same bits; the square root, done by the same divider in half the time
// per element as in YMM registers on processors that split ZMM work in
// two halves (AMD's Zen 4), is the step's slowest instruction.
//
// With corrected, the division by the bias correction c is not a VDIVP:
// where every lane's square root x is in [k[9], k[10]] (the caller's
// range, in which nothing below underflows or overflows), the quotient is
// Markstein's: with y = k[8] = RN(1/c), q0 = RN(x·y), r = x - c·q (an FMA,
// exact), q = RN(q + r·y) twice. y has a relative error below 2^-p, the
// first correction makes q faithful and the second, by Markstein's
// theorem, RN(x/c), VDIVP's result bit for bit, with FMAs instead of the
// divider. A vector with a lane outside the range (a zero, a subnormal,
// an infinity, a NaN) and the last elements, fewer than a.lanes, divide.
func adam512(a avx512, mode adamMode, corrected bool) {
	t := a.t
	fn, n, ptr, kb := adamHeader(t, mode, corrected, "AVX512",
		"(beta1, 1-beta1, beta2, 1-beta2, step size, bias correction, eps, decay,",
		"RN(1/correction), and the range of square roots whose quotient by the",
		fmt.Sprintf("correction needs no division), %d elements at a time; see Adam.", a.lanes))
	var k [11]VecVirtual
	for i := range k {
		if i == 7 && mode == adamPlain || i > 7 && !corrected {
			continue // not read
		}
		k[i] = ZMM()
		t.bcast(Mem{Base: kb, Disp: i * t.size}, k[i])
	}
	beta1, c1, beta2, c2, stepSize, correction, eps := k[0], k[1], k[2], k[3], k[4], k[5], k[6]
	decay, recip, lo, hi := k[7], k[8], k[9], k[10]
	bin := func(op func(...Op), a, b Op) VecVirtual { r := ZMM(); op(b, a, r); return r }
	label := 0
	step := func(mask Op) {
		in := map[string]VecVirtual{}
		for _, name := range adamSlices[3:] {
			r := ZMM()
			if mask == nil {
				t.load(Mem{Base: ptr[name]}, r)
			} else {
				a.maskLoad(Mem{Base: ptr[name]}, mask, r)
			}
			in[name] = r
		}
		store := func(name string, r VecVirtual) {
			if mask == nil {
				t.store(r, Mem{Base: ptr[name]})
			} else {
				a.maskStore(r, mask, Mem{Base: ptr[name]})
			}
		}
		g, base := in["g"], in["p"]
		switch mode {
		case adamL2:
			g = bin(t.add, g, bin(t.mul, in["p"], decay))
		case adamDecoupled:
			base = bin(t.mul, in["p"], decay)
		}
		m1 := bin(t.add, bin(t.mul, in["m"], beta1), bin(t.mul, g, c1))
		store("m1", m1)
		v1 := bin(t.add, bin(t.mul, in["v"], beta2), bin(t.mul, bin(t.mul, g, g), c2))
		store("v1", v1)
		root := ZMM()
		t.sqrt(v1, root)
		if corrected {
			q := ZMM()
			if mask == nil {
				label++
				divide, join := fmt.Sprintf("%s_divide%d", fn, label), fmt.Sprintf("%s_join%d", fn, label)
				inRange, bits := K(), GP32()
				a.cmp(Imm(cmpGEOQ), lo, root, inRange)
				a.cmp(Imm(cmpLEOQ), hi, root, inRange, inRange)
				KMOVW(inRange, bits)
				CMPL(bits, U32(a.full))
				JNE(LabelRef(divide))
				t.mul(recip, root, q)
				for range 2 {
					r := ZMM()
					t.load(root, r)
					a.fnma(correction, q, r) // r = x - q·c
					a.fma(recip, r, q)       // q = q + r·y
				}
				JMP(LabelRef(join))
				Label(divide)
				t.div(correction, root, q)
				Label(join)
			} else {
				t.div(correction, root, q)
			}
			root = q
		}
		denom := bin(t.add, root, eps)
		delta := bin(t.mul, bin(t.div, m1, denom), stepSize)
		store("p1", bin(t.sub, base, delta))
	}
	Label(fn + "_loop")
	CMPQ(n, Imm(uint64(a.lanes)))
	JB(LabelRef(fn + "_tail"))
	step(nil)
	for _, name := range adamSlices {
		ADDQ(Imm(uint64(a.lanes*t.size)), ptr[name])
	}
	SUBQ(Imm(uint64(a.lanes)), n)
	JMP(LabelRef(fn + "_loop"))

	// The last n elements, fewer than a.lanes: the mask of the first n
	// lanes, 1<<n - 1.
	Label(fn + "_tail")
	TESTQ(n, n)
	JZ(LabelRef(fn + "_done"))
	one, bits := GP64(), GP64()
	MOVQ(U64(1), one)
	SHLXQ(n, one, bits)
	DECQ(bits)
	mask := K()
	KMOVW(bits.As32(), mask)
	step(mask)
	Label(fn + "_done")
	VZEROUPPER()
	RET()
}

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
	k := adam512Scalars(a, mode, corrected, kb)
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
			g = a.bin(t.add, g, a.bin(t.mul, in["p"], k[7]))
		case adamDecoupled:
			base = a.bin(t.mul, in["p"], k[7])
		}
		delta := adam512Delta(a, corrected, mask != nil, fn, &label, k, g, in["m"], in["v"], store)
		store("p1", a.bin(t.sub, base, delta))
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

// bin emits op on a and b into a fresh ZMM register.
func (a avx512) bin(op func(...Op), x, y Op) VecVirtual { r := ZMM(); op(y, x, r); return r }

// adam512Scalars broadcasts the scalars an Adam kernel of mode reads from
// kb into ZMM registers: beta1, 1-beta1, beta2, 1-beta2, the step size,
// the bias correction, eps, the decay, RN(1/correction) and the range of
// square roots (see adam512); those it does not read stay nil.
func adam512Scalars(a avx512, mode adamMode, corrected bool, kb GPVirtual) [11]VecVirtual {
	var k [11]VecVirtual
	for i := range k {
		if i == 7 && mode == adamPlain || i > 7 && !corrected {
			continue // not read
		}
		k[i] = ZMM()
		a.t.bcast(Mem{Base: kb, Disp: i * a.t.size}, k[i])
	}
	return k
}

// adam512Delta emits Adam's moments m1 and v1 from m, v and the gradient
// g, stores them with store, and returns the step stepSize·(m1/(√v1/c +
// eps)) that the parameter loses (see adam512 for the division by c;
// masked, for the last elements, it divides).
func adam512Delta(a avx512, corrected, masked bool, fn string, label *int, k [11]VecVirtual, g, m, v VecVirtual, store func(string, VecVirtual)) VecVirtual {
	t, bin := a.t, a.bin
	beta1, c1, beta2, c2, stepSize, correction, eps := k[0], k[1], k[2], k[3], k[4], k[5], k[6]
	recip, lo, hi := k[8], k[9], k[10]
	m1 := bin(t.add, bin(t.mul, m, beta1), bin(t.mul, g, c1))
	store("m1", m1)
	v1 := bin(t.add, bin(t.mul, v, beta2), bin(t.mul, bin(t.mul, g, g), c2))
	store("v1", v1)
	root := ZMM()
	t.sqrt(v1, root)
	if corrected {
		q := ZMM()
		if !masked {
			*label++
			divide, join := fmt.Sprintf("%s_divide%d", fn, *label), fmt.Sprintf("%s_join%d", fn, *label)
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
	return bin(t.mul, bin(t.div, m1, denom), stepSize)
}

// adamM32Slices are the slices of an Adam kernel of float64 parameters
// with float32 moments, and their elements' sizes.
var adamM32Slices = map[string]int{"p1": 8, "m1": 4, "v1": 4, "p": 8, "g": 8, "m": 4, "v": 4}

// adamM32 emits func adam<mode>[NoCorr]64M32AVX512, Adam's step of
// float64 parameters with float32 moments (see vek.AdamM32), 16 elements
// at a time: the gradient (with p·decay added in float64, for L2 decay)
// rounded to float32, the moments and the step delta as adam512 computes
// them for float32, and the parameter's difference with float64(delta)
// in float64, from p (or p·decay, for decoupled decay). The last
// elements, fewer than 16, are the caller's.
func adamM32(mode adamMode, corrected bool) {
	a, d := f32x16, f64x8
	fn := "adam" + mode.name + "64M32AVX512"
	what := mode.doc
	if !corrected {
		fn = "adam" + mode.name + "NoCorr64M32AVX512"
		what += " and a bias correction of 1 (not divided by)"
	}
	TEXT(fn, NOSPLIT, "func(p1 []float64, m1, v1 []float32, p, g []float64, m, v []float32, k []float32, decay []float64)")
	Pragma("noescape")
	Doc(fn+" sets p1, m1 and v1 to Adam's step"+what+" of float64 parameters p",
		"with float32 moments m and v, from the gradient g, the float32 scalars k (as",
		"adam512's) and the float64 decay[0], 16 elements at a time (len(p1) a",
		"multiple of 16); see AdamM32.")
	n := GP64()
	Load(Param("p1").Len(), n)
	ptr := map[string]GPVirtual{}
	for _, name := range adamSlices {
		r := GP64()
		Load(Param(name).Base(), r)
		ptr[name] = r
	}
	kb := GP64()
	Load(Param("k").Base(), kb)
	k := adam512Scalars(a, adamPlain, corrected, kb) // the decay is float64's
	var decay VecVirtual
	if mode != adamPlain {
		db := GP64()
		Load(Param("decay").Base(), db)
		decay = ZMM()
		d.t.bcast(Mem{Base: db}, decay)
	}
	label := 0
	Label(fn + "_loop")
	CMPQ(n, Imm(16))
	JB(LabelRef(fn + "_done"))
	var halves, bases [2]VecVirtual
	for h := range 2 {
		p, g := ZMM(), ZMM()
		d.t.load(Mem{Base: ptr["p"], Disp: 64 * h}, p)
		d.t.load(Mem{Base: ptr["g"], Disp: 64 * h}, g)
		switch mode {
		case adamL2:
			g = d.bin(d.t.add, g, d.bin(d.t.mul, p, decay))
		case adamDecoupled:
			p = d.bin(d.t.mul, p, decay)
		}
		halves[h], bases[h] = ZMM(), p
		VCVTPD2PS(g, halves[h].AsY())
	}
	g := ZMM()
	VINSERTF64X4(Imm(1), halves[1].AsY(), halves[0], g)
	m, v := ZMM(), ZMM()
	a.t.load(Mem{Base: ptr["m"]}, m)
	a.t.load(Mem{Base: ptr["v"]}, v)
	store := func(name string, r VecVirtual) { a.t.store(r, Mem{Base: ptr[name]}) }
	delta := adam512Delta(a, corrected, false, fn, &label, k, g, m, v, store)
	hi := YMM()
	VEXTRACTF64X4(Imm(1), delta, hi)
	for h, part := range []Op{delta.AsY(), hi} {
		wide := ZMM()
		VCVTPS2PD(part, wide)
		d.t.store(d.bin(d.t.sub, bases[h], wide), Mem{Base: ptr["p1"], Disp: 64 * h})
	}
	for _, name := range adamSlices {
		ADDQ(Imm(uint64(16*adamM32Slices[name])), ptr[name])
	}
	SUBQ(Imm(16), n)
	JMP(LabelRef(fn + "_loop"))
	Label(fn + "_done")
	VZEROUPPER()
	RET()
}

// Command _asm generates vmath's AVX2+FMA and AVX-512 kernels
// (vmath_amd64.s and stubs_amd64.go); run it with go generate in
// internal/kernel/vmath.
//
// Each kernel runs the float64 algorithm of the pure-Go scalar kernels
// (exp.go, log.go, tanh.go, logistic.go, erf.go) on 4 lanes at a time
// (8 for the AVX-512 kernels, whose instructions are the AVX2 ones on
// ZMM registers with opmask registers for the masks, so their results
// are the same bits), with the same constants (erf computes both of its
// forms in every lane where the pure Go branches); float32 kernels
// convert the lanes' elements to float64, compute, and round each result
// once, except exp32, erf32 and gelu32, which run in float32 on 8
// lanes (16 with AVX-512; exp32.go, erf32.go). The last elements, fewer
// than the lanes, go through
// the same code with masked loads and stores, so that every element's
// result depends only on its input.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Constants as in the pure-Go kernels.
const (
	ln2Hi      = 6.93147180369123816490e-01
	ln2Lo      = 1.90821492927058770002e-10
	log2e      = 1.4426950408889634
	roundMagic = 0x1.8p52
	expMin     = -746.0
	expMax     = 710.0

	logMantBase = 0x3fe6a09e00000000
	logOffset   = 0x3ff0000000000000 - logMantBase
	fracMask    = 1<<52 - 1
	signMask    = 1 << 63
	sqrt2m1     = 0.41421356237309504880

	tanhSmall = 0.625
	tanhClamp = 44.0
)

var (
	lg = []float64{ // Lg1 … Lg7
		6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
		2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
		1.479819860511658591e-01,
	}
	tanhP = []float64{-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3}
	tanhQ = []float64{1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3}
)

// Comparison predicates of VCMPPD.
const (
	cmpEQ = 0x00 // EQ_OQ
	cmpLT = 0x11 // LT_OQ
	cmpGE = 0x1d // GE_OQ
	cmpGT = 0x1e // GT_OQ
)

// expDegree64 and expDegree32 are the degrees of e^r's Taylor polynomial
// (|r| ≤ ln2/2) for float64 and float32 results: the first term left out
// is below 2^-60 and 2^-27 of the result.
const (
	expDegree64 = 13
	expDegree32 = 7
)

func main() {
	ConstraintExpr("amd64,!purego")
	for _, w := range []bool{false, true} {
		wide = w
		for _, k := range []struct {
			name string
			body func(x VecVirtual, expDeg int) VecVirtual
		}{
			{"exp", expKernel},
			{"log", func(x VecVirtual, _ int) VecVirtual { return logVec(x) }},
			{"tanh", tanhVec},
			{"sigmoid", sigmoidVec},
			{"softplus", softplusVec},
			{"erf", erfVec},
			{"gelu", geluVec},
		} {
			kernel64(k.name, func(x VecVirtual) VecVirtual { return k.body(x, expDegree64) })
			if f := native[k.name]; f != nil {
				native32(k.name, f)
				continue
			}
			kernel32(k.name, func(x VecVirtual) VecVirtual { return k.body(x, expDegree32) })
		}
		native32("geluDeriv", geluDeriv32Vec)
	}
	Generate()
}

// native are the float32 kernels that compute in float32 lanes
// (exp32.go, erf32.go) rather than in float64.
var native = map[string]func(x VecVirtual) VecVirtual{
	"exp":  exp32Vec,
	"erf":  erf32Vec,
	"gelu": gelu32Vec,
}

// wide selects the AVX-512 kernels: 8 float64 lanes in ZMM registers,
// masks in opmask registers. Their arithmetic is the AVX2 kernels',
// instruction for instruction, so their results are the same bits.
var wide bool

// isa returns the kernels' name suffix, and lanes their float64 lanes.
func isa() string {
	if wide {
		return "AVX512"
	}
	return "AVX2"
}

func lanes() int {
	if wide {
		return 8
	}
	return 4
}

// vec returns a new vector register of the kernels' width.
func vec() VecVirtual {
	if wide {
		return ZMM()
	}
	return YMM()
}

// kernel64 emits func fn64<isa>(dst, src []float64), setting dst[i] =
// body(src[i]) for each i of dst, lanes() at a time.
func kernel64(fn string, body func(x VecVirtual) VecVirtual) {
	kernel(fn+"64"+isa(), "func(dst, src []float64)",
		fmt.Sprintf("sets dst[i] = %s(src[i]) for each i of dst, %d at a time.", fn, lanes()),
		lanes(), 8, tailMaskReg, pd.load, pd.store, body)
}

// kernel32 emits func fn32<isa>(dst, src []float32): lanes() elements at
// a time are widened to float64, given to body and rounded back.
func kernel32(fn string, body func(x VecVirtual) VecVirtual) {
	kernel(fn+"32"+isa(), "func(dst, src []float32)",
		fmt.Sprintf("sets dst[i] = %s(src[i]) for each i of dst, %d at a time, in float64.", fn, lanes()),
		lanes(), 4, tailMaskReg,
		func(src Mem, mask Register) VecVirtual {
			x := vec()
			switch {
			case mask == nil:
				VCVTPS2PD(src, x)
			case wide:
				VCVTPS2PD_Z(src, mask, x)
			default:
				xs := XMM()
				VMASKMOVPS(src, mask, xs)
				VCVTPS2PD(xs, x)
			}
			return x
		},
		func(y VecVirtual, dst Mem, mask Register) {
			if wide {
				ys := YMM()
				VCVTPD2PS(y, ys)
				if mask == nil {
					VMOVUPS(ys, dst)
				} else {
					// The opmask has at most the low 8 bits set: the
					// ZMM store writes ys's elements only.
					VMOVUPS(ys.AsZ(), mask, dst)
				}
				return
			}
			ys := XMM()
			VCVTPD2PSY(y, ys)
			if mask == nil {
				VMOVUPS(ys, dst)
			} else {
				VMASKMOVPS(ys, mask, dst)
			}
		}, body)
}

// tailMaskReg returns the mask of the first n (< lanes) lanes of size
// bytes: a vector of lanes all-ones elements then lanes zero ones, read
// from element lanes-n, or with wide an opmask, (1<<n)-1, read from a
// table of 16-bit words.
func tailMaskReg(n GPVirtual, lanes, size int) Register {
	if wide {
		base := GP64()
		LEAQ(opmaskTable(lanes), base)
		mask := K()
		KMOVW(Mem{Base: base, Index: n, Scale: 2}, mask)
		return mask
	}
	idx := GP64()
	MOVQ(U64(uint64(lanes)), idx)
	SUBQ(n, idx)
	base := GP64()
	LEAQ(tailMask(lanes, size), base)
	var mask VecVirtual = YMM()
	if size == 4 && lanes == 4 {
		mask = XMM()
	}
	VMOVDQU(Mem{Base: base, Index: idx, Scale: uint8(size)}, mask)
	return mask
}

var opmaskTables = map[int]Mem{}

// opmaskTable returns the table of (1<<n)-1 for n < lanes, 16 bits each.
func opmaskTable(lanes int) Mem {
	if m, ok := opmaskTables[lanes]; ok {
		return m
	}
	m := GLOBL(fmt.Sprintf("opmask%d", lanes), RODATA|NOPTR)
	for n := range lanes {
		DATA(2*n, U16(uint16(1<<n-1)))
	}
	opmaskTables[lanes] = m
	return m
}

// kernel emits func name with signature sig: while at least lanes
// elements (of size bytes) remain, dst's next ones are store(body(load(
// src's next ones))); the last len%lanes go through the same code with
// the mask of their lanes from newMask for load and store, which is nil
// for full vectors.
func kernel(name, sig, doc string, lanes, size int,
	newMask func(n GPVirtual, lanes, size int) Register,
	load func(src Mem, mask Register) VecVirtual,
	store func(y VecVirtual, dst Mem, mask Register),
	body func(x VecVirtual) VecVirtual) {
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(name + " " + doc)
	dst, src, n := GP64(), GP64(), GP64()
	Load(Param("dst").Base(), dst)
	Load(Param("src").Base(), src)
	Load(Param("dst").Len(), n)
	Label("loop")
	CMPQ(n, Imm(uint64(lanes)))
	JB(LabelRef("tail"))
	store(body(load(Mem{Base: src}, nil)), Mem{Base: dst}, nil)
	ADDQ(Imm(uint64(lanes*size)), src)
	ADDQ(Imm(uint64(lanes*size)), dst)
	SUBQ(Imm(uint64(lanes)), n)
	JMP(LabelRef("loop"))

	Label("tail")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	mask := newMask(n, lanes, size)
	store(body(load(Mem{Base: src}, mask)), Mem{Base: dst}, mask)
	Label("done")
	VZEROUPPER()
	RET()
}

var tailMasks = map[[2]int]Mem{}

// tailMask returns the table kernel reads its tail masks from: lanes
// all-ones elements of size bytes, then lanes zero ones.
func tailMask(lanes, size int) Mem {
	if m, ok := tailMasks[[2]int{lanes, size}]; ok {
		return m
	}
	m := GLOBL(fmt.Sprintf("tailmask%dx%d", lanes, size), RODATA|NOPTR)
	for i := range 2 * lanes {
		if i < lanes {
			data(i*size, size, math.MaxUint64)
		} else {
			data(i*size, size, 0)
		}
	}
	tailMasks[[2]int{lanes, size}] = m
	return m
}

// data adds a datum of size bytes (4 or 8), bits' low ones, at offset.
func data(offset, size int, bits uint64) {
	if size == 4 {
		DATA(offset, U32(uint32(bits)))
	} else {
		DATA(offset, U64(bits))
	}
}

var consts = map[[3]uint64]Mem{}

// k returns a vector constant (32 bytes, 64 with wide) holding v in each
// float64 lane.
func k(v float64) Mem { return kbits(math.Float64bits(v)) }

// kbits returns a vector constant holding bits in each float64 lane.
func kbits(bits uint64) Mem { return broadcast(bits, 8) }

// broadcast returns a vector constant, 32 bytes (64 with wide), holding
// bits in each of its lanes of size bytes (4 or 8).
func broadcast(bits uint64, size int) Mem {
	bytes, prefix := 32, "k"
	if wide {
		bytes, prefix = 64, "z"
	}
	key := [3]uint64{bits, uint64(size), uint64(bytes)}
	if m, ok := consts[key]; ok {
		return m
	}
	m := GLOBL(fmt.Sprintf("%s%dx%016x", prefix, size, bits), RODATA|NOPTR)
	for off := 0; off < bytes; off += size {
		data(off, size, bits)
	}
	consts[key] = m
	return m
}

// kreg loads the constant v into a register.
func kreg(v float64) VecVirtual {
	r := vec()
	VMOVUPD(k(v), r)
	return r
}

// The arithmetic helpers return a new register; b may be memory.

func add(a VecVirtual, b Op) VecVirtual { r := vec(); VADDPD(b, a, r); return r }
func sub(a VecVirtual, b Op) VecVirtual { r := vec(); VSUBPD(b, a, r); return r }
func mul(a VecVirtual, b Op) VecVirtual { r := vec(); VMULPD(b, a, r); return r }
func div(a VecVirtual, b Op) VecVirtual { r := vec(); VDIVPD(b, a, r); return r }

// iand and ior are and and or in the integer domain (VPAND and VPOR
// with AVX2), for integer operands.
func iand(a VecVirtual, b Op) VecVirtual {
	if wide {
		return and(a, b)
	}
	r := YMM()
	VPAND(b, a, r)
	return r
}

func ior(a VecVirtual, b Op) VecVirtual {
	if wide {
		return or(a, b)
	}
	r := YMM()
	VPOR(b, a, r)
	return r
}

// A lanes mask is a vector of all-ones or zero lanes (AVX2) or an opmask
// register (wide).

// precision holds the instructions of one element width: the PD forms
// (and quadword integer ones) for float64 lanes, the PS forms (and
// doubleword ones) for float32 lanes (VCMPPS's predicates are VCMPPD's).
type precision struct {
	vmov, vcmp, vblendm, vand, vpand, vor, vpor func(...Op)
	vblendv                                     func(mask, t, f, r Op)
	vmovz, vmaskmov                             func(v, mask, r Op)
}

var (
	pd = precision{vmov: VMOVUPD, vcmp: VCMPPD, vblendm: VBLENDMPD,
		vand: VANDPD, vpand: VPANDQ, vor: VORPD, vpor: VPORQ,
		vblendv: VBLENDVPD, vmovz: VMOVUPD_Z, vmaskmov: VMASKMOVPD}
	ps = precision{vmov: VMOVUPS, vcmp: VCMPPS, vblendm: VBLENDMPS,
		vand: VANDPS, vpand: VPANDD, vor: VORPS, vpor: VPORD,
		vblendv: VBLENDVPS, vmovz: VMOVUPS_Z, vmaskmov: VMASKMOVPS}
)

// and and or are bitwise; with wide they are the integer forms, which
// AVX512F has (VANDPD and VANDPS on ZMM need AVX512DQ). and32 and or32
// are those of float32 lanes.
var (
	and, or     = pd.and, pd.or
	and32, or32 = ps.and, ps.or
)

func (p precision) and(a VecVirtual, b Op) VecVirtual { return bitwise(p.vpand, p.vand, a, b) }
func (p precision) or(a VecVirtual, b Op) VecVirtual  { return bitwise(p.vpor, p.vor, a, b) }

// bitwise returns a new register holding a op b, op being the integer
// form wideOp with wide.
func bitwise(wideOp, op func(...Op), a VecVirtual, b Op) VecVirtual {
	r := vec()
	if wide {
		wideOp(b, a, r)
	} else {
		op(b, a, r)
	}
	return r
}

// load returns the lanes at src, those of mask only where mask is not
// nil (the others zero with wide), and store writes y's lanes to dst
// likewise: kernel's load and store for lanes of the element width.
func (p precision) load(src Mem, mask Register) VecVirtual {
	x := vec()
	switch {
	case mask == nil:
		p.vmov(src, x)
	case wide:
		p.vmovz(src, mask, x)
	default:
		p.vmaskmov(src, mask, x)
	}
	return x
}

func (p precision) store(y VecVirtual, dst Mem, mask Register) {
	switch {
	case mask == nil:
		p.vmov(y, dst)
	case wide:
		p.vmov(y, mask, dst)
	default:
		p.vmaskmov(y, mask, dst)
	}
}

// cmp, blend and pick are the float64 lanes' helpers, and cmp32, blend32
// and pick32 the float32 lanes' (precision's methods).
var (
	cmp, blend, pick       = pd.cmp, pd.blend, pd.pick
	cmp32, blend32, pick32 = ps.cmp, ps.blend, ps.pick
)

// cmp returns the lanes mask of a pred b.
func (p precision) cmp(pred uint8, a VecVirtual, b Op) Register {
	if wide {
		m := K()
		p.vcmp(Imm(uint64(pred)), b, a, m)
		return m
	}
	r := YMM()
	p.vcmp(Imm(uint64(pred)), b, a, r)
	return r
}

// blend returns mask ? t : f lane by lane.
func (p precision) blend(mask Register, t Op, f VecVirtual) VecVirtual {
	r := vec()
	if wide {
		p.vblendm(t, f, mask, r)
	} else {
		p.vblendv(mask, t, f, r)
	}
	return r
}

// pick returns mask ? v : 0 lane by lane.
func (p precision) pick(mask Register, v Op) VecVirtual {
	r := vec()
	if wide {
		p.vmovz(v, mask, r)
	} else {
		p.vand(v, mask.(VecVirtual), r)
	}
	return r
}

// both returns the lanes mask of a and b.
func both(a, b Register) Register {
	if wide {
		m := K()
		KANDW(b, a, m)
		return m
	}
	return and(a.(VecVirtual), b)
}

// clampLow returns max(x, lo), and clampHigh min(x, hi), both keeping
// NaN (x is the second source, which MAXPD and MINPD return for NaN).
func clampLow(x VecVirtual, lo float64) VecVirtual {
	r := kreg(lo)
	VMAXPD(x, r, r)
	return r
}

func clampHigh(x VecVirtual, hi float64) VecVirtual {
	r := kreg(hi)
	VMINPD(x, r, r)
	return r
}

// horner returns c[0]·z^(n-1) + … + c[n-1], c from the highest degree.
func horner(z VecVirtual, c ...float64) VecVirtual {
	acc := kreg(c[0])
	for _, ci := range c[1:] {
		VFMADD213PD(k(ci), z, acc) // acc = z·acc + ci
	}
	return acc
}

func expKernel(x VecVirtual, deg int) VecVirtual {
	return expVec(clampHigh(clampLow(x, expMin), expMax), deg, true)
}

// expVec is exp64 on x, which the caller has clamped to [expMin,
// expMax]; split scales by 2^n in two factors, which the caller may skip
// when |x| ≤ 708 (2^n then is a normal float64).
func expVec(x VecVirtual, deg int, split bool) VecVirtual {
	t := kreg(roundMagic)
	VFMADD231PD(k(log2e), x, t) // t = x·log2e + magic: n in its low bits
	n := sub(t, k(roundMagic))
	r := vec()
	VMOVUPD(x, r)
	VFNMADD231PD(k(ln2Hi), n, r) // r = x - n·ln2Hi
	VFNMADD231PD(k(ln2Lo), n, r)
	return expPoly(t, n, r, deg, split)
}

// expPoly is expVec after the reduction: e^r·2^n, t = n + roundMagic.
func expPoly(t, n, r VecVirtual, deg int, split bool) VecVirtual {
	z := mul(r, r)
	// 1 + (r + z·(A(z) + r·B(z))), A the even and B the odd coefficients.
	var even, odd []float64
	for d := deg; d >= 2; d-- {
		c := 1 / factorial(d)
		if d%2 == 0 {
			even = append(even, c)
		} else {
			odd = append(odd, c)
		}
	}
	q := horner(z, odd...)
	VFMADD213PD(horner(z, even...), r, q) // q = r·B + A
	VFMADD213PD(r, z, q)                  // q = z·q + r
	p := add(q, k(1))
	if !split {
		VMULPD(pow2(t), p, p)
		return p
	}
	// n1 = round(n/2), n2 = n - n1.
	h := kreg(roundMagic)
	VFMADD231PD(k(0.5), n, h)
	n1 := sub(h, k(roundMagic))
	n2 := add(sub(n, n1), k(roundMagic))
	VMULPD(pow2(h), p, p)
	VMULPD(pow2(n2), p, p)
	return p
}

// pow2 returns 2^n from t = n + roundMagic, whose low bits hold n.
func pow2(t VecVirtual) VecVirtual {
	r := vec()
	VPSLLQ(Imm(52), t, r)
	VPADDQ(kbits(1023<<52), r, r)
	return r
}

func factorial(d int) float64 {
	f := 1.0
	for i := 2; i <= d; i++ {
		f *= float64(i)
	}
	return f
}

// logVec is log64 on x, special values included.
func logVec(x VecVirtual) VecVirtual {
	sub54 := cmp(cmpLT, x, k(0x1p-1022))
	xn := blend(sub54, mul(x, k(0x1p54)), x)
	bits := vec()
	VPADDQ(kbits(logOffset), xn, bits)
	e := vec()
	VPSRLQ(Imm(52), bits, e)
	e = ior(e, kbits(0x4330000000000000)) // 2^52 + e as a float64
	kf := sub(e, k(0x1p52+1023))
	VADDPD(pick(sub54, k(-54)), kf, kf)
	m := iand(bits, kbits(fracMask))
	VPADDQ(kbits(logMantBase), m, m)
	f := sub(m, k(1))
	res := logTail(f, div(f, add(f, k(2))), kf, nil)

	// x outside (0, +Inf): x itself for +Inf and NaN, NaN below 0, -Inf
	// at ±0.
	valid := both(cmp(cmpGT, x, k(0)), cmp(cmpLT, x, k(math.Inf(1))))
	sp := blend(cmp(cmpLT, x, k(0)), k(math.NaN()), x)
	sp = blend(cmp(cmpEQ, x, k(0)), k(math.Inf(-1)), sp)
	return blend(valid, res, sp)
}

// logTail is the pure-Go logTail: k·ln2 + log1p(f) + c, s = f/(2+f); c
// may be nil for 0.
func logTail(f, s, kf, c VecVirtual) VecVirtual {
	hfsq := mul(mul(f, f), k(0.5))
	z := mul(s, s)
	w := mul(z, z)
	t1 := mul(horner(w, lg[5], lg[3], lg[1]), w)
	t2 := mul(horner(w, lg[6], lg[4], lg[2], lg[0]), z)
	u := add(hfsq, add(t1, t2))
	acc := mul(kf, k(ln2Lo))
	if c != nil {
		VADDPD(c, acc, acc)
	}
	VFMADD231PD(u, s, acc) // s·(hfsq+R) + (k·ln2Lo + c)
	VSUBPD(hfsq, acc, acc)
	VADDPD(f, acc, acc)
	VFMADD231PD(k(ln2Hi), kf, acc) // k·ln2Hi is exact
	return acc
}

// tanhVec is tanh64: with a = |x|, a + B/C where for a < 0.625 B/C is
// Cephes' a·z·P(z)/Q(z) and above it a = 1, B = -2, C = e^2a+1; one
// division serves both.
func tanhVec(x VecVirtual, deg int) VecVirtual {
	a := and(x, kbits(signMask-1))
	z := mul(a, a)
	bs := mul(mul(a, z), horner(z, tanhP...))
	qs := add(z, k(tanhQ[0]))
	VFMADD213PD(k(tanhQ[1]), z, qs)
	VFMADD213PD(k(tanhQ[2]), z, qs)
	cl := add(expVec(clampHigh(add(a, a), tanhClamp), deg, false), k(1))
	small := cmp(cmpLT, a, k(tanhSmall))
	res := add(blend(small, a, kreg(1)), div(blend(small, bs, kreg(-2)), blend(small, qs, cl)))
	return or(res, and(x, kbits(signMask)))
}

// negAbsExp returns e^-|x| (0 for ±Inf, NaN for NaN), the first step of
// sigmoid and softplus.
func negAbsExp(x VecVirtual, deg int) VecVirtual {
	return expVec(clampLow(or(x, kbits(signMask)), expMin), deg, true)
}

// sigmoidVec is sigmoid64: num/(1+e), e = e^-|x|, num = 1 for x ≥ 0 and
// e below.
func sigmoidVec(x VecVirtual, deg int) VecVirtual {
	e := negAbsExp(x, deg)
	return div(blend(cmp(cmpLT, x, k(0)), e, kreg(1)), add(e, k(1)))
}

// softplusVec is softplus64: max(x, 0) + log1p(e), e = e^-|x| ≤ 1, with
// log1p as in log1p01, and its two divisions, f/(2+f) and c/(1+e), done
// as one: 1/((2+f)(1+e)) times f·(1+e) and c·(2+f). (s's error is scaled
// down by s²/3 in the result, and c is below an ulp of it.)
func softplusVec(x VecVirtual, deg int) VecVirtual {
	e := negAbsExp(x, deg)
	u := add(e, k(1))
	big := cmp(cmpGE, e, k(sqrt2m1))
	f := blend(big, sub(mul(u, k(0.5)), k(1)), e)
	kf := pick(big, k(1))
	c := pick(big, sub(e, sub(u, k(1))))
	den := add(f, k(2))
	inv := div(kreg(1), mul(den, u))
	s := mul(mul(f, u), inv)
	cu := mul(mul(c, den), inv)
	res := logTail(f, s, kf, cu)
	xp := vec()
	VMAXPD(k(0), x, xp)
	return add(res, xp)
}

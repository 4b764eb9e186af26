// Command _asm generates vek's AVX2 kernels (vek_amd64.s and
// stubs_amd64.go); run it with go generate in internal/kernel/vek.
//
// Every kernel runs one IEEE instruction per element (add, sub, mul, div,
// sqrt) or a bitwise one (neg, abs, relu), so its results are those of
// the scalar Go loops bit for bit. The main loop takes 4 registers at a
// time, then 1; the last elements, fewer than the lanes, go through the
// same instruction with masked loads and stores.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// dtype holds one element type's instructions.
type dtype struct {
	name        string // "32" or "64"
	goType      string
	lanes, size int
	// Instructions, with avo's operand order (sources, then destination).
	add, sub, mul, div, sqrt, and, or, xor, min func(...Op)
	maskLoad, maskStore, load, store, bcast     func(...Op)
	signBit                                     uint64
}

var f32 = dtype{
	name: "32", goType: "float32", lanes: 8, size: 4,
	add: VADDPS, sub: VSUBPS, mul: VMULPS, div: VDIVPS, sqrt: VSQRTPS,
	and: VANDPS, or: VORPS, xor: VXORPS, min: VMINPS,
	maskLoad: fixed3(VMASKMOVPS), maskStore: fixed3(VMASKMOVPS), load: VMOVUPS, store: VMOVUPS,
	bcast: VBROADCASTSS, signBit: 1 << 31,
}

var f64 = dtype{
	name: "64", goType: "float64", lanes: 4, size: 8,
	add: VADDPD, sub: VSUBPD, mul: VMULPD, div: VDIVPD, sqrt: VSQRTPD,
	and: VANDPD, or: VORPD, xor: VXORPD, min: VMINPD,
	maskLoad: fixed3(VMASKMOVPD), maskStore: fixed3(VMASKMOVPD), load: VMOVUPD, store: VMOVUPD,
	bcast: VBROADCASTSD, signBit: 1 << 63,
}

// cmpUNORD is VCMPPS's predicate "unordered" (either is NaN).
const cmpUNORD = 0x03

// quiet32 is float32's quiet NaN bit.
const quiet32 = 1 << 22

// unroll is the number of registers the main loop takes at a time.
const unroll = 4

func main() {
	ConstraintExpr("amd64,!purego")
	for _, t := range []dtype{f32, f64} {
		for _, b := range []struct {
			name, sym string
			commutes  bool
			op        func(...Op)
		}{{"add", "+", true, t.add}, {"sub", "-", false, t.sub}, {"mul", "*", true, t.mul}, {"div", "/", false, t.div}} {
			op := b.op
			// a op b: the first operand of the Go expression is VEX's
			// first source, whose NaN the result keeps when both are NaN.
			bin := func(a, b Op) VecVirtual { r := YMM(); op(b, a, r); return r }
			kernel(t, b.name+"VV", "dst, x, y", "x[i] "+b.sym+" y[i]", bin)
			kernel(t, b.name+"VS", "dst, x, c", "x[i] "+b.sym+" c", bin)
			sv := bin
			if b.commutes {
				// Go compiles c + y[i] and c * y[i] with y[i] first, the
				// register it overwrites.
				sv = func(c, y Op) VecVirtual { return bin(y, c) }
			}
			kernel(t, b.name+"SV", "dst, c, y", "c "+b.sym+" y[i]", sv)
		}
		kernel(t, "neg", "dst, x", "-x[i]", func(a, _ Op) VecVirtual {
			r := YMM()
			t.xor(broadcast(t.signBit, t.size), a, r)
			return r
		})
		kernel(t, "abs", "dst, x", "|x[i]|", func(a, _ Op) VecVirtual {
			r := YMM()
			t.and(broadcast(t.signBit-1, t.size), a, r)
			if t.size == 4 {
				// Go's float32(math.Abs(float64(x))) goes through float64,
				// whose conversion quiets signalling NaNs.
				m := YMM()
				VCMPPS(Imm(cmpUNORD), a, a, m)
				VANDPS(broadcast(quiet32, 4), m, m)
				VORPS(m, r, r)
			}
			return r
		})
		kernel(t, "square", "dst, x", "x[i]*x[i]", func(a, _ Op) VecVirtual {
			r := YMM()
			t.mul(a, a, r)
			return r
		})
		kernel(t, "sqrt", "dst, x", "sqrt(x[i])", func(a, _ Op) VecVirtual {
			r := YMM()
			t.sqrt(a, r)
			return r
		})
		// relu is Go's max(x, 0) on amd64, instruction for instruction:
		// -min(-x, -0), where min(a, b) is t1 | t2 with t1 = MIN(a, b)
		// and t2 = MIN(t1, a), MIN giving its second operand when either
		// is NaN or both are zeros. It gives +0 for -0 and NaN for NaN
		// (with the NaN's sign flipped when it is negative).
		kernel(t, "relu", "dst, x", "max(x[i], 0)", func(x, _ Op) VecVirtual {
			sign := broadcast(t.signBit, t.size)
			a, b, t1, t2, r := YMM(), YMM(), YMM(), YMM(), YMM()
			t.xor(sign, x, a)
			t.load(sign, b)
			t.min(b, a, t1)
			t.min(a, t1, t2)
			t.or(t2, t1, r)
			t.xor(sign, r, r)
			return r
		})
		lanes(t)
		where(t)
		kernelN(t, "fill", "dst, c", "c", func(args []Op) VecVirtual { return args[0].(VecVirtual) })
		for _, mode := range []adamMode{adamPlain, adamL2, adamDecoupled} {
			adam(t, mode, true)
			adam(t, mode, false)
		}
	}
	sumRows4()
	peak()
	for _, a := range []avx512{f32x16, f64x8} {
		for _, mode := range []adamMode{adamPlain, adamL2, adamDecoupled} {
			adam512(a, mode, true)
			adam512(a, mode, false)
		}
	}
	for _, mode := range []adamMode{adamPlain, adamL2, adamDecoupled} {
		adamM32(mode, true)
		adamM32(mode, false)
	}
	Generate()
}

// adamMode is how an Adam kernel decays the weights.
type adamMode struct {
	name, doc string
}

var (
	adamPlain     = adamMode{"", ""}
	adamL2        = adamMode{"L2", " with g + p·decay for g"}
	adamDecoupled = adamMode{"W", " with p·decay for p before the step"}
)

// adam emits func adam<mode><t.name>AVX2, Adam's step a vector at a time:
// each operation is the instruction, with the operand order, that the
// kernels above use for the step it stands for (Scale is mul by a
// broadcast scalar; the step size times a vector is mul's scalar-vector
// form, the vector first), so its results are theirs bit for bit.
// Without corrected it emits adam<mode>NoCorr<t.name>AVX2, which leaves
// out the division by the bias correction: the step for a correction of
// 1, whose quotient is its dividend, bit for bit, NaNs included.
func adam(t dtype, mode adamMode, corrected bool) {
	fn, n, ptr, kb := adamHeader(t, mode, corrected, "AVX2",
		"(beta1, 1-beta1, beta2, 1-beta2, step size, bias correction, eps, decay),",
		fmt.Sprintf("%d elements at a time; see Adam.", t.lanes))
	var k [7]VecVirtual
	for i := range k {
		k[i] = YMM()
		t.bcast(Mem{Base: kb, Disp: i * t.size}, k[i])
	}
	beta1, c1, beta2, c2, stepSize, correction, eps := k[0], k[1], k[2], k[3], k[4], k[5], k[6]
	// a op b with a as VEX's first source, as in the kernels above.
	bin := func(op func(...Op), a, b Op) VecVirtual { r := YMM(); op(b, a, r); return r }
	step := func(mask VecVirtual) {
		in := map[string]VecVirtual{}
		for _, name := range adamSlices[3:] {
			r := YMM()
			if mask == nil {
				t.load(Mem{Base: ptr[name]}, r)
			} else {
				t.maskLoad(Mem{Base: ptr[name]}, mask, r)
			}
			in[name] = r
		}
		store := func(name string, r VecVirtual) {
			if mask == nil {
				t.store(r, Mem{Base: ptr[name]})
			} else {
				t.maskStore(r, mask, Mem{Base: ptr[name]})
			}
		}
		// The decay factor is broadcast where it is used: the constants
		// above take every register the step does not.
		decay := func() VecVirtual { r := YMM(); t.bcast(Mem{Base: kb, Disp: 7 * t.size}, r); return r }
		g, base := in["g"], in["p"]
		switch mode {
		case adamL2:
			g = bin(t.add, g, bin(t.mul, in["p"], decay()))
		case adamDecoupled:
			base = bin(t.mul, in["p"], decay())
		}
		m1 := bin(t.add, bin(t.mul, in["m"], beta1), bin(t.mul, g, c1))
		store("m1", m1)
		v1 := bin(t.add, bin(t.mul, in["v"], beta2), bin(t.mul, bin(t.mul, g, g), c2))
		store("v1", v1)
		root := YMM()
		t.sqrt(v1, root)
		if corrected {
			root = bin(t.div, root, correction)
		}
		denom := bin(t.add, root, eps)
		delta := bin(t.mul, bin(t.div, m1, denom), stepSize)
		store("p1", bin(t.sub, base, delta))
	}
	advance := func() {
		for _, name := range adamSlices {
			ADDQ(Imm(uint64(t.lanes*t.size)), ptr[name])
		}
		SUBQ(Imm(uint64(t.lanes)), n)
	}
	Label(fn + "_loop")
	CMPQ(n, Imm(uint64(t.lanes)))
	JB(LabelRef(fn + "_tail"))
	step(nil)
	advance()
	JMP(LabelRef(fn + "_loop"))

	maskedTail(fn, t, n, func(mask VecVirtual) { step(mask) })
}

// maskedTail emits the end of a kernel fn over n elements left, fewer
// than t.lanes: step run once on the first n lanes through a mask (the
// mask of the first n lanes: lanes all-ones elements then lanes zero ones,
// read from element lanes-n), then the return.
func maskedTail(fn string, t dtype, n GPVirtual, step func(mask VecVirtual)) {
	Label(fn + "_tail")
	TESTQ(n, n)
	JZ(LabelRef(fn + "_done"))
	idx := GP64()
	MOVQ(U64(uint64(t.lanes)), idx)
	SUBQ(n, idx)
	base := GP64()
	LEAQ(tailMask(t.lanes, t.size), base)
	mask := YMM()
	VMOVDQU(Mem{Base: base, Index: idx, Scale: uint8(t.size)}, mask)
	step(mask)
	Label(fn + "_done")
	VZEROUPPER()
	RET()
}

// kernel emits func <name><t.name>AVX2 with the parameters params ("dst"
// first, then slices x and y or the scalar c, in that order), which sets
// dst[i] = body(first, second) for each i of dst; first and second are
// the registers holding the next elements of the second and third
// parameters (second is nil for unary kernels).
func kernel(t dtype, name, params, what string, body func(a, b Op) VecVirtual) {
	kernelN(t, name, params, what, func(args []Op) VecVirtual {
		if len(args) == 1 {
			return body(args[0], nil)
		}
		return body(args[0], args[1])
	})
}

// kernelN is kernel for any number of inputs: body gets one register per
// parameter after dst, in order. Parameters named c and d are scalars.
func kernelN(t dtype, name, params, what string, body func(args []Op) VecVirtual) {
	fn := name + t.name + "AVX2"
	names := splitParams(params)
	sig := "func("
	for i, p := range names {
		if i > 0 {
			sig += ", "
		}
		if isScalar(p) {
			sig += p + " " + t.goType
		} else {
			sig += p + " []" + t.goType
		}
	}
	sig += ")"
	TEXT(fn, NOSPLIT, sig)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets dst[i] = %s for each i of dst, %d at a time.", fn, what, t.lanes))

	n := GP64()
	Load(Param("dst").Len(), n)
	dst := GP64()
	Load(Param("dst").Base(), dst)
	// Each input is a pointer (advanced with dst) or a broadcast register.
	type input struct {
		ptr GPVirtual
		reg VecVirtual
	}
	var ins []input
	for _, p := range names[1:] {
		if isScalar(p) {
			x, r := XMM(), YMM()
			Load(Param(p), x)
			t.bcast(x, r)
			ins = append(ins, input{reg: r})
			continue
		}
		ptr := GP64()
		Load(Param(p).Base(), ptr)
		ins = append(ins, input{ptr: ptr})
	}
	vbytes := t.lanes * t.size
	// step emits one vector's work at byte offset off, with mask for
	// the tail (nil for full vectors).
	step := func(off int, mask VecVirtual) {
		args := make([]Op, len(ins))
		for i, in := range ins {
			if in.reg != nil {
				args[i] = in.reg
				continue
			}
			r := YMM()
			m := Mem{Base: in.ptr, Disp: off}
			if mask == nil {
				t.load(m, r)
			} else {
				t.maskLoad(m, mask, r)
			}
			args[i] = r
		}
		y := body(args)
		if mask == nil {
			t.store(y, Mem{Base: dst, Disp: off})
		} else {
			t.maskStore(y, mask, Mem{Base: dst, Disp: off})
		}
	}
	advance := func(elems int) {
		for _, in := range ins {
			if in.ptr != nil {
				ADDQ(Imm(uint64(elems*t.size)), in.ptr)
			}
		}
		ADDQ(Imm(uint64(elems*t.size)), dst)
		SUBQ(Imm(uint64(elems)), n)
	}

	Label(fn + "_loop4")
	CMPQ(n, Imm(uint64(unroll*t.lanes)))
	JB(LabelRef(fn + "_loop1"))
	for u := range unroll {
		step(u*vbytes, nil)
	}
	advance(unroll * t.lanes)
	JMP(LabelRef(fn + "_loop4"))

	Label(fn + "_loop1")
	CMPQ(n, Imm(uint64(t.lanes)))
	JB(LabelRef(fn + "_tail"))
	step(0, nil)
	advance(t.lanes)
	JMP(LabelRef(fn + "_loop1"))

	maskedTail(fn, t, n, func(mask VecVirtual) { step(0, mask) })
}

// isScalar reports whether a kernel's parameter p is a scalar.
func isScalar(p string) bool { return p == "c" || p == "d" }

// cmpNEQ_UQ is VCMPPS's predicate "not equal or unordered": Go's !=, true
// for NaN, false for -0 against +0.
const cmpNEQ_UQ = 0x04

// where emits the kernels of Where: dst[i] = x[i] where keep[i] != 0, else
// y[i], x or y (or both) a scalar (c, d) in the S forms. Each lane is a
// blend, so every bit of the value chosen is copied, NaNs' included.
func where(t dtype) {
	cmp := VCMPPS
	blend := VBLENDVPS
	if t.size == 8 {
		cmp, blend = VCMPPD, VBLENDVPD
	}
	for _, f := range []struct{ name, params, x, y string }{
		{"whereVV", "dst, keep, x, y", "x[i]", "y[i]"},
		{"whereVS", "dst, keep, x, c", "x[i]", "c"},
		{"whereSV", "dst, keep, c, y", "c", "y[i]"},
		{"whereSS", "dst, keep, c, d", "c", "d"},
	} {
		what := fmt.Sprintf("%s where keep[i] != 0, else %s,", f.x, f.y)
		kernelN(t, f.name, f.params, what, func(args []Op) VecVirtual {
			m, zero, r := YMM(), YMM(), YMM()
			t.xor(zero, zero, zero)
			cmp(Imm(cmpNEQ_UQ), zero, args[0], m)
			blend(m, args[1], args[2], r)
			return r
		})
	}
}

// splitParams splits "dst, x, y" into its names.
func splitParams(s string) []string {
	var out []string
	cur := ""
	for _, c := range s {
		switch c {
		case ',':
			out = append(out, cur)
			cur = ""
		case ' ':
		default:
			cur += string(c)
		}
	}
	return append(out, cur)
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

var consts = map[[2]uint64]Mem{}

// broadcast returns a 32-byte constant holding bits in each of its lanes
// of size bytes (4 or 8).
func broadcast(bits uint64, size int) Mem {
	key := [2]uint64{bits, uint64(size)}
	if m, ok := consts[key]; ok {
		return m
	}
	m := GLOBL(fmt.Sprintf("k%dx%016x", size, bits), RODATA|NOPTR)
	for off := 0; off < 32; off += size {
		data(off, size, bits)
	}
	consts[key] = m
	return m
}

// fixed3 turns an instruction of 3 operands into a variadic one.
func fixed3(f func(a, b, c Op)) func(...Op) {
	return func(ops ...Op) { f(ops[0], ops[1], ops[2]) }
}

// adamSlices are an Adam kernel's slices: the outputs, then the inputs.
var adamSlices = []string{"p1", "m1", "v1", "p", "g", "m", "v"}

// adamHeader starts an Adam kernel of t for mode, with or without the
// division by the bias correction, of instruction set isa ("AVX2",
// "AVX512"): its name fn, signature and doc (the lines of doc after the
// first), and loads its length n, its slices' bases ptr and the scalars'
// base kb.
func adamHeader(t dtype, mode adamMode, corrected bool, isa string, doc ...string) (fn string, n GPVirtual, ptr map[string]GPVirtual, kb GPVirtual) {
	fn = "adam" + mode.name + t.name + isa
	what := mode.doc
	if !corrected {
		fn = "adam" + mode.name + "NoCorr" + t.name + isa
		what += " and a bias correction of 1 (not divided by)"
	}
	TEXT(fn, NOSPLIT, fmt.Sprintf("func(p1, m1, v1, p, g, m, v, k []%s)", t.goType))
	Pragma("noescape")
	Doc(append([]string{fn + " sets p1, m1 and v1 to Adam's step" + what + " from p, g, m and v with the scalars k"}, doc...)...)
	n = GP64()
	Load(Param("p1").Len(), n)
	ptr = map[string]GPVirtual{}
	for _, name := range adamSlices {
		r := GP64()
		Load(Param(name).Base(), r)
		ptr[name] = r
	}
	kb = GP64()
	Load(Param("k").Base(), kb)
	return fn, n, ptr, kb
}

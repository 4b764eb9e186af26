// Command _asm generates philox's AVX2 kernel (philox_amd64.s and
// stubs_amd64.go); run it with go generate in internal/kernel/philox.
//
// The kernel computes eight Philox blocks at once, one block a lane, and
// their float32 Box–Muller pairs by the operations of the Go loop (Pair),
// each an IEEE instruction rounded to float32 (no fused multiply-adds),
// the branches as the same integer masks, so its values are the Go
// loop's bit for bit.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Philox-4x32-10's multipliers and key increments.
const (
	m0 = 0xD2511F53
	m1 = 0xCD9E8D57
	w0 = 0x9E3779B9
	w1 = 0xBB67AE85
)

// consts are the constants made so far, by bits and element size.
var consts = map[[2]uint64]Mem{}

// lanes holds 0, 1, …, 7, the lanes' block offsets.
var lanes Mem

// k returns 32 bytes holding bits eight times.
func k(bits uint32) Mem { return splat(uint64(bits), 4) }

// splat returns 32 bytes holding the size-byte element bits (4 or 8
// bytes: symbols k<8 hex digits> and q<16 hex digits>), made once.
func splat(bits uint64, size int) Mem {
	key := [2]uint64{bits, uint64(size)}
	if m, ok := consts[key]; ok {
		return m
	}
	name := fmt.Sprintf("q%016x", bits)
	if size == 4 {
		name = fmt.Sprintf("k%08x", bits)
	}
	m := GLOBL(name, RODATA|NOPTR)
	for off := 0; off < 32; off += size {
		if size == 4 {
			DATA(off, U32(uint32(bits)))
		} else {
			DATA(off, U64(bits))
		}
	}
	consts[key] = m
	return m
}

// f returns 32 bytes holding float32(x) eight times.
func f(x float64) Mem { return k(math.Float32bits(float32(x))) }

func main() {
	ConstraintExpr("amd64,!purego")
	lanes = GLOBL("lanes", RODATA|NOPTR)
	for i := range 8 {
		DATA(4*i, U32(uint32(i)))
	}

	normals32()
	normals64()
	Generate()
}

// normals32 generates normals32AVX2.
func normals32() {
	blockLoop("normals32AVX2", "func(out []float32, c *[6]uint32)", "", 5, []string{
		"normals32AVX2 sets out, whose length is a multiple of 32, to the normal",
		"values of the blocks c[0], c[0]+1, ... of the counter (·, c[1], c[2], c[3])",
		"under the key (c[4], c[5]), as Normals32 does, 8 blocks at a time."},
		func(p Register, x [4]VecVirtual) {
			// two Box–Muller pairs a block, then each block's four values in turn
			a, bb := pair(x[0], x[1])
			c, d := pair(x[2], x[3])
			t0, t1, t2, t3 := YMM(), YMM(), YMM(), YMM()
			VUNPCKLPS(bb, a, t0)
			VUNPCKHPS(bb, a, t1)
			VUNPCKLPS(d, c, t2)
			VUNPCKHPS(d, c, t3)
			s0, s1, s2, s3 := YMM(), YMM(), YMM(), YMM()
			VUNPCKLPD(t2, t0, s0)
			VUNPCKHPD(t2, t0, s1)
			VUNPCKLPD(t3, t1, s2)
			VUNPCKHPD(t3, t1, s3)
			o := YMM()
			VPERM2F128(U8(0x20), s1, s0, o)
			VMOVUPS(o, Mem{Base: p})
			VPERM2F128(U8(0x20), s3, s2, o)
			VMOVUPS(o, Mem{Base: p, Disp: 32})
			VPERM2F128(U8(0x31), s1, s0, o)
			VMOVUPS(o, Mem{Base: p, Disp: 64})
			VPERM2F128(U8(0x31), s3, s2, o)
			VMOVUPS(o, Mem{Base: p, Disp: 96})
		})
}

// blockLoop generates the routine name of signature sig (out []T, c
// *[6]uint32), documented by doc, that runs body on 8 blocks at a time
// (blocks' words, starting at block c[0]) for each 128 bytes of out at p,
// len(out)>>shift times; suffix makes its labels unique.
func blockLoop(name, sig, suffix string, shift uint8, doc []string, body func(p Register, x [4]VecVirtual)) {
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(doc...)
	p := Load(Param("out").Base(), GP64())
	n := Load(Param("out").Len(), GP64())
	cp := Load(Param("c"), GP64())
	b := GP32()
	MOVL(Mem{Base: cp}, b)
	SHRQ(U8(shift), n)
	JZ(LabelRef("done" + suffix))

	Label("loop" + suffix)
	body(p, blocks(cp, b))
	ADDQ(U8(128), p)
	ADDL(U8(8), b)
	DECQ(n)
	JNZ(LabelRef("loop" + suffix))
	Label("done" + suffix)
	VZEROUPPER()
	RET()
}

// blocks returns the Philox rounds' words 0 to 3 of blocks b, …, b+7 of
// the counter (·, c[1], c[2], c[3]) under the key (c[4], c[5]), block
// b+i in lane i.
func blocks(cp Register, b Register) [4]VecVirtual {
	x := [4]VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for i := 1; i < 4; i++ {
		VPBROADCASTD(Mem{Base: cp, Disp: 4 * i}, x[i])
	}
	bx := XMM()
	MOVD(b, bx)
	VPBROADCASTD(bx, x[0])
	VPADDD(lanes, x[0], x[0])
	k0, k1 := YMM(), YMM()
	VPBROADCASTD(Mem{Base: cp, Disp: 16}, k0)
	VPBROADCASTD(Mem{Base: cp, Disp: 20}, k1)
	for r := range 10 {
		if r > 0 {
			VPADDD(k(w0), k0, k0)
			VPADDD(k(w1), k1, k1)
		}
		hi0, lo0 := mulHiLo(x[0], m0)
		hi1, lo1 := mulHiLo(x[2], m1)
		VPXOR(x[1], hi1, hi1)
		VPXOR(k0, hi1, hi1)
		VPXOR(x[3], hi0, hi0)
		VPXOR(k1, hi0, hi0)
		x = [4]VecVirtual{hi1, lo1, hi0, lo0}
	}
	return x
}

// mulHiLo returns the high and low words of the 64-bit products of x's
// lanes by the constant m.
func mulHiLo(x VecVirtual, m uint32) (hi, lo VecVirtual) {
	even, odd, t := YMM(), YMM(), YMM()
	VPMULUDQ(k(m), x, even)
	VPSRLQ(U8(32), x, t)
	VPMULUDQ(k(m), t, odd)
	hi, lo = YMM(), YMM()
	VPSLLQ(U8(32), odd, t)
	VPBLENDD(U8(0xAA), t, even, lo)
	VPSRLQ(U8(32), even, t)
	VPBLENDD(U8(0xAA), odd, t, hi)
	return hi, lo
}

// unit returns w·2⁻³² + 2⁻³³ in float32, w converted exactly rounded as
// its high and low 16 bits (both exact) summed in one rounding.
func unit(w VecVirtual) VecVirtual {
	h, l := YMM(), YMM()
	VPSRLD(U8(16), w, h)
	VPAND(k(0xffff), w, l)
	VCVTDQ2PS(h, h)
	VCVTDQ2PS(l, l)
	VMULPS(f(65536), h, h)
	VADDPS(l, h, h)
	VMULPS(f(0x1p-32), h, h)
	VADDPS(f(0x1p-33), h, h)
	return h
}

// pair returns r·cos 2πv and r·sin 2πv for the words wu and wv of each
// lane, as Pair does.
func pair(wu, wv VecVirtual) (rc, rs VecVirtual) {
	// log u
	u := unit(wu)
	mb, lt, e := YMM(), YMM(), YMM()
	VPAND(k(0x007fffff), u, mb)
	VPOR(k(0x3f000000), mb, mb)
	VPSUBD(k(math.Float32bits(0.70710678118654752)), mb, lt)
	VPSRLD(U8(31), lt, lt)
	VPSRLD(U8(23), u, e)
	VPSUBD(k(126), e, e)
	VPSUBD(lt, e, e)
	VCVTDQ2PS(e, e)
	VPSLLD(U8(23), lt, lt)
	VPADDD(lt, mb, mb)
	m := mb
	VSUBPS(f(1), mb, m)
	z, y, t := YMM(), YMM(), YMM()
	VMULPS(m, m, z)
	VMULPS(f(7.0376836292e-2), m, y)
	for _, c := range []float64{-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
		1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1} {
		VADDPS(f(c), y, y)
		VMULPS(m, y, y)
	}
	VMULPS(z, y, y)
	VMULPS(f(-2.12194440e-4), e, t)
	VADDPS(t, y, y)
	VMULPS(f(0.5), z, t)
	VSUBPS(t, y, y)
	VADDPS(y, m, y)
	VMULPS(f(0.693359375), e, t)
	VADDPS(t, y, y)
	VMULPS(f(-2), y, y)
	r := y
	VSQRTPS(y, r)

	// sine and cosine
	v := unit(wv)
	VMULPS(f(4), v, v)
	q, x := YMM(), YMM()
	VADDPS(f(0.5), v, q)
	VCVTTPS2DQ(q, q)
	VCVTDQ2PS(q, x)
	VSUBPS(x, v, x)
	VMULPS(f(math.Pi/2), x, x)
	VMULPS(x, x, z)
	s, c := YMM(), YMM()
	VMULPS(f(-1.9515295891e-4), z, s)
	VADDPS(f(8.3321608736e-3), s, s)
	VMULPS(z, s, s)
	VADDPS(f(-1.6666654611e-1), s, s)
	VMULPS(z, x, t)
	VMULPS(t, s, s)
	VADDPS(x, s, s)
	VMULPS(f(2.443315711809948e-5), z, c)
	VADDPS(f(-1.388731625493765e-3), c, c)
	VMULPS(z, c, c)
	VADDPS(f(4.166664568298827e-2), c, c)
	VMULPS(z, z, t)
	VMULPS(t, c, c)
	h := YMM()
	VMULPS(f(0.5), z, h)
	one := YMM()
	VMOVUPS(f(1), one)
	VSUBPS(h, one, h)
	VADDPS(c, h, c)

	// quadrant q: (sin, cos) = (s, c), (c, −s), (−s, −c), (−c, s)
	swap := YMM()
	VPXOR(s, c, swap)
	VPSLLD(U8(31), q, t)
	VPSRAD(U8(31), t, t)
	VPAND(t, swap, swap)
	VPXOR(swap, s, s)
	VPXOR(swap, c, c)
	VPAND(k(2), q, t)
	VPSLLD(U8(30), t, t)
	VPXOR(t, s, s)
	VPADDD(k(1), q, q)
	VPAND(k(2), q, q)
	VPSLLD(U8(30), q, q)
	VPXOR(q, c, c)
	VMULPS(r, c, c)
	VMULPS(r, s, s)
	return c, s
}

package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// sumRows4 emits sum4Rows32AVX2, the sums of four float32 rows of one
// length, each as a scalar loop with four accumulators adds them: the
// row's 4-lane register is those accumulators (element i added to lane
// i%4 for the whole blocks of 4, in order), the rest added to lane 0 one
// at a time (VADDSS keeps the other lanes), then (a0+a1)+(a2+a3), each
// addition the loop's own with its operands in the same order, so the
// sums are the loop's bit for bit. Four rows at once run four chains of
// additions side by side, where one row's loop waits on its own.
func sumRows4() {
	// The rows come as four pointers, not an array of slices, so that
	// noescape covers them.
	TEXT("sum4Rows32AVX2", NOSPLIT, "func(sums *[4]float32, r0, r1, r2, r3 *float32, n int)")
	Pragma("noescape")
	Doc("sum4Rows32AVX2 sets sums[k] to the sum of the n float32 from rk, as a loop with four accumulators adds it.")
	sums, n := GP64(), GP64()
	Load(Param("sums"), sums)
	Load(Param("n"), n)
	var p [4]GPVirtual
	var acc [4]VecVirtual
	for k := range p {
		p[k] = GP64()
		Load(Param(fmt.Sprintf("r%d", k)), p[k])
		acc[k] = XMM()
		VXORPS(acc[k], acc[k], acc[k])
	}
	Label("rows4_loop")
	CMPQ(n, U32(4))
	JB(LabelRef("rows4_tail"))
	for k := range p {
		VADDPS(Mem{Base: p[k]}, acc[k], acc[k])
		ADDQ(U32(16), p[k])
	}
	SUBQ(U32(4), n)
	JMP(LabelRef("rows4_loop"))
	Label("rows4_tail")
	TESTQ(n, n)
	JZ(LabelRef("rows4_done"))
	for k := range p {
		VADDSS(Mem{Base: p[k]}, acc[k], acc[k])
		ADDQ(U32(4), p[k])
	}
	DECQ(n)
	JMP(LabelRef("rows4_tail"))
	Label("rows4_done")
	for k := range acc {
		t, u := XMM(), XMM()
		VMOVSHDUP(acc[k], t) // a1, a1, a3, a3
		VADDPS(t, acc[k], u) // a0+a1, _, a2+a3, _
		VMOVHLPS(u, u, t)    // a2+a3 in lane 0
		VADDSS(t, u, u)      // (a0+a1)+(a2+a3)
		VMOVSS(u, Mem{Base: sums, Disp: 4 * k})
	}
	RET()
}

// peak emits peak32AVX2, the maximum of the whole blocks of 8 of a
// float32 slice in 8 lanes of VMAXPS, and whether any of them is NaN
// (VMAXPS drops a NaN in its first source, so the lanes' unordered masks
// are ORed on the side). Which of +0 and -0 it returns, where both are
// the maximum, depends on their order.
func peak() {
	TEXT("peak32AVX2", NOSPLIT, "func(x []float32) (m float32, nan bool)")
	Pragma("noescape")
	Doc("peak32AVX2 returns the maximum of x's whole blocks of 8 (-Inf if none) and whether one of them is NaN.")
	x, n := GP64(), GP64()
	Load(Param("x").Base(), x)
	Load(Param("x").Len(), n)
	acc, nan := YMM(), YMM()
	VMOVUPS(broadcast(0xff800000, 4), acc)
	VXORPS(nan, nan, nan)
	Label("peak_loop")
	CMPQ(n, U32(8))
	JB(LabelRef("peak_done"))
	v, u := YMM(), YMM()
	VMOVUPS(Mem{Base: x}, v)
	VCMPPS(Imm(cmpUNORD), v, v, u)
	VORPS(u, nan, nan)
	VMAXPS(acc, v, acc) // acc = max(v, acc)
	ADDQ(U32(32), x)
	SUBQ(U32(8), n)
	JMP(LabelRef("peak_loop"))
	Label("peak_done")
	hi := XMM()
	VEXTRACTF128(Imm(1), acc, hi)
	lo := acc.AsX()
	VMAXPS(hi, lo, lo)
	t := XMM()
	VMOVHLPS(lo, lo, t)
	VMAXPS(t, lo, lo)
	VMOVSHDUP(lo, t)
	VMAXSS(t, lo, lo)
	Store(lo, ReturnIndex(0))
	flag := GP32()
	VMOVMSKPS(nan, flag)
	TESTL(flag, flag)
	r := GP8()
	SETNE(r)
	Store(r, ReturnIndex(1))
	VZEROUPPER()
	RET()
}

package main

import (
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
	TEXT("sum4Rows32AVX2", NOSPLIT, "func(sums *[4]float32, rows *[4][]float32, n int)")
	Pragma("noescape")
	Doc("sum4Rows32AVX2 sets sums[k] to the sum of rows[k][:n], as a loop with four accumulators adds it.")
	sums, rows, n := GP64(), GP64(), GP64()
	Load(Param("sums"), sums)
	Load(Param("rows"), rows)
	Load(Param("n"), n)
	var p [4]GPVirtual
	var acc [4]VecVirtual
	for k := range p {
		p[k] = GP64()
		MOVQ(Mem{Base: rows, Disp: 24 * k}, p[k])
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

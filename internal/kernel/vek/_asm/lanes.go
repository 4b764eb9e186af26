package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// lanes emits the reductions in 8 lanes, sumLanes<t.name>AVX2 and
// devLanes<t.name>AVX2: lane k adds elements k, k+8, k+16, ... of the
// whole blocks of 8, in order, one IEEE instruction per step, as the
// scalar loops with 8 accumulators do, so their sums are the loops' bit
// for bit. The caller adds the last elements, fewer than 8.
func lanes(t dtype) {
	regs := 8 / t.lanes
	for _, dev := range []bool{false, true} {
		fn, sig, what := "sumLanes"+t.name+"AVX2", "func(acc *[8]%[1]s, x []%[1]s)", "x[i]"
		if dev {
			fn, sig, what = "devLanes"+t.name+"AVX2", "func(acc *[8]%[1]s, x, y []%[1]s, mx, my %[1]s)", "(x[i] - mx) * (y[i] - my)"
		}
		TEXT(fn, NOSPLIT, fmt.Sprintf(sig, t.goType))
		Pragma("noescape")
		Doc(fmt.Sprintf("%s adds %s to acc[i%%8] for each i of the whole blocks of 8 of x, in order.", fn, what))
		accp, x, n := GP64(), GP64(), GP64()
		Load(Param("acc"), accp)
		Load(Param("x").Base(), x)
		Load(Param("x").Len(), n)
		var y GPVirtual
		var mx, my VecVirtual
		if dev {
			y = GP64()
			Load(Param("y").Base(), y)
			mx, my = YMM(), YMM()
			for _, b := range []struct {
				name string
				r    VecVirtual
			}{{"mx", mx}, {"my", my}} {
				s := XMM()
				Load(Param(b.name), s)
				t.bcast(s, b.r)
			}
		}
		acc := make([]VecVirtual, regs)
		for r := range acc {
			acc[r] = YMM()
			t.load(Mem{Base: accp, Disp: 32 * r}, acc[r])
		}
		loop, done := fn+"_loop", fn+"_done"
		Label(loop)
		CMPQ(n, U32(8))
		JB(LabelRef(done))
		for r := range acc {
			if !dev {
				t.add(Mem{Base: x, Disp: 32 * r}, acc[r], acc[r])
				continue
			}
			a, b := YMM(), YMM()
			t.load(Mem{Base: x, Disp: 32 * r}, a)
			t.sub(mx, a, a)
			t.load(Mem{Base: y, Disp: 32 * r}, b)
			t.sub(my, b, b)
			t.mul(b, a, a)
			t.add(a, acc[r], acc[r])
		}
		ADDQ(U32(8*t.size), x)
		if dev {
			ADDQ(U32(8*t.size), y)
		}
		SUBQ(U32(8), n)
		JMP(LabelRef(loop))
		Label(done)
		for r := range acc {
			t.store(acc[r], Mem{Base: accp, Disp: 32 * r})
		}
		VZEROUPPER()
		RET()
	}
}

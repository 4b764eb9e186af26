// Command _asm generates the AVX-512 kernels of package conv:
//
//	cd internal/kernel/conv/_asm && go run . -out ../conv_amd64.s -stubs ../stubs_amd64.go -pkg conv
//
// Its own module keeps avo out of nabla's dependencies.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// dtype holds the instructions and sizes that differ between float32 and
// float64.
type dtype struct {
	name  string      // "F32", "F64"
	gotyp string      // "float32", "float64"
	size  int         // bytes per element
	lanes int         // elements per zmm register
	fma   func(...Op) // dst += broadcast(m)·src
	mov   func(...Op)
	movz  func(m, k, r Op) // masked load, zeroing the lanes left out
	max   func(...Op)
	cmp   func(...Op)
	// shuf and even, odd: the shuffle and its immediates that gather the
	// even and the odd elements of two registers, lane by lane of 128 bits
	shuf      func(...Op)
	even, odd uint8
}

var (
	f64 = dtype{"F64", "float64", 8, 8, VFMADD231PD_BCST, VMOVUPD, VMOVUPD_Z, VMAXPD, VCMPPD, VSHUFPD, 0x00, 0xff}
	f32 = dtype{"F32", "float32", 4, 16, VFMADD231PS_BCST, VMOVUPS, VMOVUPS_Z, VMAXPS, VCMPPS, VSHUFPS, 0x88, 0xdd}
)

// maxRows and vectors size the taps kernels' tiles: up to maxRows output
// rows of vectors zmm registers each (24 accumulators of the 32).
const (
	maxRows = 6
	vectors = 4
)

func main() {
	ConstraintExpr("amd64,!purego")
	for _, d := range []dtype{f64, f32} {
		for r := 1; r <= maxRows; r++ {
			taps(d, r)
		}
		copyRows(d)
		maxHalves(d)
	}
	Generate()
}

// taps generates the kernel of rows output rows: for r < rows and the
// block's vectors·lanes positions s whose bit of mask is set,
// y[r·ldy + s] = Σ_t w[t·rows + r]·x[s + off[t]], over n ≥ 1 taps, the
// taps in order, each an FMA.
func taps(d dtype, rows int) {
	name := fmt.Sprintf("taps%sR%d", d.name, rows)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(n int, x *%[1]s, off *int, w *%[1]s, y *%[1]s, ldy int, mask uint64)", d.gotyp))
	Doc(fmt.Sprintf("%s sets %d row(s) of a block of %d positions of y, those whose bits mask has, to their sums over n taps of x times w.", name, rows, vectors*d.lanes))
	n := Load(Param("n"), GP64())
	x := Load(Param("x"), GP64())
	off := Load(Param("off"), GP64())
	w := Load(Param("w"), GP64())
	m := GP64()
	Load(Param("mask"), m)
	var k [vectors]reg.OpmaskVirtual
	for v := range k {
		k[v] = K()
		KMOVW(m.As32(), k[v])
		if v < vectors-1 {
			SHRQ(U8(d.lanes), m)
		}
	}
	acc := make([][vectors]reg.VecVirtual, rows)
	for r := range acc {
		for v := range acc[r] {
			acc[r][v] = ZMM()
			VPXORD(acc[r][v], acc[r][v], acc[r][v])
		}
	}
	var xv [vectors]reg.VecVirtual
	for v := range xv {
		xv[v] = ZMM()
	}
	o, p := GP64(), GP64()
	Label(name + "_loop")
	MOVQ(Mem{Base: off}, o)
	LEAQ(Mem{Base: x, Index: o, Scale: uint8(d.size)}, p)
	for v := range xv {
		d.movz(Mem{Base: p, Disp: v * 64}, k[v], xv[v])
	}
	for r := range acc {
		for v := range acc[r] {
			d.fma(Mem{Base: w, Disp: r * d.size}, xv[v], acc[r][v])
		}
	}
	ADDQ(U8(8), off)
	ADDQ(U32(rows*d.size), w)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))

	y := Load(Param("y"), GP64())
	ldy := Load(Param("ldy"), GP64())
	SHLQ(U8(log2(d.size)), ldy)
	for r := range acc {
		for v := range acc[r] {
			d.mov(acc[r][v], k[v], Mem{Base: y, Disp: v * 64})
		}
		if r < rows-1 {
			ADDQ(ldy, y)
		}
	}
	VZEROUPPER()
	RET()
}

// copyRows generates the kernel that copies rows ≥ 1 rows of full
// vectors and one vector of the lanes in mask: row i of src, lds elements
// apart, to row i of dst, ldd apart.
func copyRows(d dtype) {
	name := "copyRows" + d.name
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst *%[1]s, ldd int, src *%[1]s, lds int, rows int, full int, mask uint64)", d.gotyp))
	Doc(fmt.Sprintf("%s copies rows rows of full vectors and the lanes of mask of one more, lds elements apart in src and ldd in dst.", name))
	dst := Load(Param("dst"), GP64())
	ldd := Load(Param("ldd"), GP64())
	src := Load(Param("src"), GP64())
	lds := Load(Param("lds"), GP64())
	rows := Load(Param("rows"), GP64())
	m := GP64()
	Load(Param("mask"), m)
	SHLQ(U8(log2(d.size)), ldd)
	SHLQ(U8(log2(d.size)), lds)
	k := K()
	KMOVW(m.As32(), k)
	t := ZMM()
	p, q, c := GP64(), GP64(), GP64()
	Label(name + "_row")
	MOVQ(src, p)
	MOVQ(dst, q)
	Load(Param("full"), c)
	Label(name + "_vec")
	TESTQ(c, c)
	JE(LabelRef(name + "_tail"))
	d.mov(Mem{Base: p}, t)
	d.mov(t, Mem{Base: q})
	ADDQ(U8(64), p)
	ADDQ(U8(64), q)
	DECQ(c)
	JMP(LabelRef(name + "_vec"))
	Label(name + "_tail")
	d.movz(Mem{Base: p}, k, t)
	d.mov(t, k, Mem{Base: q})
	ADDQ(lds, src)
	ADDQ(ldd, dst)
	DECQ(rows)
	JNZ(LabelRef(name + "_row"))
	VZEROUPPER()
	RET()
}

// maxHalves generates the 2×2 max pooling at stride 2 of rows pairs of
// input rows: output row i (ldd elements apart) from input rows src + i·lds
// and the one w elements below, full vectors and then one of the lanes of
// omask (the input lanes of imask); it reports whether an input it read
// is a NaN. Each window's result is the first maximum in reading order:
// the later of two taps is taken only where it is greater.
func maxHalves(d dtype) {
	name := "maxHalves" + d.name
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst *%[1]s, ldd int, src *%[1]s, lds int, w int, rows int, full int, imask uint64, omask uint64) (nan bool)", d.gotyp))
	Doc(fmt.Sprintf("%s sets dst's rows to the maxima of 2×2 windows at stride 2 of src's pairs of rows, and reports a NaN among the inputs read.", name))
	dst := Load(Param("dst"), GP64())
	ldd := Load(Param("ldd"), GP64())
	src := Load(Param("src"), GP64())
	lds := Load(Param("lds"), GP64())
	w := Load(Param("w"), GP64())
	rows := Load(Param("rows"), GP64())
	shift := U8(log2(d.size))
	SHLQ(shift, ldd)
	SHLQ(shift, lds)
	SHLQ(shift, w)
	m := GP64()
	Load(Param("imask"), m)
	ki0, ki1, ko := K(), K(), K()
	KMOVW(m.As32(), ki0)
	SHRQ(U8(d.lanes), m)
	KMOVW(m.As32(), ki1)
	Load(Param("omask"), m)
	KMOVW(m.As32(), ko)
	// idx puts the shuffles' quadwords back in order: 0 2 4 6 1 3 5 7.
	idx := ZMM()
	MOVQ(U64(0x0705030106040200), m)
	VMOVQ(m, idx.AsX())
	VPMOVZXBQ(idx.AsX(), idx)
	nan, kn := K(), K()
	KXORW(nan, nan, nan)
	a0, a1, b0, b1, e, o := ZMM(), ZMM(), ZMM(), ZMM(), ZMM(), ZMM()
	window := func(load func(m Mem, r reg.VecVirtual, half int), store func(r reg.VecVirtual, m Mem), p, q reg.GPVirtual) {
		load(Mem{Base: p}, a0, 0)
		load(Mem{Base: p, Disp: 64}, a1, 1)
		load(Mem{Base: p, Index: w, Scale: 1}, b0, 0)
		load(Mem{Base: p, Index: w, Scale: 1, Disp: 64}, b1, 1)
		for _, r := range []reg.VecVirtual{a0, a1, b0, b1} {
			d.cmp(U8(3), r, r, kn) // unordered: a NaN
			KORW(kn, nan, nan)
		}
		d.shuf(U8(d.even), a1, a0, e)
		d.shuf(U8(d.odd), a1, a0, o)
		d.max(e, o, a0) // the top row's: the odd tap where greater
		d.shuf(U8(d.even), b1, b0, e)
		d.shuf(U8(d.odd), b1, b0, o)
		d.max(e, o, b0)
		d.max(a0, b0, a0) // the bottom row's where greater
		VPERMQ(a0, idx, a0)
		store(a0, Mem{Base: q})
	}
	p, q, c := GP64(), GP64(), GP64()
	Label(name + "_row")
	MOVQ(src, p)
	MOVQ(dst, q)
	Load(Param("full"), c)
	Label(name + "_vec")
	TESTQ(c, c)
	JE(LabelRef(name + "_tail"))
	window(func(m Mem, r reg.VecVirtual, _ int) { d.mov(m, r) }, func(r reg.VecVirtual, m Mem) { d.mov(r, m) }, p, q)
	ADDQ(U8(128), p)
	ADDQ(U8(64), q)
	DECQ(c)
	JMP(LabelRef(name + "_vec"))
	Label(name + "_tail")
	window(func(m Mem, r reg.VecVirtual, half int) { d.movz(m, []reg.OpmaskVirtual{ki0, ki1}[half], r) },
		func(r reg.VecVirtual, m Mem) { d.mov(r, ko, m) }, p, q)
	ADDQ(lds, src)
	ADDQ(ldd, dst)
	DECQ(rows)
	JNZ(LabelRef(name + "_row"))
	KMOVW(nan, m.As32())
	TESTL(m.As32(), m.As32())
	SETNE(m.As8())
	Store(m.As8(), ReturnIndex(0))
	VZEROUPPER()
	RET()
}

func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

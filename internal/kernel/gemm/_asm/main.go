// Command _asm generates the AVX2 and AVX-512 kernels of package gemm:
//
//	cd internal/kernel/gemm/_asm && go run . -out ../kernel_amd64.s -stubs ../kernel_amd64_stubs.go -pkg gemm
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
	name  string // "F32", "F64"
	gotyp string // "float32", "float64"
	size  int    // bytes per element
	lanes int    // elements per ymm register
	bcast func(...Op)
	fma   func(...Op) // packed: dst += a·b
	fmas  func(...Op) // scalar
	add   func(...Op)
	adds  func(...Op)
	mov   func(...Op)
	movz  func(m, k, r Op) // masked load, zeroing the lanes left out
	movs  func(...Op)
	xor   func(...Op)
}

var (
	f64 = dtype{"F64", "float64", 8, 4, VBROADCASTSD, VFMADD231PD, VFMADD231SD, VADDPD, VADDSD, VMOVUPD, VMOVUPD_Z, VMOVSD, VXORPD}
	f32 = dtype{"F32", "float32", 4, 8, VBROADCASTSS, VFMADD231PS, VFMADD231SS, VADDPS, VADDSS, VMOVUPS, VMOVUPS_Z, VMOVSS, VXORPS}
)

// avx512Tiles are the AVX-512 micro-kernels' tiles: mr rows of nv zmm
// registers, 24 accumulators. Measured on an Ice Lake server core, six
// rows of four registers beat 12×2, 8×3, 9×3, 10×2, 14×2 and 7×3: fewest
// loads per FMA but for 8×3, and widths (32 float64, 64 float32) that
// powers of two fill.
var avx512Tiles = map[string]struct{ mr, nv int }{
	"F64": {6, 4},
	"F32": {6, 4},
}

func main() {
	ConstraintExpr("amd64,!purego")
	for _, d := range []dtype{f64, f32} {
		micro(avx2, d, 6, 2, false, false)
		micro(avx2, d, 6, 2, true, false)
		micro(avx2, d, 6, 2, true, true)
		microDirectT(avx2, d, 6, 2)
		dot(d)
		axpy(d)
		dots4(d)
		axpy4(d)
		dotTile(avx2, d)
		for m := 2; m <= 4; m++ {
			fewRows(d, m)
		}
	}
	for _, d := range []dtype{f64, f32} {
		t := avx512Tiles[d.name]
		micro(avx512, d, t.mr, t.nv, false, false)
		micro(avx512, d, t.mr, t.nv, true, false)
		micro(avx512, d, t.mr, t.nv, true, true)
		microDirectT(avx512, d, t.mr, t.nv)
		dotTile(avx512, d)
	}
	// The narrow float32 tiles, 8 rows of one zmm register.
	micro(avx512Narrow, f32, 8, 1, false, false)
	micro(avx512Narrow, f32, 8, 1, true, false)
	micro(avx512Narrow, f32, 8, 1, true, true)
	microDirectT(avx512Narrow, f32, 8, 1)
	Generate()
}

// isa is the vector registers a micro-kernel runs on: AVX2's sixteen ymm
// or AVX-512's thirty-two zmm.
type isa struct {
	name  string // the kernels' suffix: "AVX2", "AVX512"
	bytes int    // per register
	vec   func() reg.VecVirtual
	zero  func(d dtype, r reg.VecVirtual) // sets r to 0.0 in every lane
}

var (
	avx2   = isa{"AVX2", 32, YMM, func(d dtype, r reg.VecVirtual) { d.xor(r, r, r) }}
	avx512 = isa{"AVX512", 64, ZMM, func(_ dtype, r reg.VecVirtual) { VPXORQ(r, r, r) }}
	// avx512Narrow is avx512 for the tiles of products with at most 16
	// float32 columns (attention's per-head products): one register a
	// row, eight rows, so eight independent chains of FMAs, as many as
	// two FMA units of latency 4 keep busy. Each element of C is still
	// the FMAs of the wide tiles in the same order (the same bits).
	avx512Narrow = isa{"AVX512Narrow", 64, ZMM, avx512.zero}
)

// micro generates the register-blocked kernel C (+)= A·B for an mr×(nv·lanes)
// tile on the registers of v: A a packed panel of k columns of mr values,
// B a packed panel of k rows of nv·lanes values, C row-major with ldc
// elements between rows. acc false overwrites C, true adds to it. mr·nv
// accumulators, nv registers of B and one broadcast of A must fit the
// registers of v.
//
// With strided set, B is read where it is stored, rows ldb elements apart,
// rather than from a packed panel: for products whose A has so few rows
// that packing B would cost as much as the arithmetic. With direct set
// too, so is A, rows lda elements apart: small products then pack
// nothing.
func micro(v isa, d dtype, mr, nv int, strided, direct bool) {
	microKernel(v, d, mr, nv, strided, direct, false)
}

// microDirectT generates the kernel of micro with strided and direct set
// for a transposed A, stored k×m: depth l's mr values are contiguous, at
// a + l·lda, as in a packed panel whose depths are lda rather than mr
// elements apart. The FMAs are micro's, in the same order.
func microDirectT(v isa, d dtype, mr, nv int) { microKernel(v, d, mr, nv, true, true, true) }

func microKernel(v isa, d dtype, mr, nv int, strided, direct, transA bool) {
	lanes := v.bytes / d.size
	nr := nv * lanes
	name := fmt.Sprintf("micro%s%s", d.name, v.name)
	sig := fmt.Sprintf("func(k int, a, b, c *%s, ldc int, acc bool)", d.gotyp)
	doc := fmt.Sprintf("%s computes C (+)= A·B for a %d×%d tile of C.", name, mr, nr)
	if strided {
		name = fmt.Sprintf("microStrided%s%s", d.name, v.name)
		sig = fmt.Sprintf("func(k int, a, b *%s, ldb int, c *%s, ldc int, acc bool)", d.gotyp, d.gotyp)
		doc = fmt.Sprintf("%s computes C (+)= A·B for a %d×%d tile of C, B's rows ldb elements apart.", name, mr, nr)
	}
	if direct {
		name = fmt.Sprintf("microDirect%s%s", d.name, v.name)
		sig = fmt.Sprintf("func(k int, a *%s, lda int, b *%s, ldb int, c *%s, ldc int, acc bool)", d.gotyp, d.gotyp, d.gotyp)
		doc = fmt.Sprintf("%s computes C (+)= A·B for a %d×%d tile of C, A's rows lda elements apart and B's ldb.", name, mr, nr)
	}
	if transA {
		name = fmt.Sprintf("microDirectT%s%s", d.name, v.name)
		doc = fmt.Sprintf("%s computes C (+)= A·B for a %d×%d tile of C, A stored transposed (depths lda elements apart) and B's rows ldb elements apart.", name, mr, nr)
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(doc)
	k := Load(Param("k"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	var ldb reg.GPVirtual
	if strided {
		ldb = GP64()
		Load(Param("ldb"), ldb)
		SHLQ(Imm(uint64(log2(d.size))), ldb)
	}
	// Read in place, row i of A is at bases[i/3] + (i%3)·lda.
	var lda reg.GPVirtual
	var bases []reg.Register
	if direct {
		lda = GP64()
		Load(Param("lda"), lda)
		SHLQ(Imm(uint64(log2(d.size))), lda)
	}
	if direct && !transA {
		bases = []reg.Register{a}
		for g := 1; g < (mr+2)/3; g++ {
			next := GP64()
			LEAQ(Mem{Base: bases[g-1], Index: lda, Scale: 2}, next)
			ADDQ(lda, next)
			bases = append(bases, next)
		}
	}
	aAt := func(u, i int) Mem {
		if transA { // a is moved on by lda after each depth
			return Mem{Base: a, Disp: i * d.size}
		}
		if !direct {
			return Mem{Base: a, Disp: u*mr*d.size + i*d.size}
		}
		m := Mem{Base: bases[i/3], Disp: u * d.size}
		if i%3 > 0 {
			m.Index, m.Scale = lda, uint8(i%3)
		}
		return m
	}
	advanceA := func(steps int) {
		if transA {
			return
		}
		if !direct {
			ADDQ(U32(steps*mr*d.size), a)
			return
		}
		for _, r := range bases {
			ADDQ(U32(steps*d.size), r)
		}
	}

	// Fetch the tile of C while the loop runs: its rows are far apart
	// and, in a large product, far from cache. Wide rows take several
	// lines each: asking for them all at once would hold up the loads of
	// A behind them, so the AVX-512 kernels ask for one row per pass of
	// the unrolled loop, counting the rows down in left.
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(Imm(uint64(log2(d.size))), ldc)
	row := GP64()
	MOVQ(c, row)
	fetchRow := func() {
		for off := 0; off < nr*d.size; off += 64 {
			PREFETCHT0(Mem{Base: row, Disp: off})
		}
		PREFETCHT0(Mem{Base: row, Disp: nr*d.size - 1})
	}
	spread := v.bytes > 32
	var left reg.GPVirtual
	if spread {
		left = GP64()
		MOVQ(U32(mr), left)
	} else {
		for i := range mr {
			fetchRow()
			if i < mr-1 {
				ADDQ(ldc, row)
			}
		}
	}

	accs := make([][]reg.VecVirtual, mr)
	for i := range accs {
		accs[i] = make([]reg.VecVirtual, nv)
		for j := range accs[i] {
			accs[i][j] = v.vec()
			v.zero(d, accs[i][j])
		}
	}
	bs := make([]reg.VecVirtual, nv)
	for j := range bs {
		bs[j] = v.vec()
	}
	av := v.vec()
	astep, bstep := mr*d.size, nr*d.size
	body := func(u int) {
		for j := range bs {
			if strided {
				d.mov(Mem{Base: b, Disp: j * v.bytes}, bs[j])
			} else {
				d.mov(Mem{Base: b, Disp: u*bstep + j*v.bytes}, bs[j])
			}
		}
		for i := range mr {
			d.bcast(aAt(u, i), av)
			for j := range bs {
				d.fma(bs[j], av, accs[i][j])
			}
		}
		if strided {
			ADDQ(ldb, b)
		}
		if transA {
			ADDQ(lda, a)
		}
	}
	const unroll = 4
	Label(name + "_loop4")
	CMPQ(k, Imm(unroll))
	JL(LabelRef(name + "_loop1"))
	// The panel of A streams from the outer cache: ask for it a few
	// iterations ahead, a line at a time.
	for off := 0; off < unroll*astep && !direct; off += 64 {
		if off == 0 || v.bytes > 32 {
			PREFETCHT0(Mem{Base: a, Disp: 2*unroll*astep + off})
		}
	}
	if spread {
		TESTQ(left, left)
		JE(LabelRef(name + "_fetched"))
		fetchRow()
		ADDQ(ldc, row)
		DECQ(left)
		Label(name + "_fetched")
	}
	for u := range unroll {
		body(u)
	}
	advanceA(unroll)
	if !strided {
		ADDQ(U32(unroll*bstep), b)
	}
	SUBQ(Imm(unroll), k)
	JMP(LabelRef(name + "_loop4"))
	Label(name + "_loop1")
	TESTQ(k, k)
	JE(LabelRef(name + "_store"))
	body(0)
	advanceA(1)
	if !strided {
		ADDQ(U32(bstep), b)
	}
	DECQ(k)
	JMP(LabelRef(name + "_loop1"))

	Label(name + "_store")
	accFlag := Load(Param("acc"), GP8())
	TESTB(accFlag, accFlag)
	JE(LabelRef(name + "_overwrite"))
	MOVQ(c, row)
	for i := range mr {
		for j := range nv {
			d.add(Mem{Base: row, Disp: j * v.bytes}, accs[i][j], accs[i][j])
			d.mov(accs[i][j], Mem{Base: row, Disp: j * v.bytes})
		}
		if i < mr-1 {
			ADDQ(ldc, row)
		}
	}
	VZEROUPPER()
	RET()
	Label(name + "_overwrite")
	for i := range mr {
		for j := range nv {
			d.mov(accs[i][j], Mem{Base: c, Disp: j * v.bytes})
		}
		if i < mr-1 {
			ADDQ(ldc, c)
		}
	}
	VZEROUPPER()
	RET()
}

// vectorText begins the routine name of signature sig over n elements
// of x and y (and perhaps more), documented as "name doc", and loads n,
// x and y.
func vectorText(name, sig, doc string) (n, x, y reg.Register) {
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(name + " " + doc)
	n = Load(Param("n"), GP64())
	x = Load(Param("x"), GP64())
	y = Load(Param("y"), GP64())
	return n, x, y
}

// dot generates x·y over n elements with four vector accumulators.
func dot(d dtype) {
	name := fmt.Sprintf("dot%sAVX2", d.name)
	n, x, y := vectorText(name, fmt.Sprintf("func(n int, x, y *%s) %s", d.gotyp, d.gotyp),
		"returns the dot product of x[:n] and y[:n].")
	acc := []reg.VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for _, r := range acc {
		d.xor(r, r, r)
	}
	t := []reg.VecVirtual{YMM(), YMM(), YMM(), YMM()}
	step := 4 * d.lanes
	stream(name, "_loop16", "_loop4", n, step, d.size, []reg.Register{x, y}, func() {
		for u := range 4 {
			d.mov(Mem{Base: x, Disp: u * 32}, t[u])
			d.fma(Mem{Base: y, Disp: u * 32}, t[u], acc[u])
		}
	})
	stream(name, "_loop4", "_reduce", n, d.lanes, d.size, []reg.Register{x, y}, func() {
		d.mov(Mem{Base: x}, t[0])
		d.fma(Mem{Base: y}, t[0], acc[0])
	})
	Label(name + "_reduce")
	d.add(acc[1], acc[0], acc[0])
	d.add(acc[3], acc[2], acc[2])
	d.add(acc[2], acc[0], acc[0])
	hsum(d, acc[0], t[0])
	lo, hi := acc[0].AsX(), t[0].AsX()
	stream(name, "_tail", "_done", n, 1, d.size, []reg.Register{x, y}, func() {
		d.movs(Mem{Base: x}, hi)
		d.fmas(Mem{Base: y}, hi, lo)
	})
	Label(name + "_done")
	Store(lo, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// axpy generates y[:n] += alpha·x[:n].
func axpy(d dtype) {
	name := fmt.Sprintf("axpy%sAVX2", d.name)
	n, x, y := vectorText(name, fmt.Sprintf("func(n int, alpha %s, x, y *%s)", d.gotyp, d.gotyp),
		"adds alpha·x[:n] to y[:n].")
	al := YMM()
	d.bcast(Load(Param("alpha"), XMM()), al)
	t := []reg.VecVirtual{YMM(), YMM(), YMM(), YMM()}
	step := 4 * d.lanes
	stream(name, "_loop16", "_loop4", n, step, d.size, []reg.Register{x, y}, func() {
		for u := range 4 {
			d.mov(Mem{Base: y, Disp: u * 32}, t[u])
			d.fma(Mem{Base: x, Disp: u * 32}, al, t[u])
			d.mov(t[u], Mem{Base: y, Disp: u * 32})
		}
	})
	stream(name, "_loop4", "_tail", n, d.lanes, d.size, []reg.Register{x, y}, func() {
		d.mov(Mem{Base: y}, t[0])
		d.fma(Mem{Base: x}, al, t[0])
		d.mov(t[0], Mem{Base: y})
	})
	s := t[1].AsX()
	stream(name, "_tail", "_done", n, 1, d.size, []reg.Register{x, y}, func() {
		d.movs(Mem{Base: y}, s)
		d.fmas(Mem{Base: x}, al.AsX(), s)
		d.movs(s, Mem{Base: y})
	})
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// rows4 loads four row pointers a, a+lda, a+2·lda, a+3·lda (lda in
// elements).
func rows4(d dtype) []reg.GPVirtual {
	rows := []reg.GPVirtual{GP64(), GP64(), GP64(), GP64()}
	Load(Param("a"), rows[0])
	lda := Load(Param("lda"), GP64())
	SHLQ(Imm(uint64(log2(d.size))), lda)
	for r := 1; r < 4; r++ {
		MOVQ(rows[r-1], rows[r])
		ADDQ(lda, rows[r])
	}
	return rows
}

// dots4 generates four dot products that share x: y[r·ldy] (+)= A[r,:n]·x[:n]
// for the rows r < 4 of A, lda elements apart. n must be a multiple of the
// vector width; the caller adds the rest.
func dots4(d dtype) {
	name := fmt.Sprintf("dots4%sAVX2", d.name)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(n int, a *%s, lda int, x, y *%s, ldy int, acc bool)", d.gotyp, d.gotyp))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets (acc: adds to) y[r·ldy] the dot product of row r of a (lda elements apart) with x, for r < 4, over n elements, a multiple of %d.", name, d.lanes))
	n := Load(Param("n"), GP64())
	x := Load(Param("x"), GP64())
	rows := rows4(d)
	acc := make([]reg.VecVirtual, 8)
	for i := range acc {
		acc[i] = YMM()
		d.xor(acc[i], acc[i], acc[i])
	}
	xv := []reg.VecVirtual{YMM(), YMM()}
	loop2(d, name, "_reduce", n, func(u int, at func(reg.Register) Mem) {
		d.mov(at(x), xv[u])
		for r := range 4 {
			d.fma(at(rows[r]), xv[u], acc[2*r+u])
		}
	})
	y := Load(Param("y"), GP64())
	ldy := Load(Param("ldy"), GP64())
	SHLQ(Imm(uint64(log2(d.size))), ldy)
	accFlag := Load(Param("acc"), GP8())
	for r := range 4 {
		s, t := acc[2*r], xv[0]
		d.add(acc[2*r+1], s, s)
		hsum(d, s, t)
		skip := fmt.Sprintf("%s_set%d", name, r)
		TESTB(accFlag, accFlag)
		JE(LabelRef(skip))
		d.adds(Mem{Base: y}, s.AsX(), s.AsX())
		Label(skip)
		d.movs(s.AsX(), Mem{Base: y})
		if r < 3 {
			ADDQ(ldy, y)
		}
	}
	VZEROUPPER()
	RET()
}

// loop2 emits name's loop over n elements (a multiple of the vector
// width) at a byte offset off, a new register from 0: body(u, at) for
// the vectors u = 0 and 1 of each step of two while two remain, then
// body(0, at) for the last one; at(base) is the vector's address from
// base. The label name+end follows.
func loop2(d dtype, name, end string, n reg.Register, body func(u int, at func(reg.Register) Mem)) {
	off := GP64()
	XORQ(off, off)
	step := 2 * d.lanes
	Label(name + "_loop2")
	CMPQ(n, U32(step))
	JL(LabelRef(name + "_loop1"))
	for u := range 2 {
		body(u, func(base reg.Register) Mem { return Mem{Base: base, Index: off, Scale: 1, Disp: u * 32} })
	}
	ADDQ(U32(step*d.size), off)
	SUBQ(U32(step), n)
	JMP(LabelRef(name + "_loop2"))
	Label(name + "_loop1")
	TESTQ(n, n)
	JE(LabelRef(name + end))
	body(0, func(base reg.Register) Mem { return Mem{Base: base, Index: off, Scale: 1} })
	Label(name + end)
}

// hsum leaves the sum of s's lanes in its lowest lane, using t.
func hsum(d dtype, s, t reg.VecVirtual) {
	lo, hi := s.AsX(), t.AsX()
	VEXTRACTF128(Imm(1), s.AsY(), hi)
	if d.size == 8 {
		VADDPD(hi, lo, lo)
		VPERMILPD(Imm(1), lo, hi)
		VADDSD(hi, lo, lo)
		return
	}
	VADDPS(hi, lo, lo)
	VMOVHLPS(lo, lo, hi)
	VADDPS(hi, lo, lo)
	VMOVSHDUP(lo, hi)
	VADDSS(hi, lo, lo)
}

// axpy4 generates y[:n] += Σ_r x[r]·A[r,:n] over four rows of A, lda
// elements apart, loading and storing y once. n must be a multiple of the
// vector width; the caller does the rest.
func axpy4(d dtype) {
	name := fmt.Sprintf("axpy4%sAVX2", d.name)
	n, xp, y := vectorText(name, fmt.Sprintf("func(n int, x, a *%s, lda int, y *%s)", d.gotyp, d.gotyp),
		fmt.Sprintf("adds x[r]·(row r of a, lda elements apart) to y for r < 4, over n elements, a multiple of %d.", d.lanes))
	rows := rows4(d)
	xs := make([]reg.VecVirtual, 4)
	for r := range xs {
		xs[r] = YMM()
		d.bcast(Mem{Base: xp, Disp: r * d.size}, xs[r])
	}
	t := []reg.VecVirtual{YMM(), YMM()}
	loop2(d, name, "_done", n, func(u int, at func(reg.Register) Mem) {
		d.mov(at(y), t[u])
		for r := range 4 {
			d.fma(at(rows[r]), xs[r], t[u])
		}
		d.mov(t[u], at(y))
	})
	VZEROUPPER()
	RET()
}

// dotTile generates the 3×4 tile of C = A·Bᵀ whose entries are the dot
// products of three rows of A (lda apart) with four rows of B (ldb apart)
// over k elements, a multiple of the vector width; the caller adds the
// rest. acc adds the tile to C instead of setting it. Products with B
// transposed need no packing this way: both operands run along k.
//
// On zmm registers the loop takes twice AVX2's lanes at a time, and a last
// half register, where k leaves one, is loaded under a mask that zeroes
// the upper lanes.
func dotTile(v isa, d dtype) {
	name := fmt.Sprintf("dotTile%s%s", d.name, v.name)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a *%s, lda int, b *%s, ldb int, c *%s, ldc int, acc bool)", d.gotyp, d.gotyp, d.gotyp))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets (acc: adds to) C[r·ldc+j] the dot product of row r of a and row j of b over k elements, a multiple of %d, for r < 3 and j < 4.", name, d.lanes))
	lanes := v.bytes / d.size
	shift := uint64(log2(d.size))
	rowsOf := func(param, ld string, n int) []reg.GPVirtual {
		rows := make([]reg.GPVirtual, n)
		rows[0] = GP64()
		Load(Param(param), rows[0])
		stride := Load(Param(ld), GP64())
		SHLQ(Imm(shift), stride)
		for r := 1; r < n; r++ {
			rows[r] = GP64()
			MOVQ(rows[r-1], rows[r])
			ADDQ(stride, rows[r])
		}
		return rows
	}
	as, bs := rowsOf("a", "lda", 3), rowsOf("b", "ldb", 4)
	k := Load(Param("k"), GP64())
	acc := make([][]reg.VecVirtual, 3)
	for r := range acc {
		acc[r] = make([]reg.VecVirtual, 4)
		for j := range acc[r] {
			acc[r][j] = v.vec()
			v.zero(d, acc[r][j])
		}
	}
	av := []reg.VecVirtual{v.vec(), v.vec(), v.vec()}
	bv := v.vec()
	off := GP64()
	XORQ(off, off)
	// body multiplies one register's worth of the rows; load loads a
	// register (under a mask in the last half step).
	body := func(load func(m Mem, r reg.VecVirtual)) {
		for r := range av {
			load(Mem{Base: as[r], Index: off, Scale: 1}, av[r])
		}
		for j := range bs {
			load(Mem{Base: bs[j], Index: off, Scale: 1}, bv)
			for r := range av {
				d.fma(bv, av[r], acc[r][j])
			}
		}
	}
	full := func(m Mem, r reg.VecVirtual) { d.mov(m, r) }
	Label(name + "_loop")
	if lanes == d.lanes {
		TESTQ(k, k)
		JE(LabelRef(name + "_reduce"))
	} else {
		CMPQ(k, U32(lanes))
		JL(LabelRef(name + "_half"))
	}
	body(full)
	ADDQ(U32(v.bytes), off)
	SUBQ(U32(lanes), k)
	JMP(LabelRef(name + "_loop"))
	if lanes != d.lanes {
		Label(name + "_half")
		TESTQ(k, k)
		JE(LabelRef(name + "_reduce"))
		bits, mask := GP32(), K()
		MOVL(U32(1<<d.lanes-1), bits)
		KMOVW(bits, mask)
		body(func(m Mem, r reg.VecVirtual) { d.movz(m, mask, r) })
	}
	Label(name + "_reduce")
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(Imm(shift), ldc)
	flag := Load(Param("acc"), GP8())
	for r := range acc {
		for j := range acc[r] {
			s := acc[r][j]
			if lanes != d.lanes { // fold the upper half onto the lower
				VEXTRACTF64X4(Imm(1), s, av[0].AsY())
				d.add(av[0].AsY(), s.AsY(), s.AsY())
			}
			hsum(d, s, av[0])
			skip := fmt.Sprintf("%s_set%d%d", name, r, j)
			TESTB(flag, flag)
			JE(LabelRef(skip))
			d.adds(Mem{Base: c, Disp: j * d.size}, s.AsX(), s.AsX())
			Label(skip)
			d.movs(s.AsX(), Mem{Base: c, Disp: j * d.size})
		}
		if r < 2 {
			ADDQ(ldc, c)
		}
	}
	VZEROUPPER()
	RET()
}

// fewRowsWidth is the column block of fewRows with m rows, in ymm
// registers: m·w accumulators, w rows of B and a broadcast fit in 16.
var fewRowsWidth = map[int]int{2: 4, 3: 3, 4: 3}

// fewRows generates the product of m rows of A, each k long and each at
// its own address, by one k×n matrix B read once for all of them: c_r
// (+)= a_r·B for r < m. A block of w registers' columns of the m rows of
// C stays in registers while the depth runs, each row of B loaded once
// and multiplied by every row's broadcast element, so every element is
// one chain of fused multiply–adds in the order of the depth, as axpy4's.
// n must be a multiple of the vector width; the caller adds the rest.
func fewRows(d dtype, m int) {
	name := fmt.Sprintf("fewRows%d%sAVX2", m, d.name)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(n, k int, a0, a1, a2, a3, b *%s, ldb int, c0, c1, c2, c3 *%s, acc bool)", d.gotyp, d.gotyp))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets (acc: adds to) c_r[:n] the product a_r[:k]·B for r < %d (the other rows' pointers are not read), B k×n with rows ldb elements apart, n a multiple of %d, k at least 1.", name, m, d.lanes))
	n := Load(Param("n"), GP64())
	ldb := Load(Param("ldb"), GP64())
	SHLQ(Imm(uint64(log2(d.size))), ldb)
	rows := make([]reg.GPVirtual, m)
	for r := range rows {
		rows[r] = GP64()
		Load(Param(fmt.Sprintf("a%d", r)), rows[r])
	}
	j := GP64() // the block's first column, in bytes
	XORQ(j, j)
	widths := []int{fewRowsWidth[m], 1}
	for wi, w := range widths {
		label := fmt.Sprintf("%s_w%d", name, w)
		next := name + "_done"
		if wi+1 < len(widths) {
			next = fmt.Sprintf("%s_w%d", name, widths[wi+1])
		}
		Label(label)
		CMPQ(n, U32(w*d.lanes))
		JL(LabelRef(next))
		accs := make([][]reg.VecVirtual, m)
		for r := range accs {
			accs[r] = make([]reg.VecVirtual, w)
			for v := range accs[r] {
				accs[r][v] = YMM()
				d.xor(accs[r][v], accs[r][v], accs[r][v])
			}
		}
		flag := Load(Param("acc"), GP8())
		TESTB(flag, flag)
		JE(LabelRef(label + "_zero"))
		for r := range accs {
			cr := Load(Param(fmt.Sprintf("c%d", r)), GP64())
			for v := range accs[r] {
				d.mov(Mem{Base: cr, Index: j, Scale: 1, Disp: v * 32}, accs[r][v])
			}
		}
		Label(label + "_zero")
		pb := Load(Param("b"), GP64())
		ADDQ(j, pb)
		off := GP64()
		XORQ(off, off)
		kk := Load(Param("k"), GP64())
		bv := make([]reg.VecVirtual, w)
		for v := range bv {
			bv[v] = YMM()
		}
		t := YMM()
		Label(label + "_depth")
		for v := range bv {
			d.mov(Mem{Base: pb, Disp: v * 32}, bv[v])
		}
		for r := range accs {
			d.bcast(Mem{Base: rows[r], Index: off, Scale: 1}, t)
			for v := range accs[r] {
				d.fma(bv[v], t, accs[r][v])
			}
		}
		ADDQ(ldb, pb)
		ADDQ(U32(d.size), off)
		DECQ(kk)
		JNZ(LabelRef(label + "_depth"))
		for r := range accs {
			cr := Load(Param(fmt.Sprintf("c%d", r)), GP64())
			for v := range accs[r] {
				d.mov(accs[r][v], Mem{Base: cr, Index: j, Scale: 1, Disp: v * 32})
			}
		}
		ADDQ(U32(w*32), j)
		SUBQ(U32(w*d.lanes), n)
		JMP(LabelRef(label))
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// stream generates the loop at label that runs body while n holds at
// least step elements, then advances each pointer by step elements of
// size bytes and counts them off n; it goes on at next.
func stream(name, label, next string, n reg.Register, step, size int, ptrs []reg.Register, body func()) {
	Label(name + label)
	if step == 1 {
		TESTQ(n, n)
		JE(LabelRef(name + next))
	} else {
		CMPQ(n, U32(step))
		JL(LabelRef(name + next))
	}
	body()
	for _, p := range ptrs {
		ADDQ(U32(step*size), p)
	}
	if step == 1 {
		DECQ(n)
	} else {
		SUBQ(U32(step), n)
	}
	JMP(LabelRef(name + label))
}

func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

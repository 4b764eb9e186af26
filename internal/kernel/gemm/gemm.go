package gemm

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/nabla-go/nabla/internal/kernel/parallel"
)

// Float is the element types Mul accepts.
type Float interface{ ~float32 | ~float64 }

// Product describes one matrix product on row-major storage: C, m×n with
// Ldc elements between rows, is set to op(A)·op(B) or, with Acc, has it
// added. A is stored m×k (k×m when TransA) with Lda elements between
// stored rows, B k×n (n×k when TransB) with Ldb.
type Product struct {
	TransA, TransB bool
	Acc            bool
	M, N, K        int
	Lda, Ldb, Ldc  int
}

// Mul computes the product p on the backing slices a, b and c, using e's
// threads and keeping its packing buffers in e's state (a nil e runs
// serially, on buffers shared through a sync.Pool). It panics if a slice is too short for p:
// that is a bug in the caller, not a user's mistake.
func Mul[T Float](e *parallel.Exec, p Product, a, b, c []T) {
	if err := p.check(len(a), len(b), len(c)); err != nil {
		panic(err)
	}
	var z T
	if unsafe.Sizeof(z) == 4 {
		mul(e, p, conv[T, float32](a), conv[T, float32](b), conv[T, float32](c))
		return
	}
	mul(e, p, conv[T, float64](a), conv[T, float64](b), conv[T, float64](c))
}

// MulBatch computes batch products p one after another, product i on
// a[i·strideA:], b[i·strideB:] and c[i·strideC:] (a stride of 0 shares an
// operand), with what Mul sets up for a product (its checks, the choice
// of kernels, the driver and its buffers) done once: small products,
// such as attention's per head, spend a good part of their time there.
// Each product is computed as Mul computes it, so the bits are the same.
// It panics if a slice is too short for its last product or a stride is
// negative: that is a bug in the caller.
func MulBatch[T Float](e *parallel.Exec, p Product, batch, strideA, strideB, strideC int, a, b, c []T) {
	if batch <= 0 {
		return
	}
	if strideA < 0 || strideB < 0 || strideC < 0 {
		panic(fmt.Errorf("gemm: negative stride %d, %d, %d", strideA, strideB, strideC))
	}
	last := batch - 1
	if err := p.check(len(a)-last*strideA, len(b)-last*strideB, len(c)-last*strideC); err != nil {
		panic(fmt.Errorf("%w (product %d of %d)", err, last, batch))
	}
	s := batchStrides{batch, strideA, strideB, strideC}
	var z T
	if unsafe.Sizeof(z) == 4 {
		mulBatch(e, p, s, conv[T, float32](a), conv[T, float32](b), conv[T, float32](c))
		return
	}
	mulBatch(e, p, s, conv[T, float64](a), conv[T, float64](b), conv[T, float64](c))
}

// batchStrides is how many products a batch holds and how far apart
// their operands are.
type batchStrides struct{ n, a, b, c int }

// conv views a []T as []E for types of the same size.
func conv[T Float, E elem](x []T) []E {
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

// check reports whether slices of these lengths hold the operands of p.
func (p Product) check(la, lb, lc int) error {
	if p.M < 0 || p.N < 0 || p.K < 0 {
		return fmt.Errorf("gemm: negative size %d×%d×%d", p.M, p.N, p.K)
	}
	ar, ac := p.M, p.K
	if p.TransA {
		ar, ac = ac, ar
	}
	br, bc := p.K, p.N
	if p.TransB {
		br, bc = bc, br
	}
	for _, o := range [...]struct {
		name           string
		rows, cols, ld int
		have           int
	}{{"A", ar, ac, p.Lda, la}, {"B", br, bc, p.Ldb, lb}, {"C", p.M, p.N, p.Ldc, lc}} {
		if o.rows == 0 || o.cols == 0 {
			continue
		}
		if o.ld < o.cols {
			return fmt.Errorf("gemm: %s is %d×%d with leading dimension %d", o.name, o.rows, o.cols, o.ld)
		}
		if need := (o.rows-1)*o.ld + o.cols; o.have < need {
			return fmt.Errorf("gemm: %s is %d×%d (leading dimension %d) but has %d elements", o.name, o.rows, o.cols, o.ld, o.have)
		}
	}
	return nil
}

// parallelMin is the product size m·n·k below which a product runs on one
// thread: smaller ones finish in about the time it takes to wake a worker.
const parallelMin = 96 * 96 * 96

func mul[E elem](e *parallel.Exec, p Product, a, b, c []E) {
	mulBatch(e, p, batchStrides{n: 1}, a, b, c)
}

// mulBatch computes the batch s of products p (see MulBatch), the
// operands checked.
func mulBatch[E elem](e *parallel.Exec, p Product, s batchStrides, a, b, c []E) {
	if p.M == 0 || p.N == 0 {
		return
	}
	if p.K == 0 {
		if !p.Acc {
			for i := range s.n {
				for r := range p.M {
					clear(c[i*s.c+r*p.Ldc : i*s.c+r*p.Ldc+p.N])
				}
			}
		}
		return
	}
	k := kernelFor[E]()
	if gemv(k, p, a, b, c) { // then every product of the batch is one
		for i := 1; i < s.n; i++ {
			gemv(k, p, a[i*s.a:], b[i*s.b:], c[i*s.c:])
		}
		return
	}
	if useDots(p) {
		for i := range s.n {
			mulDots(e, k, p, a[i*s.a:], b[i*s.b:], c[i*s.c:])
		}
		return
	}
	k = tilesFor[E](p)
	if e == nil {
		// Serial callers (constant folding, gradcheck, an op's Forward)
		// share drivers through a pool, so they allocate nothing either.
		pool := serialPool[E]()
		d, _ := pool.Get().(*driver[E])
		if d == nil {
			d = new(driver[E])
		}
		for i := range s.n {
			d.run(nil, k, 1, p, a[i*s.a:], b[i*s.b:], c[i*s.c:])
		}
		pool.Put(d)
		return
	}
	d := e.State(driverKey[E]{}, func() any { return new(driver[E]) }).(*driver[E])
	threads := 1
	if p.M*p.N*p.K >= parallelMin {
		threads = e.Threads()
	}
	for i := range s.n {
		d.run(e, k, threads, p, a[i*s.a:], b[i*s.b:], c[i*s.c:])
	}
}

var serialPools [2]sync.Pool

func serialPool[E elem]() *sync.Pool {
	var z E
	return &serialPools[unsafe.Sizeof(z)/8]
}

// driverKey keys a machine's driver (and so its buffers) for one element
// type.
type driverKey[E elem] struct{}

// driver runs products block by block. It is a parallel.Task: Do runs the
// current phase's share of the current block for one thread.
type driver[E elem] struct {
	k       *kernel[E]
	p       Product
	a, b, c []E
	threads int

	// The current block: columns [jc, jc+nc) and depths [pc, pc+kc) of
	// the product; first means C is overwritten, not added to.
	jc, nc, pc, kc int
	first          bool
	phase          int  // packB or compute
	panels         int  // nr-wide panels in the block of B
	chunks         int  // pieces the panels are cut into per block of A
	strided        bool // full panels of B are read where stored, not packed
	items          int  // blocks of A × chunks
	next           atomic.Int64

	bpack []E
	apack [][]E // per thread
	tile  [][]E // per thread: an edge tile
}

const (
	packB = iota
	compute
)

func (d *driver[E]) run(e *parallel.Exec, k *kernel[E], threads int, p Product, a, b, c []E) {
	d.k, d.p, d.a, d.b, d.c, d.threads = k, p, a, b, c, threads
	nc := min(k.nc, roundUp(p.N, k.nr))
	kc := min(k.kc, p.K)
	mc := min(k.mc, roundUp(p.M, k.mr))
	d.bpack = grow(d.bpack, kc*nc)
	for len(d.apack) < threads {
		d.apack = append(d.apack, nil)
		d.tile = append(d.tile, nil)
	}
	for t := range threads {
		d.apack[t] = grow(d.apack[t], mc*kc)
		d.tile[t] = grow(d.tile[t], k.mr*k.nr)
	}
	blocksA := (p.M + k.mc - 1) / k.mc
	// With few rows of A, each element of B serves few products: reading
	// B's rows where they are stored beats packing them.
	d.strided = !p.TransB && p.M <= 2*k.mc
	for d.jc = 0; d.jc < p.N; d.jc += k.nc {
		d.nc = min(k.nc, p.N-d.jc)
		d.panels = (d.nc + k.nr - 1) / k.nr
		// With fewer blocks of A than twice the threads, cut the panels
		// too, so every thread has work: each piece packs its own A.
		d.chunks = 1
		if threads > 1 && blocksA < 2*threads {
			d.chunks = min(d.panels, (2*threads+blocksA-1)/blocksA)
		}
		d.items = blocksA * d.chunks
		for d.pc = 0; d.pc < p.K; d.pc += k.kc {
			d.kc = min(k.kc, p.K-d.pc)
			d.first = d.pc == 0 && !p.Acc
			d.phase = packB
			switch {
			case !d.strided:
				e.Parallel(min(threads, d.panels), d)
			case d.nc%k.nr != 0: // only the last, partial panel is packed
				d.packB(d.panels-1, d.panels)
			}
			d.phase = compute
			d.next.Store(0)
			e.Parallel(min(threads, d.items), d)
		}
	}
	d.a, d.b, d.c = nil, nil, nil
}

// Do runs thread t's share of the current phase.
func (d *driver[E]) Do(t int) {
	if d.phase == packB {
		parts := min(d.threads, d.panels)
		d.packB(t*d.panels/parts, (t+1)*d.panels/parts)
		return
	}
	for {
		it := int(d.next.Add(1)) - 1
		if it >= d.items {
			return
		}
		d.block(t, it/d.chunks, it%d.chunks)
	}
}

// block computes the current depth block's contribution to rows
// [ib·mc, ib·mc+mc) and to the piece ch of the panels of B, on thread t.
func (d *driver[E]) block(t, ib, ch int) {
	k, p := d.k, d.p
	i0 := ib * k.mc
	mc := min(k.mc, p.M-i0)
	ap := d.apack[t]
	// Read in place, A needs packing only in its last, partial panel:
	// where B is read in place too, or where this piece has one panel of
	// B, whose pass over A would be the only use of A's packed copy.
	p0, p1 := ch*d.panels/d.chunks, (ch+1)*d.panels/d.chunks
	direct := d.strided || p1-p0 == 1
	if p.TransA {
		direct = direct && k.microDirectT != nil
	} else {
		direct = direct && k.microDirect != nil
	}
	full := 0
	if direct {
		full = mc - mc%k.mr
	}
	d.packA(ap[full*d.kc:], i0+full, mc-full)
	tile := d.tile[t]
	for jp := p0; jp < p1; jp++ {
		j := d.jc + jp*k.nr
		nr := min(k.nr, p.N-j)
		micro := func(i int, c *E, ldc int, acc bool) {
			inPlace := d.strided && nr == k.nr
			b, ldb := &d.bpack[jp*k.nr*d.kc], k.nr
			if inPlace {
				b, ldb = &d.b[d.pc*p.Ldb+j], p.Ldb
			}
			switch {
			case i < full && p.TransA:
				k.microDirectT(d.kc, &d.a[d.pc*p.Lda+i0+i], p.Lda, b, ldb, c, ldc, acc)
			case i < full:
				k.microDirect(d.kc, &d.a[(i0+i)*p.Lda+d.pc], p.Lda, b, ldb, c, ldc, acc)
			case inPlace:
				k.microStrided(d.kc, &ap[i*d.kc], b, ldb, c, ldc, acc)
			default:
				k.micro(d.kc, &ap[i*d.kc], b, c, ldc, acc)
			}
		}
		for i := 0; i < mc; i += k.mr {
			mr := min(k.mr, mc-i)
			ci := (i0+i)*p.Ldc + j
			if mr == k.mr && nr == k.nr {
				micro(i, &d.c[ci], p.Ldc, !d.first)
				continue
			}
			micro(i, &tile[0], k.nr, false)
			for r := range mr {
				row := d.c[ci+r*p.Ldc : ci+r*p.Ldc+nr]
				src := tile[r*k.nr : r*k.nr+nr]
				if d.first {
					copy(row, src)
					continue
				}
				for x, v := range src {
					row[x] += v
				}
			}
		}
	}
}

// packB packs panels [p0, p1) of the current block of B: panel jp holds,
// for each depth l, the nr values B(pc+l, jc+jp·nr+x), zero past column n.
func (d *driver[E]) packB(p0, p1 int) {
	k, p, kc := d.k, d.p, d.kc
	if !p.TransB && p1-p0 > 1 {
		d.packBRows(p0, p1)
		return
	}
	for jp := p0; jp < p1; jp++ {
		dst := d.bpack[jp*k.nr*kc : (jp+1)*k.nr*kc]
		j0 := d.jc + jp*k.nr
		nr := min(k.nr, p.N-j0)
		if !p.TransB { // row l of the block is contiguous
			for l := range kc {
				src := d.b[(d.pc+l)*p.Ldb+j0:]
				row := dst[l*k.nr : (l+1)*k.nr]
				copy(row, src[:nr])
				clear(row[nr:])
			}
			continue
		}
		// B stored n×k: column j of op(B) is contiguous. Four columns
		// at a time fill four adjacent elements of each panel row.
		col := func(x int) []E { return d.b[(j0+x)*p.Ldb+d.pc : (j0+x)*p.Ldb+d.pc+kc] }
		x := 0
		for ; x+4 <= nr; x += 4 {
			s0, s1, s2, s3 := col(x), col(x+1), col(x+2), col(x+3)
			for l := range kc {
				r := dst[l*k.nr+x : l*k.nr+x+4]
				r[0], r[1], r[2], r[3] = s0[l], s1[l], s2[l], s3[l]
			}
		}
		for ; x < nr; x++ {
			for l, v := range col(x) {
				dst[l*k.nr+x] = v
			}
		}
		for x := nr; x < k.nr; x++ {
			for l := range kc {
				dst[l*k.nr+x] = 0
			}
		}
	}
}

// packBRows packs panels [p0, p1) of an untransposed B whose columns fill
// every panel but maybe the last, row by row: each row of the block is
// read once, in order, and cut into the panels' rows. (Panel by panel,
// each row of a panel is a short copy of its own from another page.)
func (d *driver[E]) packBRows(p0, p1 int) {
	k, p, kc := d.k, d.p, d.kc
	full := p1
	if d.jc+p1*k.nr > p.N {
		full = p1 - 1 // the last panel is partial
	}
	for l := range kc {
		src := d.b[(d.pc+l)*p.Ldb+d.jc:]
		for jp := p0; jp < full; jp++ {
			copyPanelRow(d.bpack[(jp*kc+l)*k.nr:], src[jp*k.nr:], k.nr)
		}
	}
	if full < p1 {
		d.packB(full, p1)
	}
}

// copyPanelRow copies the first nr elements of src into dst: 64 or 256
// bytes at once where they are that many (the AVX2 and AVX-512 kernels'
// panels), inline.
func copyPanelRow[E elem](dst, src []E, nr int) {
	switch nr * int(unsafe.Sizeof(dst[0])) {
	case 64:
		_, _ = dst[nr-1], src[nr-1]
		*(*[64]byte)(unsafe.Pointer(&dst[0])) = *(*[64]byte)(unsafe.Pointer(&src[0]))
	case 256:
		_, _ = dst[nr-1], src[nr-1]
		*(*[256]byte)(unsafe.Pointer(&dst[0])) = *(*[256]byte)(unsafe.Pointer(&src[0]))
	default:
		copy(dst[:nr], src[:nr])
	}
}

// packA packs rows [i0, i0+mc) of the current depth block of A into ap:
// panel r holds, for each depth l, the mr values A(i0+r·mr+y, pc+l), zero
// past row mc.
func (d *driver[E]) packA(ap []E, i0, mc int) {
	k, p, kc := d.k, d.p, d.kc
	for i := 0; i < mc; i += k.mr {
		dst := ap[i*kc : (i+k.mr)*kc]
		mr := min(k.mr, mc-i)
		if p.TransA { // A stored k×m: depth l's values are contiguous
			if mr == 6 && k.mr == 6 { // a full panel of the SIMD kernels: inline, not a call to copy
				packAT6(dst, d.a[(d.pc)*p.Lda+i0+i:], p.Lda, kc)
				continue
			}
			for l := range kc {
				src := d.a[(d.pc+l)*p.Lda+i0+i:]
				col := dst[l*k.mr : (l+1)*k.mr]
				copy(col, src[:mr])
				clear(col[mr:])
			}
			continue
		}
		if mr == k.mr && mr%6 == 0 { // full panels of the SIMD kernels: six rows at a time
			for y := 0; y < mr; y += 6 {
				packA6(dst[y:], d.a[(i0+i+y)*p.Lda+d.pc:], p.Lda, kc, mr)
			}
			continue
		}
		for y := range mr {
			src := d.a[(i0+i+y)*p.Lda+d.pc : (i0+i+y)*p.Lda+d.pc+kc]
			for l, v := range src {
				dst[l*k.mr+y] = v
			}
		}
		for y := mr; y < k.mr; y++ {
			for l := range kc {
				dst[l*k.mr+y] = 0
			}
		}
	}
}

// packA6 packs six rows of kc elements, lda apart from a, into dst, whose
// depths are mr elements apart: the six values of depth l at
// dst[mr·l:mr·l+6], reading the rows side by side.
func packA6[E elem](dst, a []E, lda, kc, mr int) {
	r0, r1, r2 := a[:kc], a[lda:lda+kc], a[2*lda:2*lda+kc]
	r3, r4, r5 := a[3*lda:3*lda+kc], a[4*lda:4*lda+kc], a[5*lda:5*lda+kc]
	dst = dst[:mr*(kc-1)+6]
	for l := range kc {
		col := (*[6]E)(dst[mr*l:])
		col[0], col[1], col[2], col[3], col[4], col[5] = r0[l], r1[l], r2[l], r3[l], r4[l], r5[l]
	}
}

// packAT6 packs the six columns of kc rows, lda apart from a, into dst:
// row l's six values at dst[6·l:6·l+6], assigned inline: copy would call
// memmove for every 24 or 48 bytes.
func packAT6[E elem](dst, a []E, lda, kc int) {
	dst = dst[:6*kc]
	for l := range kc {
		col, src := (*[6]E)(dst[6*l:]), (*[6]E)(a[l*lda:])
		col[0], col[1], col[2], col[3], col[4], col[5] = src[0], src[1], src[2], src[3], src[4], src[5]
	}
}

// grow returns buf if it holds n elements, or a new slice that does.
func grow[E elem](buf []E, n int) []E {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]E, n)
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

package ops

import (
	"unsafe"

	"github.com/nabla-go/nabla/internal/kernel/gemm"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// The sums of rows: four rows at a time, each row's additions in the
// order and with the accumulators of one row's loop, so the same bits.

// rowSums gathers contiguous rows of one length, each to be added onto
// its element of out, and sums them four at a time (vek.Sum4, the bits
// of sumFloats), adding the sums onto out in the rows' order.
type rowSums[T float] struct {
	rows [4][]T
	at   [4]int
	k    int
}

func (b *rowSums[T]) add(out []T, at int, row []T) {
	b.rows[b.k], b.at[b.k] = row, at
	if b.k++; b.k < len(b.rows) {
		return
	}
	var s [4]T
	vek.Sum4(&s, b.rows[0], b.rows[1], b.rows[2], b.rows[3], len(row))
	for j, v := range s {
		out[b.at[j]] += v
	}
	b.k = 0
}

// flush sums the rows left, fewer than four.
func (b *rowSums[T]) flush(out []T) {
	for j := range b.k {
		out[b.at[j]] += sumFloats(b.rows[j])
	}
	b.k = 0
}

// sumRows sets dst[r] to sumFloats of row r of x (rows of n elements),
// four rows at a time (vek.Sum4).
func sumRows[T float](dst, x []T, n int) {
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		vek.Sum4((*[4]T)(dst[r:r+4]), x[r*n:], x[(r+1)*n:], x[(r+2)*n:], x[(r+3)*n:], n)
	}
	for ; r < len(dst); r++ {
		dst[r] = sumFloats(x[r*n : (r+1)*n])
	}
}

// sumFloats adds xs with four accumulators, which lets the CPU overlap the
// additions (vek.Sum4Loop).
func sumFloats[T float](xs []T) T { return vek.Sum4Loop(xs) }

// sumsInOrder sets sums[r] to the sum, in order from 0, of row r of b,
// whose rows of live[r] elements follow one another: the additions of
// four rows run side by side, each row's in its own order, where one
// row's chain of additions would wait on itself.
func sumsInOrder(sums, b []float64, live []int32) {
	at, r := 0, 0
	next := func() []float64 {
		row := b[at : at+int(live[r])]
		at += len(row)
		r++
		return row
	}
	for r+4 <= len(sums) {
		r0 := r
		x0, x1, x2, x3 := next(), next(), next(), next()
		n := min(len(x0), len(x1), len(x2), len(x3))
		var s0, s1, s2, s3 float64
		y1, y2, y3 := x1[:n], x2[:n], x3[:n]
		for k, e := range x0[:n] {
			s0 += e
			s1 += y1[k]
			s2 += y2[k]
			s3 += y3[k]
		}
		sums[r0], sums[r0+1], sums[r0+2], sums[r0+3] = addInOrder(s0, x0[n:]), addInOrder(s1, x1[n:]), addInOrder(s2, x2[n:]), addInOrder(s3, x3[n:])
	}
	for r < len(sums) {
		r0 := r
		sums[r0] = addInOrder(0, next())
	}
}

// addInOrder is s + xs[0] + xs[1] + …, added one after another.
func addInOrder(s float64, xs []float64) float64 {
	for _, e := range xs {
		s += e
	}
	return s
}

// rowRun gathers rows of one length n ≥ 2 that are each to be added onto
// the same n elements of out, out[at:at+n], and start equally far apart
// in x (a layer's bias gradient: the rows of a batch summed to one), and
// adds them in their order a run at a time: as gemm's product of a row of
// ones by the rows (its axpy kernels), which loads and stores out once
// per four rows. Each element gets the additions of adding the rows one
// by one (vek.VV): a row times 1 is the row exactly, and each fused
// multiply–add rounds its sum once, as an addition does.
type rowRun[T float] struct {
	at, n  int // the elements of out
	x0, ld int // row r at x[x0+r·ld:]
	k      int // rows gathered
}

// rowRunMax is the most rows one run gathers.
const rowRunMax = 64

var (
	rowRunOnes32 = [rowRunMax]float32{}
	rowRunOnes64 = [rowRunMax]float64{}
)

func init() {
	for i := range rowRunMax {
		rowRunOnes32[i], rowRunOnes64[i] = 1, 1
	}
}

// sumOntoOneRow is sumToKernel's loop where w's rows, of two elements or
// more, all add onto out's first row and lie equally far apart in x (a
// batch of rows summed to one: every leading axis of the output of
// stride 0, the input's leading axes one after another), and reports
// whether it ran: runs of rowRunMax rows without a call a row.
func sumOntoOneRow[T float](w *walker, out, x []T) bool {
	last := w.rank - 1
	if w.rank < 2 || w.inner[0] != 1 || w.inner[1] != 1 || w.shape[last] < 2 || w.strides[1][last-1] < w.shape[last] {
		return false
	}
	rows := 1
	for a := range last {
		if w.strides[0][a] != 0 || a < last-1 && w.strides[1][a] != w.strides[1][a+1]*w.shape[a+1] {
			return false
		}
		rows *= w.shape[a]
	}
	n, ld := w.shape[last], w.strides[1][last-1]
	for r0 := 0; r0 < rows; r0 += rowRunMax {
		run := rowRun[T]{n: n, x0: r0 * ld, ld: ld, k: min(rowRunMax, rows-r0)}
		run.flush(out, x)
	}
	return true
}

// sumEachRow is sumToKernel's loop where each of w's rows adds onto its
// own element of out, the rows one after another in x and their elements
// one after another in out (a layer norm's sums, (32, 64, 64) to (32, 64,
// 1)), or where every row adds onto out's one element (a sum of all of
// x, a gradient's squared norm), and reports whether it ran: rowSums'
// sums, four rows at a time, without a call a row.
func sumEachRow[T float](w *walker, out, x []T) bool {
	last := w.rank - 1
	if w.rank < 2 || w.sequential || w.inner[0] != 0 || w.inner[1] != 1 || w.strides[1][last-1] != w.shape[last] {
		return false
	}
	os := w.strides[0][last-1] // 1: a row an element; 0: one element
	if os != 0 && os != 1 {
		return false
	}
	rows := 1
	for a := range last {
		for k := range 2 {
			if a < last-1 && w.strides[k][a] != w.strides[k][a+1]*w.shape[a+1] {
				return false
			}
		}
		rows *= w.shape[a]
	}
	n := w.shape[last]
	var sums rowSums[T]
	for r := range rows {
		sums.add(out, r*os, x[r*n:(r+1)*n])
	}
	sums.flush(out)
	return true
}

// add adds x[x0:x0+n] onto out[at:at+n], now or with the run it extends.
func (r *rowRun[T]) add(out, x []T, at, x0, n int) {
	if r.k > 0 && at == r.at && n == r.n && r.k < rowRunMax {
		switch {
		case r.k == 1 && x0-r.x0 >= n:
			r.ld, r.k = x0-r.x0, 2
			return
		case r.k > 1 && x0 == r.x0+r.k*r.ld:
			r.k++
			return
		}
	}
	r.flush(out, x)
	r.at, r.n, r.x0, r.ld, r.k = at, n, x0, n, 1
	if n < 2 { // gemm takes one column as dot products: another order
		r.flush(out, x)
	}
}

// flush adds the rows gathered onto out.
func (r *rowRun[T]) flush(out, x []T) {
	switch r.k {
	case 0:
		return
	case 1:
		dst := out[r.at : r.at+r.n]
		vek.VV(vek.Add, dst, dst, x[r.x0:r.x0+r.n])
	default:
		var z T
		ones := unsafe.Pointer(&rowRunOnes64[0])
		if unsafe.Sizeof(z) == 4 {
			ones = unsafe.Pointer(&rowRunOnes32[0])
		}
		gemm.Mul(nil, gemm.Product{Acc: true, M: 1, N: r.n, K: r.k, Lda: r.k, Ldb: r.ld, Ldc: r.n},
			unsafe.Slice((*T)(ones), r.k), x[r.x0:], out[r.at:])
	}
	r.k = 0
}

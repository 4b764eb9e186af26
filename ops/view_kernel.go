package ops

// The reduction loops for operands read through a view (ReadThrough):
// rows whose elements lie a stride apart, and the rows of a transposed
// operand, whose elements are a column of the tensor, folded a block of
// columns at a time.

// sumStrided is sumFloats of xs[0], xs[stride], …: the same four
// accumulators, added to in the same order.
func sumStrided[T float](xs []T, stride int) T {
	var s0, s1, s2, s3 T
	i := 0
	for ; i+3*stride < len(xs); i += 4 * stride {
		s0 += xs[i]
		s1 += xs[i+stride]
		s2 += xs[i+2*stride]
		s3 += xs[i+3*stride]
	}
	for ; i < len(xs); i += stride {
		s0 += xs[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// columnBlock is the number of rows sumColumns and maxColumns fold at
// once.
const columnBlock = 64

// columns reports whether w's rows are columns of the tensor it reads:
// the last axis reduced and read with a stride, the axis before it kept
// (each row its own output) and read with stride 1, so that the rows
// along it are adjacent columns. Folding a block of them at once reads
// the tensor a row of the block at a time; folding one after another
// would read a column at a time, an element per cache line.
func (w *walker) columns() bool {
	r := w.rank
	return r >= 2 && !w.sequential && w.inner[0] == 0 && w.inner[1] != 1 &&
		w.strides[1][r-2] == 1 && w.strides[0][r-2] != 0
}

// forColumnBlocks calls fn for each block of at most columnBlock adjacent
// rows along w's second-last axis (w.columns), with the output offset of
// the first, the input offset of its first element and the number of
// rows.
func (w *walker) forColumnBlocks(fn func(out, in, m int)) {
	r := w.rank
	os := w.strides[0][r-2]
	lead := *w // rows of lead run along w's second-last axis
	lead.rank--
	lead.rows(func(_, m int, off [3]int) {
		for b := 0; b < m; b += columnBlock {
			fn(off[0]+b*os, off[1]+b, min(columnBlock, m-b))
		}
	})
}

// sumColumns is sumToKernel's loop for rows that are columns
// (w.columns), and reports whether it ran: each row is summed with
// sumStrided's four accumulators, each accumulator added to in the same
// order, a block of rows side by side.
func sumColumns[T float](w *walker, out, x []T) bool {
	if !w.columns() {
		return false
	}
	n, s, os := w.shape[w.rank-1], w.inner[1], w.strides[0][w.rank-2]
	var acc [4][columnBlock]T
	w.forColumnBlocks(func(o, in, m int) {
		for k := range acc {
			clear(acc[k][:m])
		}
		j := 0
		for ; j+4 <= n; j += 4 {
			for k := range acc {
				a := acc[k][:m]
				addVV(a, a, x[in+(j+k)*s:in+(j+k)*s+m])
			}
		}
		for ; j < n; j++ {
			a := acc[0][:m]
			addVV(a, a, x[in+j*s:in+j*s+m])
		}
		for b := range m {
			out[o+b*os] += (acc[0][b] + acc[1][b]) + (acc[2][b] + acc[3][b])
		}
	})
	return true
}

// maxColumns is the maximum's loop for rows that are columns
// (w.columns), and reports whether it ran: each row's maximum is taken
// in the row's order, as maxOf takes it, a block of rows side by side.
func maxColumns[T float](w *walker, out, x []T) bool {
	if !w.columns() {
		return false
	}
	n, s, os := w.shape[w.rank-1], w.inner[1], w.strides[0][w.rank-2]
	var m [columnBlock]T
	w.forColumnBlocks(func(o, in, rows int) {
		acc := m[:rows]
		for b := range acc {
			acc[b] = out[o+b*os]
		}
		for j := range n {
			col := x[in+j*s : in+j*s+rows]
			for b := range acc {
				acc[b] = maxNaN(acc[b], col[b])
			}
		}
		for b, v := range acc {
			out[o+b*os] = v
		}
	})
	return true
}

package ops

import "gorgonia.org/tensor"

// The loops shape ops move elements with where copy and row-by-row walks
// are slow: in-place reshapes, transposes in bands, strided gathers.

// sameData reports whether a and b are contiguous views of the same
// elements, from the same first element.
func sameData(a, b *tensor.Dense) bool {
	return a.IsNativelyAccessible() && b.IsNativelyAccessible() && !a.RequiresIterator() && !b.RequiresIterator() &&
		a.Uintptr() == b.Uintptr()
}

// transposeTile is the side of the tiles transposeTiles copies where
// the output's rows are not the input's columns.
const transposeTile = 8

// transposeTiles is transposeKernel for outputs whose last two axes are
// at least a tile each and whose rows read the input with a stride.
// Where the output's columns are the input's rows (a matrix's
// transpose), it copies each matrix of the last two axes in blocks of
// 4×4 (transposeBlocks). Otherwise it copies a band of transposeTile
// rows at a time, column by column, so that the band's reads of one
// column share cache lines instead of each row striding through the
// whole input.
func transposeTiles[T any](w *walker, out, x []T) {
	rows, n := w.shape[w.rank-2], w.shape[w.rank-1]
	t, s := w.strides[0][w.rank-2], w.strides[0][w.rank-1]
	lead := *w // the matrices: rows of lead are the matrices' first columns
	lead.rank--
	lead.rows(func(o, _ int, off [3]int) {
		base := o * n // lead's elements are rows of n
		if t == 1 {
			transposeBlocks(out[base:base+rows*n], x[off[0]:], rows, n, s)
			return
		}
		for r0 := 0; r0 < rows; r0 += transposeTile {
			r1 := min(r0+transposeTile, rows)
			for j := range n {
				src, dst := off[0]+r0*t+j*s, base+r0*n+j
				for range r1 - r0 {
					out[dst] = x[src]
					src += t
					dst += n
				}
			}
		}
	})
}

// transposeRuns is transposeKernel for outputs whose last axis is the
// input's (runs of contiguous elements, as in attention's (B, S, H, D) to
// (B, H, S, D) permutations): for each run of runs along the last two
// axes it copies them with copyRuns, one call, not one walker step, a
// run.
func transposeRuns[T any](w *walker, out, x []T) {
	n, m, t := w.shape[w.rank-1], w.shape[w.rank-2], w.strides[0][w.rank-2]
	lead := *w // lead's rows are the runs of m runs along axis rank-2
	lead.rank--
	lead.rows(func(o, _ int, off [3]int) {
		// The bounds hold by construction: the output and input are whole.
		_ = copyRuns(out, o*n, n, x, off[0], t, m, n)
	})
}

// transposeBand is about how many elements of output a band of
// transposeBlocks writes: the band's rows stay in L1 while four input
// rows at a time stream into them.
const transposeBand = 2048

// transposeBlocks sets out[i·n + j] = x[i + j·s] for i < rows, j < n: it
// copies 4×4 blocks, each read as four runs of four input elements into
// registers and written as four runs of four output elements. Every run
// is a few bytes of one cache line, and the next block's runs follow on
// the same lines, so the copy reads and writes at about the speed of a
// contiguous copy (0.3–0.4 ns an element in cache on a 2-vCPU AMD EPYC,
// where copying a band of eight rows column by column took 0.6 and, at
// 1024×1024 float64s, 3.7). Where the output's rows are short, it goes
// through bands of rows, four columns at a time down each band, so that
// the input is read four rows at a time: reading all n input rows, a
// large stride s apart, at once thrashes the cache sets they share (a
// (16, 4096) matrix's transpose took 0.8 ns an element, 0.3 in bands).
func transposeBlocks[T any](out, x []T, rows, n, s int) {
	band := max(4, transposeBand/max(n, 1)/4*4)
	for b0 := 0; b0 < rows; b0 += band {
		b1 := min(b0+band, rows)
		r4 := b0 + (b1-b0)/4*4 // the band's rows in whole blocks end here
		c0 := 0
		for ; c0+4 <= n; c0 += 4 {
			for r0 := b0; r0 < r4; r0 += 4 {
				i := r0 + c0*s
				a := x[i : i+4 : i+4]
				b := x[i+s : i+s+4 : i+s+4]
				c := x[i+2*s : i+2*s+4 : i+2*s+4]
				d := x[i+3*s : i+3*s+4 : i+3*s+4]
				o := r0*n + c0
				p := out[o : o+4 : o+4]
				q := out[o+n : o+n+4 : o+n+4]
				r := out[o+2*n : o+2*n+4 : o+2*n+4]
				u := out[o+3*n : o+3*n+4 : o+3*n+4]
				p[0], p[1], p[2], p[3] = a[0], b[0], c[0], d[0]
				q[0], q[1], q[2], q[3] = a[1], b[1], c[1], d[1]
				r[0], r[1], r[2], r[3] = a[2], b[2], c[2], d[2]
				u[0], u[1], u[2], u[3] = a[3], b[3], c[3], d[3]
			}
		}
		for ; c0 < n; c0++ { // the last columns, fewer than four
			for i := b0; i < r4; i++ {
				out[i*n+c0] = x[i+c0*s]
			}
		}
		for r := r4; r < b1; r++ { // the band's last rows, fewer than four
			for j := range n {
				out[r*n+j] = x[r+j*s]
			}
		}
	}
}

// gatherStrided sets d[i] = s[i·stride] for each i of d, four at a time.
func gatherStrided[T any](d, s []T, stride int) {
	if len(d) == 0 {
		return
	}
	s = s[:(len(d)-1)*stride+1]
	i, j := 0, 0
	for ; i+4 <= len(d); i, j = i+4, j+4*stride {
		a, b, c, e := s[j], s[j+stride], s[j+2*stride], s[j+3*stride]
		d[i], d[i+1], d[i+2], d[i+3] = a, b, c, e
	}
	for ; i < len(d); i, j = i+1, j+stride {
		d[i] = s[j]
	}
}

// shortCopy is the run length below which copyRuns copies in a loop of its
// own rather than through copy.
const shortCopy = 8

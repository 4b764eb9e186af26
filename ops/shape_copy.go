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

// transposeTile is the side of the tiles transposeTiles copies.
const transposeTile = 8

// transposeTiles is transposeKernel for outputs whose last two axes are
// at least a tile each and whose rows read the input with a stride: it
// copies each matrix of the last two axes a band of transposeTile rows
// at a time, column by column, so that the band's reads of one column
// (adjacent in the input when the two axes swapped) share cache lines
// instead of each row striding through the whole input.
func transposeTiles[T float](w *walker, out, x []T) {
	rows, n := w.shape[w.rank-2], w.shape[w.rank-1]
	t, s := w.strides[0][w.rank-2], w.strides[0][w.rank-1]
	lead := *w // the matrices: rows of lead are the matrices' first columns
	lead.rank--
	lead.rows(func(o, _ int, off [3]int) {
		base := o * n // lead's elements are rows of n
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

// gatherStrided sets d[i] = s[i·stride] for each i of d, four at a time.
func gatherStrided[T float](d, s []T, stride int) {
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

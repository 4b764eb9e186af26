package ops

import (
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/conv"
	"github.com/nabla-go/nabla/internal/kernel/gemm"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// The convolution kernels unfold each image into columns (im2col: one row
// per kernel tap and channel, one column per output position) and multiply
// by the weight with the project's matrix product. A 1×1 kernel with
// stride 1 and no padding needs no unfolding. The forward convolution
// chooses among three ways (forwardPath): this one, by taps for few
// channels at stride 1 (conv_taps.go), and the wide unfolding of short
// rows (conv_wide.go).

type convKind int

const (
	convForward    convKind = iota // y = Conv2D(x, w)
	convInputGrad                  // x = Conv2DInputGrad(y, w)
	convWeightGrad                 // w = Conv2DWeightGrad(x, y)
)

// convRun is one convolution kernel's run: x, w and y are the images, the
// weight and the output-side images, whichever of them is computed. It is
// a graph.Task over units of work, spread over parts: images for the
// forward and input-gradient kernels, chunks of images for the weight
// gradient; a machine keeps one per dtype.
type convRun[T float] struct {
	kind     convKind
	g        geom
	x, w, y  []T
	parts    int
	units    int           // of work, spread over the parts
	chunks   int           // the weight gradient's
	sums     [][]T         // the weight gradient's chunks but the first
	cols     [][]T         // per part
	prods    [][]T         // per part: the wide unfolding's product
	path     forwardPath   // the forward kernel's
	perImage int           // units per image, by taps (conv_taps.go)
	offs     []int         // by taps: the taps' offsets
	off      conv.Offsets  // by taps: offs, checked
	packed   []T           // by taps: the weight, laid out tap by tap
	serial   []*graph.Exec // per part: serial, keeping its products' buffers
}

type convKey[T float] struct{}

// weightChunks is the most chunks of images the weight gradient sums
// apart (then adds in order): their number depends on the batch alone, so
// the result does not depend on the threads.
const weightChunks = 8

// runConv computes kind's result. The forward and input-gradient kernels
// hand images out to e's threads when there are enough of them, and
// otherwise give the threads to each product; the weight gradient hands
// out its chunks the same way. Either way every element is computed the
// same way whatever the number of threads.
func runConv[T float](e *graph.Exec, kind convKind, g geom, x, w, y []T) {
	if g.idle(kind) {
		if kind == convWeightGrad {
			clear(w) // a sum over no images
		}
		return
	}
	r := e.State(convKey[T]{}, func() any { return new(convRun[T]) }).(*convRun[T])
	r.kind, r.g, r.x, r.w, r.y = kind, g, x, w, y
	units := g.n
	r.path = pathUnfold
	if kind == convForward {
		r.path = g.forwardPath()
	}
	switch r.path {
	case pathWide:
		units = g.wideUnits()
	case pathTaps:
		units, r.perImage = g.tapsUnits(e.Threads())
	}
	if kind == convWeightGrad {
		r.chunks = min(g.n, weightChunks)
		units = r.chunks
		for len(r.sums) < r.chunks-1 {
			r.sums = append(r.sums, nil)
		}
		for j := range r.chunks - 1 {
			r.sums[j] = grow(r.sums[j], len(w))
		}
	}
	r.parts = 1
	if units >= e.Threads() {
		r.parts = e.Threads()
	}
	for len(r.cols) < r.parts {
		r.cols = append(r.cols, nil)
		r.prods = append(r.prods, nil)
		r.serial = append(r.serial, graph.NewExec(nil))
	}
	switch {
	case r.path == pathWide:
		for p := range r.parts {
			r.wideBuffers(p)
		}
	case r.path == pathTaps:
		r.tapsPrepare()
	case !g.direct():
		for p := range r.parts {
			r.cols[p] = grow(r.cols[p], g.k()*g.oh*g.ow)
		}
	}
	r.units = units
	if r.parts > 1 {
		e.Parallel(r.parts, r)
	} else {
		for u := range units {
			r.unit(e, 0, u)
		}
	}
	if kind == convWeightGrad {
		for _, s := range r.sums[:r.chunks-1] {
			vek.VV(vek.Add, w, w, s)
		}
	}
	r.x, r.w, r.y = nil, nil, nil
}

// Do computes every parts-th unit, from the part-th. Its products run on
// the part's serial Exec, whose state keeps their packing buffers from
// run to run (a nil Exec would take them from a pool that a collection
// may empty).
func (r *convRun[T]) Do(part int) {
	for u := part; u < r.units; u += r.parts {
		r.unit(r.serial[part], part, u)
	}
}

// unit computes image u, or the weight gradient's sum over chunk u of
// the images (the first into w, the others into sums).
func (r *convRun[T]) unit(e *graph.Exec, part, u int) {
	switch r.path {
	case pathWide:
		r.wideUnit(e, part, u)
		return
	case pathTaps:
		r.tapsUnit(part, u)
		return
	}
	if r.kind != convWeightGrad {
		r.image(e, part, u, r.w, false)
		return
	}
	w := r.w
	if u > 0 {
		w = r.sums[u-1]
	}
	lo, hi := u*r.g.n/r.chunks, (u+1)*r.g.n/r.chunks
	for n := lo; n < hi; n++ {
		r.image(e, part, n, w, n > lo)
	}
}

// grow returns buf if it holds n elements, or a new slice that does.
func grow[T float](buf []T, n int) []T {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]T, n)
}

// idle reports whether kind has nothing to compute: its result is empty,
// or a weight gradient summing over no images (zero).
func (g geom) idle(kind convKind) bool {
	return g.n == 0 || slices.Contains(g.out(kind), 0)
}

// direct reports whether the image is its own unfolding.
func (g geom) direct() bool {
	return g.kh == 1 && g.kw == 1 && g.stride == [2]int{1, 1} && g.pad == [4]int{}
}

// image computes image n's share, group by group, with products on e;
// the weight gradient sets w to it, or adds it with acc.
func (r *convRun[T]) image(e *graph.Exec, part, n int, weight []T, acc bool) {
	g := r.g
	hw, ohw, k := g.h*g.w, g.oh*g.ow, g.k()
	for grp := range g.groups {
		x := r.x[(n*g.c+grp*g.cg)*hw : (n*g.c+grp*g.cg+g.cg)*hw]
		y := r.y[(n*g.o+grp*g.og)*ohw : (n*g.o+grp*g.og+g.og)*ohw]
		w := weight[grp*g.og*k : (grp+1)*g.og*k]
		col := x
		if !g.direct() {
			col = r.cols[part]
		}
		switch r.kind {
		case convForward: // y = W·col
			if !g.direct() {
				im2col(col, x, g)
			}
			gemm.Mul(e.Kernel(), gemm.Product{M: g.og, N: ohw, K: k, Lda: k, Ldb: ohw, Ldc: ohw}, w, col, y)
		case convInputGrad: // col = Wᵀ·y, folded back onto x
			gemm.Mul(e.Kernel(), gemm.Product{TransA: true, M: k, N: ohw, K: g.og, Lda: k, Ldb: ohw, Ldc: ohw}, w, y, col)
			if !g.direct() {
				clear(x)
				col2im(x, col, g)
			}
		case convWeightGrad: // W (+)= y·colᵀ
			if !g.direct() {
				im2col(col, x, g)
			}
			gemm.Mul(e.Kernel(), gemm.Product{TransB: true, Acc: acc, M: g.og, N: k, K: ohw, Lda: ohw, Ldb: ohw, Ldc: k}, y, col, w)
		}
	}
}

// taps returns the output positions [j0, j1) whose input position
// j·stride + off lies in [0, in), for out positions.
func taps(out, in, stride, off int) (j0, j1 int) {
	j0 = 0
	if off < 0 {
		j0 = (-off + stride - 1) / stride
	}
	if in-1-off < 0 {
		return 0, 0
	}
	j1 = min(out, (in-1-off)/stride+1)
	return min(j0, j1), j1
}

// tap is one kernel tap (p, q) of one channel c, seen from the output:
// the output rows [i0, i1) and columns [j0, j1) read the input, the
// others fall in the padding; output (i, j) reads input row
// i·stride + rowOff, column j·stride + colOff.
type tap struct {
	c, row                 int // channel, and row of the unfolding
	i0, i1, j0, j1         int
	rowOff, colOff, stride int
}

// forTaps calls f for every tap of one group's channels.
func forTaps(g geom, f func(t tap)) {
	for c := range g.cg {
		for p := range g.kh {
			rowOff := p*g.dilation[0] - g.pad[0]
			i0, i1 := taps(g.oh, g.h, g.stride[0], rowOff)
			for q := range g.kw {
				colOff := q*g.dilation[1] - g.pad[2]
				j0, j1 := taps(g.ow, g.w, g.stride[1], colOff)
				f(tap{c: c, row: (c*g.kh+p)*g.kw + q, i0: i0, i1: i1, j0: j0, j1: j1,
					rowOff: rowOff, colOff: colOff, stride: g.stride[1]})
			}
		}
	}
}

// im2col unfolds one group of one image, x (cg, h, w), into col (cg·kh·kw,
// oh·ow): row (c, p, q) holds x[c, i·sh - top + p·dh, j·sw - left + q·dw]
// at column (i, j), zero in the padding.
func im2col[T float](col, x []T, g geom) {
	ohw := g.oh * g.ow
	if g.stride == [2]int{1, 1} && g.pad == [4]int{} {
		im2colDense(col, x, g)
		return
	}
	forTaps(g, func(t tap) {
		img := x[t.c*g.h*g.w : (t.c+1)*g.h*g.w]
		row := col[t.row*ohw : (t.row+1)*ohw]
		clear(row[:t.i0*g.ow])
		clear(row[t.i1*g.ow:])
		if g.stride == [2]int{1, 1} && g.ow == g.w && t.j0 < t.j1 && t.i0 < t.i1 {
			shiftedRows(row, img, t, g.w)
			return
		}
		for i := t.i0; i < t.i1; i++ {
			src := img[(i*g.stride[0]+t.rowOff)*g.w:]
			dst := row[i*g.ow : (i+1)*g.ow]
			clear(dst[:t.j0])
			clear(dst[t.j1:])
			if t.stride == 1 {
				if t.j0 < t.j1 { // else every column is padding, and j0+colOff may be negative
					copy(dst[t.j0:t.j1], src[t.j0+t.colOff:t.j1+t.colOff])
				}
				continue
			}
			for j := t.j0; j < t.j1; j++ {
				dst[j] = src[j*t.stride+t.colOff]
			}
		}
	})
}

// shiftedRows is im2col's tap t at stride 1 where the output rows are as
// wide as the input's, w, as in every "same" layer: the rows [i0, i1) of
// the unfolding are then one run of the image shifted by rowOff·w +
// colOff, copied at once, but for the columns in the padding, zeroed
// after (they received the neighbouring rows' elements).
func shiftedRows[T float](row, img []T, t tap, w int) {
	lo, hi := t.i0*w+t.j0, (t.i1-1)*w+t.j1
	shift := t.rowOff*w + t.colOff
	copy(row[lo:hi], img[lo+shift:hi+shift])
	for i := t.i0; i < t.i1; i++ {
		dst := row[i*w : (i+1)*w]
		for j := range t.j0 {
			dst[j] = 0
		}
		for j := t.j1; j < w; j++ {
			dst[j] = 0
		}
	}
}

// im2colDense is im2col without stride or padding: each row of the
// unfolding is oh runs of ow input elements, w apart. Without the taps'
// bounds to check per row, it copies LeNet's short runs (8 to 24
// elements) about twice as fast.
func im2colDense[T float](col, x []T, g geom) {
	ohw, hw := g.oh*g.ow, g.h*g.w
	row := 0
	for c := range g.cg {
		img := x[c*hw : (c+1)*hw]
		for p := range g.kh {
			for q := range g.kw {
				dst := col[row*ohw : (row+1)*ohw]
				src := img[p*g.dilation[0]*g.w+q*g.dilation[1]:]
				for i := range g.oh {
					copy(dst[i*g.ow:(i+1)*g.ow], src[i*g.w:])
				}
				row++
			}
		}
	}
}

// col2im adds col, laid out as im2col makes it, back onto x (cg, h, w):
// each input element receives the sum of the columns that read it.
func col2im[T float](x, col []T, g geom) {
	ohw := g.oh * g.ow
	forTaps(g, func(t tap) {
		img := x[t.c*g.h*g.w : (t.c+1)*g.h*g.w]
		row := col[t.row*ohw : (t.row+1)*ohw]
		for i := t.i0; i < t.i1; i++ {
			dst := img[(i*g.stride[0]+t.rowOff)*g.w:]
			src := row[i*g.ow : (i+1)*g.ow]
			if t.stride == 1 {
				if t.j0 < t.j1 { // else j0+colOff may be negative
					d := dst[t.j0+t.colOff : t.j1+t.colOff]
					addVV(d, d, src[t.j0:t.j1])
				}
				continue
			}
			for j := t.j0; j < t.j1; j++ {
				dst[j*t.stride+t.colOff] += src[j]
			}
		}
	})
}

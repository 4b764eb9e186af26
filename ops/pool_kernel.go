package ops

import (
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/conv"
)

// The pooling kernels visit each plane (one channel of one image) window
// by window; a window's taps that fall in the padding are skipped, so the
// padding is never materialised. Where each window lies is the same for
// every plane: a run finds it once per axis (spans).

// poolRun is one pooling kernel's run: a and b are the inputs' elements
// (b is nil for one input), out the output's, rows and cols the windows
// along each axis. It is a graph.Task over the planes; a machine keeps one
// per dtype.
type poolRun[T float] struct {
	kind       poolKind
	g          poolGeom
	a, b, out  []T
	rows, cols []poolSpan
	parts      int
	vector     bool // MaxPool2D by halves in vectors (maxHalvesVector)
}

type poolKey[T float] struct{}

// runPool computes kind's result, the planes handed out to e's threads
// when there is enough work.
func runPool[T float](e *graph.Exec, kind poolKind, g poolGeom, out *tensor.Dense, in []*tensor.Dense, view func(*tensor.Dense) []T) {
	if g.planes == 0 { // nothing to write, and a plane's windows may be many
		return
	}
	r := e.State(poolKey[T]{}, func() any { return new(poolRun[T]) }).(*poolRun[T])
	r.kind, r.g, r.out, r.a = kind, g, view(out), view(in[0])
	if len(in) > 1 {
		r.b = view(in[1])
	}
	r.rows = spans(r.rows[:0], g.oh, g.h, g.kernel[0], g.stride[0], g.pad[0], g.dilation[0])
	r.cols = spans(r.cols[:0], g.ow, g.w, g.kernel[1], g.stride[1], g.pad[1], g.dilation[1])
	r.parts = 1
	if flops(g.planes, g.oh, g.ow, g.kernel[0], g.kernel[1]) >= parallelMin {
		r.parts = min(e.Threads(), g.planes)
	}
	r.vector = kind == maxPoolKind && g.halves() && conv.Available()
	e.Parallel(r.parts, r)
	r.a, r.b, r.out = nil, nil, nil
}

// Do computes every parts-th plane, from the part-th, or in vectors the
// part-th of parts runs of planes.
func (r *poolRun[T]) Do(part int) {
	if r.vector {
		r.maxHalvesVector(part*r.g.planes/r.parts, (part+1)*r.g.planes/r.parts)
		return
	}
	for pl := part; pl < r.g.planes; pl += r.parts {
		switch r.kind {
		case avgPoolKind, avgPoolSpreadKind:
			r.avgPlane(pl)
		default:
			r.maxPlane(pl)
		}
	}
}

// poolSpan is one window along an axis: its taps inside the image, the first
// at first and the others every dilation after it, and its size within
// the padded image (the divisor's share of average pooling).
type poolSpan struct{ first, taps, size int }

// spans appends the out windows along an axis of length n to dst.
func spans(dst []poolSpan, out, n, k, stride, pad, dilation int) []poolSpan {
	for i := range out {
		start := i*stride - pad
		t0, t1 := 0, k
		if start < 0 {
			t0 = (-start + dilation - 1) / dilation
		}
		if last := start + (k-1)*dilation; last >= n {
			t1 = 0
			if start < n {
				t1 = (n-1-start)/dilation + 1
			}
		}
		s := poolSpan{first: start + t0*dilation, taps: max(t1-t0, 0), size: min(start+k, n+pad) - start}
		dst = append(dst, s)
	}
	return dst
}

// maxPlane computes one plane of MaxPool2D, MaxPool2DGrad or
// MaxPool2DGather; a is the images x. Each window's argmax is its first
// maximum in row-major order, or its last NaN, as PyTorch finds it: its
// first tap inside the image when every element is -∞, none when no tap
// is inside.
func (r *poolRun[T]) maxPlane(pl int) {
	g := &r.g
	hw, ohw := g.h*g.w, g.oh*g.ow
	x := r.a[pl*hw : (pl+1)*hw]
	var out, in []T
	switch r.kind {
	case maxPoolKind:
		out = r.out[pl*ohw : (pl+1)*ohw]
	case maxPoolGradKind: // g (pooled) added at the argmaxes of out (x's shape)
		out, in = r.out[pl*hw:(pl+1)*hw], r.b[pl*ohw:(pl+1)*ohw]
	case maxPoolGatherKind: // G (x's shape) read at the argmaxes
		out, in = r.out[pl*ohw:(pl+1)*ohw], r.b[pl*hw:(pl+1)*hw]
	}
	if g.halves() && r.maxHalves(x, out, in) {
		return
	}
	if r.kind == maxPoolGradKind {
		clear(out)
	}
	dh, dw, w := g.dilation[0], g.dilation[1], g.w
	o := 0
	for _, rs := range r.rows {
		for _, cs := range r.cols {
			at := -1
			if rs.taps > 0 && cs.taps > 0 {
				best := T(math.Inf(-1))
				at = rs.first*w + cs.first
				for p := range rs.taps {
					row := (rs.first+p*dh)*w + cs.first
					for q := range cs.taps {
						if v := x[row+q*dw]; v > best || v != v {
							best, at = v, row+q*dw
						}
					}
				}
			}
			r.storeMax(o, at, x, out, in)
			o++
		}
	}
}

// halves reports whether the pooling halves each axis with 2×2 windows
// that lie wholly inside the image (stride 2, no padding or dilation):
// maxHalves's case.
func (g *poolGeom) halves() bool {
	return g.kernel == [2]int{2, 2} && g.stride == [2]int{2, 2} && g.dilation == [2]int{1, 1} &&
		g.pad == [2]int{} && 2*g.oh <= g.h && 2*g.ow <= g.w
}

// maxHalves is maxPlane for 2×2 windows at stride 2 inside the image,
// without branches on the data: each window's argmax is the first
// maximum of its rows' first maxima. That is maxPlane's argmax unless a
// NaN is among the taps; maxHalves then reports false (a sum of the taps
// tells, or an infinite one, where maxPlane's result is the same) and the
// caller computes the plane again. MaxPool2DGrad's windows tile the
// image but for a last odd row or column: it writes every element.
func (r *poolRun[T]) maxHalves(x, out, in []T) bool {
	w, kind := r.g.w, r.kind
	if kind == maxPoolGradKind {
		clear(out[2*r.g.oh*w:])
	}
	var sum T
	o := 0
	for i := range r.g.oh {
		top := 2 * i * w
		r0, r1 := x[top:top+w], x[top+w:top+2*w]
		if kind == maxPoolGradKind && w > 2*r.g.ow {
			out[top+w-1], out[top+2*w-1] = 0, 0
		}
		for j := range r.g.ow {
			k := 2 * j
			a, b, c, d := r0[k], r0[k+1], r1[k], r1[k+1]
			p, q := k+b2i(b > a), k+b2i(d > c)
			at := top + p + b2i(r1[q] > r0[p])*(w+q-p)
			sum += (a + b) + (c + d)
			switch kind {
			case maxPoolKind:
				out[o] = x[at]
			case maxPoolGradKind:
				out[top+k], out[top+k+1], out[top+w+k], out[top+w+k+1] = 0, 0, 0, 0
				out[at] = in[o]
			default:
				out[o] = in[at]
			}
			o++
		}
	}
	return sum == sum
}

// maxHalvesVector computes MaxPool2D's planes [lo, hi) by halves with
// conv.MaxHalves, in one call where the planes' pairs of rows follow one
// another (even heights), and again plane by plane with maxPlane where a
// NaN is among the inputs. Its windows' results are maxHalves's.
func (r *poolRun[T]) maxHalvesVector(lo, hi int) {
	g := &r.g
	hw, ohw := g.h*g.w, g.oh*g.ow
	x, out := r.a[lo*hw:hi*hw], r.out[lo*ohw:hi*ohw]
	ok := true
	if g.h == 2*g.oh {
		ok = conv.MaxHalves(out, g.ow, x, 2*g.w, g.w, (hi-lo)*g.oh, g.ow)
	} else {
		for pl := range hi - lo {
			ok = conv.MaxHalves(out[pl*ohw:], g.ow, x[pl*hw:], 2*g.w, g.w, g.oh, g.ow) && ok
		}
	}
	if !ok {
		for pl := lo; pl < hi; pl++ {
			r.maxPlane(pl)
		}
	}
}

// b2i is 1 for true and 0 for false; the compiler makes it a flag
// instruction, not a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// storeMax stores window o's result given its argmax at (-1: the window
// has no tap inside the image).
func (r *poolRun[T]) storeMax(o, at int, x, out, in []T) {
	switch {
	case r.kind == maxPoolGradKind:
		if at >= 0 {
			out[at] += in[o]
		}
	case at < 0 && r.kind == maxPoolKind:
		out[o] = T(math.Inf(-1))
	case at < 0:
		out[o] = 0
	case r.kind == maxPoolKind:
		out[o] = x[at]
	default:
		out[o] = in[at]
	}
}

// avgPlane computes one plane of AvgPool2D (a is the images) or
// AvgPool2DSpread (a is the pooled gradient). A window's divisor counts
// its padding, but not the part of a last window (in ceil mode) that
// lies beyond the padding, as PyTorch's does.
func (r *poolRun[T]) avgPlane(pl int) {
	g := &r.g
	hw, ohw := g.h*g.w, g.oh*g.ow
	spread := r.kind == avgPoolSpreadKind
	img, pooled := r.a, r.out
	if spread {
		img, pooled = r.out, r.a
	}
	img, pooled = img[pl*hw:(pl+1)*hw], pooled[pl*ohw:(pl+1)*ohw]
	if spread {
		clear(img)
	}
	o := 0
	for _, rs := range r.rows {
		for _, cs := range r.cols {
			size := T(rs.size * cs.size)
			if spread {
				v := pooled[o] / size
				for p := range rs.taps {
					row := img[(rs.first+p)*g.w+cs.first:][:cs.taps]
					for q := range row {
						row[q] += v
					}
				}
			} else {
				var s T
				for p := range rs.taps {
					for _, v := range img[(rs.first+p)*g.w+cs.first:][:cs.taps] {
						s += v
					}
				}
				pooled[o] = s / size
			}
			o++
		}
	}
}

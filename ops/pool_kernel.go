package ops

import (
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
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
}

type poolKey[T float] struct{}

// runPool computes kind's result, the planes handed out to e's threads
// when there is enough work.
func runPool[T float](e *graph.Exec, kind poolKind, g poolGeom, out *tensor.Dense, in []*tensor.Dense, view func(*tensor.Dense) []T) {
	r := e.State(poolKey[T]{}, func() any { return new(poolRun[T]) }).(*poolRun[T])
	r.kind, r.g, r.out, r.a = kind, g, view(out), view(in[0])
	if len(in) > 1 {
		r.b = view(in[1])
	}
	r.rows = spans(r.rows[:0], g.oh, g.h, g.kernel[0], g.stride[0], g.pad[0], g.dilation[0])
	r.cols = spans(r.cols[:0], g.ow, g.w, g.kernel[1], g.stride[1], g.pad[1], g.dilation[1])
	r.parts = 1
	if work := g.planes * g.oh * g.ow * g.kernel[0] * g.kernel[1]; work >= parallelMin {
		r.parts = min(e.Threads(), g.planes)
	}
	e.Parallel(r.parts, r)
	r.a, r.b, r.out = nil, nil, nil
}

// Do computes every parts-th plane, from the part-th.
func (r *poolRun[T]) Do(part int) {
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
	dh, dw := g.dilation[0], g.dilation[1]
	x := r.a[pl*hw : (pl+1)*hw]
	var out, in []T
	switch r.kind {
	case maxPoolKind:
		out = r.out[pl*ohw : (pl+1)*ohw]
	case maxPoolGradKind: // g (pooled) added at the argmaxes of out (x's shape)
		out, in = r.out[pl*hw:(pl+1)*hw], r.b[pl*ohw:(pl+1)*ohw]
		clear(out)
	case maxPoolGatherKind: // G (x's shape) read at the argmaxes
		out, in = r.out[pl*ohw:(pl+1)*ohw], r.b[pl*hw:(pl+1)*hw]
	}
	kind, w, negInf := r.kind, g.w, T(math.Inf(-1))
	o := 0
	for _, rs := range r.rows {
		for _, cs := range r.cols {
			at := -1
			if rs.taps > 0 && cs.taps > 0 {
				best := negInf
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
			switch {
			case kind == maxPoolGradKind:
				if at >= 0 {
					out[at] += in[o]
				}
			case at < 0 && kind == maxPoolKind:
				out[o] = negInf
			case at < 0:
				out[o] = 0
			case kind == maxPoolKind:
				out[o] = x[at]
			default:
				out[o] = in[at]
			}
			o++
		}
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

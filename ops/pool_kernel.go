package ops

import (
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// The pooling kernels visit each plane (one channel of one image) window
// by window; a window's taps that fall in the padding are skipped, so the
// padding is never materialised.

// poolRun is one pooling kernel's run: a and b are the inputs' elements
// (b is nil for one input), out the output's. It is a graph.Task over the
// planes; a machine keeps one per dtype.
type poolRun[T float] struct {
	kind      poolKind
	g         poolGeom
	a, b, out []T
	parts     int
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

// window returns where output position i's window starts along an axis
// of length n, and its taps [t0, t1) that fall inside: tap t reads
// start + t·dilation.
func window(i, n, k, stride, pad, dilation int) (start, t0, t1 int) {
	start = i*stride - pad
	if start < 0 {
		t0 = (-start + dilation - 1) / dilation
	}
	switch last := start + (k-1)*dilation; {
	case start >= n:
		t1 = 0
	case last >= n:
		t1 = (n-1-start)/dilation + 1
	default:
		t1 = k
	}
	return start, t0, t1
}

// argmax returns the index in plane x of window (i, j)'s first maximum
// in row-major order, or of its first NaN, as PyTorch finds it: its first
// tap inside the image when every element is -∞, -1 when none is inside.
func argmax[T float](g *poolGeom, x []T, i, j int) int {
	si, p0, p1 := window(i, g.h, g.kernel[0], g.stride[0], g.pad[0], g.dilation[0])
	sj, q0, q1 := window(j, g.w, g.kernel[1], g.stride[1], g.pad[1], g.dilation[1])
	if p0 >= p1 || q0 >= q1 {
		return -1
	}
	dh, dw := g.dilation[0], g.dilation[1]
	best, at := T(math.Inf(-1)), (si+p0*dh)*g.w+sj+q0*dw
	for p := p0; p < p1; p++ {
		row := (si+p*dh)*g.w + sj
		for q := q0; q < q1; q++ {
			if v := x[row+q*dw]; v > best || v != v {
				best, at = v, row+q*dw
			}
		}
	}
	return at
}

// maxPlane computes one plane of MaxPool2D, MaxPool2DGrad or
// MaxPool2DGather; a is the images x.
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
		clear(out)
	case maxPoolGatherKind: // G (x's shape) read at the argmaxes
		out, in = r.out[pl*ohw:(pl+1)*ohw], r.b[pl*hw:(pl+1)*hw]
	}
	for i := range g.oh {
		for j := range g.ow {
			o, at := i*g.ow+j, argmax(g, x, i, j)
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
	kh, kw := g.kernel[0], g.kernel[1]
	for i := range g.oh {
		si, p0, p1 := window(i, g.h, kh, g.stride[0], g.pad[0], 1)
		rows := min(si+kh, g.h+g.pad[0]) - si
		for j := range g.ow {
			sj, q0, q1 := window(j, g.w, kw, g.stride[1], g.pad[1], 1)
			size := T(rows * (min(sj+kw, g.w+g.pad[1]) - sj))
			o := i*g.ow + j
			if spread {
				v := pooled[o] / size
				for p := p0; p < p1; p++ {
					row := img[(si+p)*g.w:]
					for q := q0; q < q1; q++ {
						row[sj+q] += v
					}
				}
				continue
			}
			var s T
			for p := p0; p < p1; p++ {
				row := img[(si+p)*g.w:]
				for q := q0; q < q1; q++ {
					s += row[sj+q]
				}
			}
			pooled[o] = s / size
		}
	}
}

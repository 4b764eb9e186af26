package ops

import (
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// channelRun is one per-channel kernel's run over tensors (N, C, S...)
// seen as N·C planes of s elements: in are the inputs' elements, out the
// output's. It is a graph.Task over the channels; a machine keeps one per
// dtype. Reductions add each plane in T and the planes in float64 (see
// sumAcc).
type channelRun[T float] struct {
	op      channelOp
	in      [5][]T
	out     []T
	n, c, s int
	parts   int
	scratch [][]T // per part, a plane: a two-term affine map's second term
}

type channelKey[T float] struct{}

// runChannels computes op into out, the channels handed out to e's
// threads when there is enough work.
func runChannels[T float](e *graph.Exec, op channelOp, out *tensor.Dense, in []*tensor.Dense, view func(*tensor.Dense) []T) {
	r := e.State(channelKey[T]{}, func() any { return new(channelRun[T]) }).(*channelRun[T])
	shape := in[0].Shape()
	r.op, r.out, r.n, r.c = op, view(out), shape[0], shape[1]
	r.s = 1
	for _, d := range shape[2:] {
		r.s *= d
	}
	for i, t := range in {
		r.in[i] = view(t)
	}
	r.parts = 1
	if work := len(in) * r.n * r.c * r.s; work >= parallelMin {
		r.parts = min(e.Threads(), r.c)
	}
	if op.kind == channelAffineKind && op.terms == 2 {
		for len(r.scratch) < r.parts {
			r.scratch = append(r.scratch, nil)
		}
		for p := range r.parts {
			r.scratch[p] = grow(r.scratch[p], r.s)
		}
	}
	e.Parallel(r.parts, r)
	r.in, r.out = [5][]T{}, nil
}

// Do computes every parts-th channel, from the part-th.
func (r *channelRun[T]) Do(part int) {
	for ch := part; ch < r.c; ch += r.parts {
		r.channel(part, ch)
	}
}

// plane is channel ch's elements in sample i of x.
func (r *channelRun[T]) plane(x []T, i, ch int) []T {
	off := (i*r.c + ch) * r.s
	return x[off : off+r.s]
}

// sum is the sum of channel ch of x.
func (r *channelRun[T]) sum(x []T, ch int) float64 {
	var s float64
	for i := range r.n {
		s += sumAcc(r.plane(x, i, ch))
	}
	return s
}

// channel computes channel ch, as part part of the run.
func (r *channelRun[T]) channel(part, ch int) {
	count := float64(r.n * r.s)
	x := r.in[0]
	switch r.op.kind {
	case channelSumKind:
		r.out[ch] = T(r.sum(x, ch))
	case channelMeanKind:
		r.out[ch] = T(r.sum(x, ch) / count)
	case channelDotKind:
		var s float64
		for i := range r.n {
			if r.op.centred {
				s += deviationsAcc(r.plane(x, i, ch), r.plane(r.in[1], i, ch), 0, float64(r.in[2][ch]))
			} else {
				s += dotAcc(r.plane(x, i, ch), r.plane(r.in[1], i, ch))
			}
		}
		r.out[ch] = T(s)
	case channelCovKind:
		r.out[ch] = T(r.covariance(x, r.in[1], ch))
	case channelAffineKind:
		r.affine(part, ch)
	case batchNormKind:
		a := float64(r.in[3][ch]) / math.Sqrt(float64(r.in[2][ch])+r.op.eps)
		m, at, b := r.in[1][ch], T(a), r.in[4][ch]
		for i := range r.n {
			y := r.plane(r.out, i, ch)
			vek.VS(vek.Sub, y, r.plane(x, i, ch), m)
			vek.VS(vek.Mul, y, y, at)
			vek.VS(vek.Add, y, y, b)
		}
	}
}

// covariance is the biased covariance of channel ch of u and v, from
// their means (one, when u is v).
func (r *channelRun[T]) covariance(u, v []T, ch int) float64 {
	count := float64(r.n * r.s)
	mu := r.sum(u, ch) / count
	mv := mu
	if len(u) > 0 && &u[0] != &v[0] {
		mv = r.sum(v, ch) / count
	}
	var s float64
	for i := range r.n {
		s += deviationsAcc(r.plane(u, i, ch), r.plane(v, i, ch), mu, mv)
	}
	return s / count
}

// affine computes channel ch of Σᵢ uᵢ·aᵢ (+ b), each product rounded
// before the sum.
func (r *channelRun[T]) affine(part, ch int) {
	terms := r.op.terms
	if r.op.unit {
		b := r.in[1][ch]
		for i := range r.n {
			vek.VS(vek.Add, r.plane(r.out, i, ch), r.plane(r.in[0], i, ch), b)
		}
		return
	}
	a := r.in[terms][ch]
	for i := range r.n {
		y, u := r.plane(r.out, i, ch), r.plane(r.in[0], i, ch)
		vek.VS(vek.Mul, y, u, a)
		if terms == 2 {
			t := r.scratch[part]
			vek.VS(vek.Mul, t, r.plane(r.in[1], i, ch), r.in[3][ch])
			vek.VV(vek.Add, y, y, t)
		}
		if r.op.bias {
			vek.VS(vek.Add, y, y, r.in[2*terms][ch])
		}
	}
}

// The reductions below add a plane in eight lanes of T, each a few
// hundred elements long (a plane is one sample's channel), and the lanes
// and the planes in float64: a float32 sum of a channel's thousands of
// values keeps float32 precision, without a float64 conversion of every
// element, whose latency would bound the loop. vek.SumLanes and
// vek.DevLanes add the whole blocks of 8, a vector at a time, with the
// lanes in registers; the last elements go to the first lane.

// lanes adds the eight partial sums in float64.
func lanes[T float](s0, s1, s2, s3, s4, s5, s6, s7 T) float64 {
	return ((float64(s0) + float64(s1)) + (float64(s2) + float64(s3))) +
		((float64(s4) + float64(s5)) + (float64(s6) + float64(s7)))
}

// sumAcc is Σ x, in 8 lanes (vek.SumLanes).
func sumAcc[T float](x []T) float64 {
	var s [8]T
	for _, v := range vek.SumLanes(&s, x) {
		s[0] += v
	}
	return lanes(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])
}

// dotAcc is Σ u·v.
func dotAcc[T float](u, v []T) float64 {
	v = v[:len(u)]
	var s0, s1, s2, s3, s4, s5, s6, s7 T
	i := 0
	for ; i+8 <= len(u); i += 8 {
		a, b := u[i:i+8:i+8], v[i:i+8:i+8]
		s0 += a[0] * b[0]
		s1 += a[1] * b[1]
		s2 += a[2] * b[2]
		s3 += a[3] * b[3]
		s4 += a[4] * b[4]
		s5 += a[5] * b[5]
		s6 += a[6] * b[6]
		s7 += a[7] * b[7]
	}
	for ; i < len(u); i++ {
		s0 += u[i] * v[i]
	}
	return lanes(s0, s1, s2, s3, s4, s5, s6, s7)
}

// deviationsAcc is Σ (u - mu)·(v - mv), the means rounded to T, in 8
// lanes (vek.DevLanes).
func deviationsAcc[T float](u, v []T, mu, mv float64) float64 {
	m, n := T(mu), T(mv)
	var s [8]T
	rest := vek.DevLanes(&s, u, v, m, n)
	v = v[len(u)-len(rest) : len(u)]
	for i, a := range rest {
		s[0] += (a - m) * (v[i] - n)
	}
	return lanes(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])
}

package ops

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// whereOp selects elementwise from a where cond is non-zero, else from b.
type whereOp struct{}

// Where returns a where cond is non-zero and b elsewhere, broadcasting all
// three. Float a and b take a cond of their dtype; integer ones (int32 or
// int64, the same), which it selects exactly, a cond of any dtype (a
// float mask, as comparisons make, say). cond gets no gradient.
func Where(cond, a, b *graph.Node) *graph.Node { return graph.Apply(whereOp{}, cond, a, b) }

func (whereOp) Name() string { return "Where" }

// Broadcasts marks Where as broadcasting its inputs (graph.Broadcaster).
func (whereOp) Broadcasts() {}

func (whereOp) Type(in []graph.Type) (graph.Type, error) {
	if len(in) != 3 || !graph.IsInteger(in[1].DType) {
		return broadcastType(in, 3)
	}
	if in[2].DType != in[1].DType {
		return graph.Type{}, fmt.Errorf("dtypes differ: %s: convert one with ops.Cast", graph.TypesString(in[1:]))
	}
	if err := checkRank(in); err != nil {
		return graph.Type{}, err
	}
	shape, err := graph.BroadcastShapes(in[0].Shape, in[1].Shape, in[2].Shape)
	if err != nil {
		return graph.Type{}, err
	}
	return graph.TypeOf(in[1].DType, shape...), nil
}

// Cost is one flop (a selection) per output element.
func (whereOp) Cost(in []graph.Type, out graph.Type) graph.Cost { return elementwiseCost(in, out) }

func (whereOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	switch out.Dtype() {
	case graph.Int32:
		return whereInts[int32](out, in)
	case graph.Int64:
		return whereInts[int64](out, in)
	}
	return forFloat(out.Dtype(),
		func() error { whereForward[float32, float32](floats[float32](in[0]), out, in); return nil },
		func() error { whereForward[float64, float64](floats[float64](in[0]), out, in); return nil })
}

// whereInts selects integers of type T, dispatching on cond's dtype.
func whereInts[T int32 | int64](out *tensor.Dense, in []*tensor.Dense) error {
	switch in[0].Dtype() {
	case graph.Float32:
		whereForward[float32, T](floats[float32](in[0]), out, in)
	case graph.Float64:
		whereForward[float64, T](floats[float64](in[0]), out, in)
	case graph.Int32:
		whereForward[int32, T](in[0].Int32s(), out, in)
	case graph.Int64:
		whereForward[int64, T](in[0].Int64s(), out, in)
	default:
		return fmt.Errorf("cond's dtype %v is not supported", in[0].Dtype())
	}
	return nil
}

// whereForward selects from in[1] and in[2], of out's element type T,
// where c, in[0]'s elements, are non-zero.
func whereForward[C, T number](c []C, out *tensor.Dense, in []*tensor.Dense) {
	o, a, b := elems[T](out), elems[T](in[1]), elems[T](in[2])
	w := newElementwiseWalker(out.Shape(), in[0].Shape(), in[1].Shape(), in[2].Shape())
	w.rows(func(off, n int, at [3]int) {
		whereLoop(o[off:off+n], c[at[0]:], w.inner[0], a[at[1]:], w.inner[1], b[at[2]:], w.inner[2])
	})
}

// whereLoop sets o[i] = a[i*sa] where c[i*sc] is non-zero, else b[i*sb];
// strides are 0 or 1, and o may be any operand of stride 1. Floats
// with a condition of stride 1 run vek.Where's vector blends, which copy
// the same bits.
func whereLoop[C, T number](o []T, c []C, sc int, a []T, sa int, b []T, sb int) {
	if sc == 1 {
		switch o := any(o).(type) {
		case []float32:
			if c, ok := any(c).([]float32); ok {
				vek.Where(o, c, any(a).([]float32), sa, any(b).([]float32), sb)
				return
			}
		case []float64:
			if c, ok := any(c).([]float64); ok {
				vek.Where(o, c, any(a).([]float64), sa, any(b).([]float64), sb)
				return
			}
		}
	}
	for i := range o {
		if c[i*sc] != 0 {
			o[i] = a[i*sa]
		} else {
			o[i] = b[i*sb]
		}
	}
}

func (whereOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	cond := ctx.Input(0)
	zero := scalarLike(g, 0)
	grads := []*graph.Node{nil, nil, nil}
	if ctx.NeedsGrad(1) {
		grads[1] = Where(cond, g, zero)
	}
	if ctx.NeedsGrad(2) {
		grads[2] = Where(cond, zero, g)
	}
	return grads
}

// JVP selects between the operands' tangents.
func (whereOp) JVP(c *graph.JVPContext) *graph.Node {
	ta, tb := aligned(c, 1), aligned(c, 2)
	if ta == nil && tb == nil {
		return nil
	}
	zero := scalarLike(c.Output(), 0)
	if ta == nil {
		ta = zero
	}
	if tb == nil {
		tb = zero
	}
	return Where(c.Input(0), ta, tb)
}

// Batch applies the op to the batch, as binary ops do.
func (op whereOp) Batch(c *graph.BatchContext) *graph.Node { return elementwiseBatch(c, op) }

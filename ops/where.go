package ops

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// whereOp selects elementwise from a where cond is non-zero, else from b.
type whereOp struct{}

// Where returns a where cond is non-zero and b elsewhere, broadcasting all
// three. cond gets no gradient.
func Where(cond, a, b *graph.Node) *graph.Node { return graph.Apply(whereOp{}, cond, a, b) }

func (whereOp) Name() string { return "Where" }

func (whereOp) Type(in []graph.Type) (graph.Type, error) { return broadcastType(in, 3) }

// Cost is one flop (a selection) per output element.
func (whereOp) Cost(in []graph.Type, out graph.Type) graph.Cost { return elementwiseCost(in, out) }

func (whereOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return forFloat(out.Dtype(),
		func() error { whereForward[float32](out, in); return nil },
		func() error { whereForward[float64](out, in); return nil })
}

func whereForward[T float](out *tensor.Dense, in []*tensor.Dense) {
	o, c, a, b := floats[T](out), floats[T](in[0]), floats[T](in[1]), floats[T](in[2])
	w := newElementwiseWalker(out.Shape(), in[0].Shape(), in[1].Shape(), in[2].Shape())
	w.rows(func(off, n int, at [3]int) {
		whereLoop(o[off:off+n], c[at[0]:], w.inner[0], a[at[1]:], w.inner[1], b[at[2]:], w.inner[2])
	})
}

// whereLoop sets o[i] = a[i*sa] where c[i*sc] is non-zero, else b[i*sb];
// strides are 0 or 1, and o may be any operand of stride 1. A condition
// of stride 1 runs vek.Where's vector blends, which copy the same bits.
func whereLoop[T float](o, c []T, sc int, a []T, sa int, b []T, sb int) {
	if sc == 1 {
		vek.Where(o, c, a, sa, b, sb)
		return
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

package ops

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// selectBatch is a Cond's batching rule where the predicate is batched,
// so that the examples may take both branches (JAX's rule for cond): both
// branches run for the whole batch, batched by the driver's sweep into
// the batch's graph, and Where picks each example's outputs from the
// branch its predicate takes, bit for bit what its own run computes.
//
// A branch's values for the examples that do not take it are discarded,
// but their derivatives are not, of themselves: an untaken branch
// computing log(x) at x = 0 has the partial derivative ∞, and the zero
// gradient that Where routes to it makes 0·∞ = NaN, which a sum over the
// branch's inputs would carry into the taken examples'. So each branch
// reads its float inputs through a gate (gradGate) that zeros, by
// selection, the derivatives of the examples that do not take it: the
// derivatives, of every order and in either mode, are those of the taken
// branch alone, as in the examples' own runs. A float value every example
// shares is broadcast to the batch before its gate (a constant, which has
// no derivative, is not), so that its gradient sums only the terms of the
// examples taking the branch; the branches then compute on B copies of
// it. Integer outputs are selected as they are (Where takes them).
func (op *condOp) selectBatch(c *graph.BatchContext) []*graph.Node {
	g := c.Graph()
	then := nonzeroFlags(c.Input(0), c.Size())
	keep := [2]*graph.Node{then, Sub(g.Scalar(1, graph.Float64), then)}
	var outs [2][]*graph.Node
	for b, br := range op.branches {
		ins := make([]*graph.Node, len(br.Inputs))
		batched := make([]bool, len(br.Inputs))
		for i := range br.Inputs {
			k := op.input(b, i)
			ins[i], batched[i] = c.Input(k), c.Batched(k)
			if !graph.IsFloat(ins[i].DType()) {
				continue
			}
			if !batched[i] {
				if ins[i].Kind() == graph.KindConst {
					continue
				}
				ins[i], batched[i] = broadcastBatch(c, ins[i]), true
			}
			ins[i] = gradGate(ins[i], keep[b])
		}
		var flags []bool
		var err error
		if outs[b], flags, err = c.Sweep(g, br.Outputs, br.Inputs, ins, batched); err != nil {
			c.Decline()
			return nil
		}
		for j, o := range outs[b] {
			if !flags[j] {
				// A shared output: the batch's axis in front, for Where.
				outs[b][j] = Reshape(o, append([]int{1}, o.Shape()...)...)
			}
		}
	}
	res := make([]*graph.Node, len(outs[0]))
	for j, a := range outs[0] {
		// keep has the batch's axis: so has the selection.
		res[j] = selectExact(keep[0], a, outs[1][j], a.Type().Rank())
	}
	return res
}

// keepAligned is keep, a flag per example (B,) of float64, as dtype and
// shaped (B, 1, …) to broadcast against a batched value of rank rank.
func keepAligned(keep *graph.Node, dtype tensor.Dtype, rank int) *graph.Node {
	shape := []int{keep.Shape()[0]}
	for range rank - 1 {
		shape = append(shape, 1)
	}
	return Reshape(Cast(keep, dtype), shape...)
}

// gradGateOp passes its first input, a batched float value, through
// unchanged; the derivatives flowing through it, of either mode, are
// zeroed for the examples whose flag, the second input, is zero (a Where,
// so that a NaN or an infinity there is dropped, not multiplied by zero).
// A batched Cond's branches read their inputs through it (selectBatch).
type gradGateOp struct{}

// gradGate is x (B, …) through a gradGateOp, keep (B,) its examples' flags.
func gradGate(x, keep *graph.Node) *graph.Node {
	return graph.Apply(gradGateOp{}, x, keepAligned(keep, x.DType(), x.Type().Rank()))
}

func (gradGateOp) Name() string { return "GradGate" }

func (gradGateOp) Type(in []graph.Type) (graph.Type, error) {
	t, err := broadcastType(in, 2)
	if err == nil && !t.Equal(in[0]) {
		return graph.Type{}, fmt.Errorf("flags of shape %s for a value of shape %s", graph.ShapeString(in[1].Shape), graph.ShapeString(in[0].Shape))
	}
	return t, err
}

func (gradGateOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return copyForward(out, in[0])
}

// Backward passes the gradient of the examples kept, and zeros elsewhere.
func (gradGateOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{Where(ctx.Input(1), g, scalarLike(g, 0)), nil}
}

// JVP passes the tangent of the examples kept, and zeros elsewhere.
func (gradGateOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil {
		return nil
	}
	return Where(c.Input(1), t, scalarLike(t, 0))
}

// Batch gates the batch as it is, a shared value broadcast to the batch
// where the flags are batched (the gate's output is its value's type).
func (op gradGateOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	x := c.Input(0)
	if !c.Batched(0) {
		x = broadcastBatch(c, x)
	}
	return graph.Apply(op, x, alignedBatch(c, 1, c.Example().Type().Rank()))
}

package nn

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// zeroStateOp is a recurrent module's zero initial state, made from its
// input so that the batch size is read from the input's type rather than
// fixed when the graph is built: a graph replayed for another batch size
// (vm.Runner) gets states of that size. Its output is (lead…, N, hidden),
// N being the input's dimension batchAxis; it has no gradient.
type zeroStateOp struct {
	batchAxis, hidden int
	layers            int // the leading dimension, or 0 for none
}

// zeroState returns zeros for the state of a module reading x.
func zeroState(x *graph.Node, batchAxis, hidden, layers int) *graph.Node {
	return graph.Apply(zeroStateOp{batchAxis: batchAxis, hidden: hidden, layers: layers}, x)
}

// Name is "ZeroState".
func (zeroStateOp) Name() string { return "ZeroState" }

// Type is (layers, N, hidden), or (N, hidden) without layers, of x's
// dtype.
func (op zeroStateOp) Type(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 1); err != nil {
		return graph.Type{}, err
	}
	x := in[0]
	if op.batchAxis >= x.Rank() {
		return graph.Type{}, fmt.Errorf("input %v has no axis %d", x, op.batchAxis)
	}
	if op.layers > 0 {
		return graph.TypeOf(x.DType, op.layers, x.Shape[op.batchAxis], op.hidden), nil
	}
	return graph.TypeOf(x.DType, x.Shape[op.batchAxis], op.hidden), nil
}

// Forward writes zeros.
func (zeroStateOp) Forward(out *tensor.Dense, _ []*tensor.Dense) error {
	if out.Dtype() == graph.Float32 {
		clear(out.Float32s())
	} else {
		clear(out.Float64s())
	}
	return nil
}

// Decompose is zeros broadcast to the state's shape (graph.Decomposer),
// which is how the state exports to other formats.
func (op zeroStateOp) Decompose(in []*graph.Node) ([]*graph.Node, error) {
	t, err := op.Type([]graph.Type{in[0].Type()})
	if err != nil {
		return nil, err
	}
	return []*graph.Node{ops.BroadcastTo(in[0].Graph().Scalar(0, t.DType), t.Shape...)}, nil
}

// Backward: the zeros do not depend on the input's values.
func (zeroStateOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node {
	return []*graph.Node{nil}
}

// withBatchAxis inserts a batch axis of size 1 at axis into n's shape, for
// an unbatched input or state (nil stays nil). Past axis 0, the leading
// dimension is left free (-1), so a replay for another length still fits.
func withBatchAxis(n *graph.Node, axis int) *graph.Node {
	if n == nil || graph.Poisoned(n) != nil {
		return n
	}
	shape := slices.Insert(slices.Clone(n.Shape()), min(axis, n.Type().Rank()), 1)
	if axis > 0 {
		shape[0] = -1
	}
	return ops.Reshape(n, shape...)
}

// withoutBatchAxis removes the batch axis of size 1 at axis from n's shape.
func withoutBatchAxis(n *graph.Node, axis int) *graph.Node {
	if graph.Poisoned(n) != nil {
		return n
	}
	shape := slices.Delete(slices.Clone(n.Shape()), axis, axis+1)
	if axis > 0 {
		shape[0] = -1
	}
	return ops.Reshape(n, shape...)
}

// unbatch applies f (withBatchAxis or withoutBatchAxis) at axis to each
// of ns.
func unbatch(ns []*graph.Node, axis int, f func(*graph.Node, int) *graph.Node) []*graph.Node {
	out := make([]*graph.Node, len(ns))
	for i, n := range ns {
		out[i] = f(n, axis)
	}
	return out
}

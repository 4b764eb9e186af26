package compile_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestGradOfIntegersIsAnError(t *testing.T) {
	g := graph.New()
	labels := g.Input("labels", graph.Int64, 3)
	w := g.Param("w", graph.NewDense(graph.Float64, 3))
	y := ops.Sum(ops.Mul(ops.Cast(labels, graph.Float64), w))

	_, err := compile.Grad(y, labels)
	require.Error(t, err)
	require.Contains(t, err.Error(), `nabla: Grad: cannot differentiate with respect to input "labels" #0 int64(3): integer values have no gradient`)
	require.Contains(t, err.Error(), "differentiate with respect to a float node")
	require.Contains(t, err.Error(), "grad_dtype_test.go:")

	_, err = compile.Gradients([]*graph.Node{ops.Cast(y, graph.Int32)}, nil, []*graph.Node{w})
	require.ErrorContains(t, err, "nabla: Gradients: output Cast")
	require.ErrorContains(t, err, "int32() is an integer: only float32 and float64 outputs are differentiated")

	// With respect to the float parameter all is well: the integer input
	// only scales it.
	grads, err := compile.Grad(y, w)
	require.NoError(t, err)
	require.Equal(t, w.Type(), grads[0].Type())
	require.NoError(t, g.Err(), "the refused requests left the graph usable")
}

// leakyOp multiplies a float by an integer and returns a gradient for
// both, whatever it is asked: the differentiation driver must drop the
// integer input's.
type leakyOp struct{}

func (leakyOp) Name() string                             { return "Leaky" }
func (leakyOp) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }
func (leakyOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	for i, v := range in[1].Int64s() {
		out.Float64s()[i] = in[0].Float64s()[i] * float64(v)
	}
	return nil
}

var leakyNeeds []bool

func (leakyOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	leakyNeeds = []bool{ctx.NeedsGrad(0), ctx.NeedsGrad(1)}
	k := ops.Cast(ctx.Input(1), graph.Float64)
	return []*graph.Node{ops.Mul(g, k), ops.Cast(ops.Mul(g, ctx.Input(0)), graph.Int64)}
}

func TestNoGradientFlowsIntoIntegers(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	// The integer depends on x, so x's gradient would reach it through
	// the Cast if the driver let it.
	k := ops.Cast(ops.Scale(x, 3), graph.Int64)
	y := ops.Sum(graph.Apply(leakyOp{}, x, k))
	require.NoError(t, g.Err())
	grads, err := compile.Grad(y, x)
	require.NoError(t, err)
	require.Equal(t, []bool{true, false}, leakyNeeds, "the integer input is never asked for a gradient")
	// The gradient is k alone: nothing came back through the integer.
	require.Equal(t, "Mul", grads[0].OpName())
}

package compile_test

import (
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// panicBackwardOp is a user's op whose Backward panics.
type panicBackwardOp struct{}

func (panicBackwardOp) Name() string                                        { return "Shaky" }
func (panicBackwardOp) Type(in []graph.Type) (graph.Type, error)            { return in[0], nil }
func (panicBackwardOp) Forward(out *tensor.Dense, in []*tensor.Dense) error { return nil }
func (panicBackwardOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node {
	panic("no gradient today")
}

// A user's Backward that panics is an error from Grad naming the op.
func TestPanickingBackwardIsAnError(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64)
	y := graph.Apply(panicBackwardOp{}, x)
	_, err := compile.Grad(y, x)
	if err == nil || !strings.Contains(err.Error(), "Backward of Shaky panicked: no gradient today") {
		t.Errorf("got %v, want the panic named", err)
	}
}

// foreignGradOp is a user's op whose Backward builds its gradient in a
// graph of its own.
type foreignGradOp struct{ panicBackwardOp }

func (foreignGradOp) Name() string { return "Stranger" }
func (foreignGradOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node {
	return []*graph.Node{graph.New().Scalar(1, graph.Float64)}
}

// A gradient from another graph is an error naming the op, not a graph
// that mixes two.
func TestForeignGradientIsAnError(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64)
	_, err := compile.Grad(graph.Apply(foreignGradOp{}, x), x)
	if err == nil || !strings.Contains(err.Error(), "Backward of Stranger returned a gradient for input 0") {
		t.Errorf("got %v, want the foreign gradient named", err)
	}
}

// badGradOp is a user's op whose Backward builds a Reshape that cannot
// be: its gradient cannot be built.
type badGradOp struct{ panicBackwardOp }

func (badGradOp) Name() string { return "Warped" }
func (badGradOp) Backward(_ *graph.GradContext, grad *graph.Node) []*graph.Node {
	return []*graph.Node{ops.Reshape(grad, 5)}
}

// A gradient that cannot be built (a Backward's Reshape of one element to
// five) is one error with one prefix and one site, naming the Backward.
func TestGradientBuildErrorIsNamedOnce(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64)
	_, err := compile.Grad(graph.Apply(badGradOp{}, x), x)
	if err == nil || strings.Count(err.Error(), "nabla:") != 1 || strings.Count(err.Error(), " at ") != 1 ||
		!strings.Contains(err.Error(), "nabla: Grad: Backward of Warped: Reshape: cannot reshape () (1 elements) to (5)") {
		t.Errorf("got %v, want one prefix and site, naming Warped's Backward", err)
	}
}

package ops

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

type identityOp struct{}

// Identity returns x unchanged, as a node of its own: the gradient passes
// through it.
func Identity(x *graph.Node) *graph.Node { return graph.Apply(identityOp{}, x) }

func (identityOp) Name() string { return "Identity" }

func (identityOp) Type(in []graph.Type) (graph.Type, error) { return singleInput(in) }

func (identityOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return copyForward(out, in[0])
}

// Backward passes the gradient through.
func (identityOp) Backward(_ *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{g}
}

// JVP passes the tangent through.
func (identityOp) JVP(c *graph.JVPContext) *graph.Node { return c.Tangent(0) }

// Batch passes the batch on.
func (op identityOp) Batch(c *graph.BatchContext) *graph.Node { return elementwiseBatch(c, op) }

type stopGradientOp struct{}

// StopGradient returns x unchanged, but no gradient flows back through it:
// differentiation treats the result as a constant.
func StopGradient(x *graph.Node) *graph.Node { return graph.Apply(stopGradientOp{}, x) }

func (stopGradientOp) Name() string { return "StopGradient" }

func (stopGradientOp) Type(in []graph.Type) (graph.Type, error) { return singleInput(in) }

func (stopGradientOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return copyForward(out, in[0])
}

// Backward returns no gradient: that is the op's purpose.
func (stopGradientOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node {
	return []*graph.Node{nil}
}

// JVP is zero: no derivative flows through StopGradient in either mode.
func (stopGradientOp) JVP(*graph.JVPContext) *graph.Node { return nil }

// Batch stops the batch's gradient.
func (op stopGradientOp) Batch(c *graph.BatchContext) *graph.Node { return elementwiseBatch(c, op) }

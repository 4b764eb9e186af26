package main

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Log1pExpOp is log(1 + eˣ) as a composite op: its forward is built from
// Exp, Add and Log, but its gradient is its own, σ(x), where the
// subgraph's gradient, eˣ/(1 + eˣ), is NaN once eˣ overflows (x > 709 in
// float64).
type Log1pExpOp struct{}

// Log1pExp returns log(1 + eˣ) elementwise, with a stable gradient.
func Log1pExp(x *graph.Node) *graph.Node { return graph.ApplyComposite(Log1pExpOp{}, x) }

// Name is "Log1pExp".
func (Log1pExpOp) Name() string { return "Log1pExp" }

// Build is the forward subgraph.
func (Log1pExpOp) Build(in []*graph.Node) *graph.Node {
	x := in[0]
	return ops.Log(ops.Add(x.Graph().Scalar(1, x.DType()), ops.Exp(x)))
}

// Backward: d/dx log(1 + eˣ) = σ(x), which Sigmoid computes without
// overflow and differentiates to any order.
func (Log1pExpOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{ops.Mul(g, ops.Sigmoid(ctx.Input(0)))}
}

// ClipGradientOp is the identity whose gradient is clipped elementwise to
// [-Limit, Limit]: it tames the gradient that flows back through it and
// leaves the forward value alone.
type ClipGradientOp struct {
	Limit float64
}

// ClipGradient returns x, with its gradient clipped to [-limit, limit].
func ClipGradient(x *graph.Node, limit float64) *graph.Node {
	return graph.ApplyComposite(ClipGradientOp{Limit: limit}, x)
}

// Name is "ClipGradient".
func (ClipGradientOp) Name() string { return "ClipGradient" }

// Build returns the input itself: the forward is the identity.
func (ClipGradientOp) Build(in []*graph.Node) *graph.Node { return in[0] }

// Backward clips the incoming gradient.
func (op ClipGradientOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	limit := ctx.Graph().Scalar(op.Limit, g.DType())
	return []*graph.Node{ops.Minimum(ops.Maximum(g, ops.Neg(limit)), limit)}
}

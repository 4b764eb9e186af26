package main

import (
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// TestLog1pExpStableGradient: at x = 800, eˣ overflows. The forward value
// overflows too (the subgraph computes log(1 + ∞)), but the composite's
// gradient σ(800) = 1 is exact, where differentiating the subgraph gives
// ∞/∞ = NaN. At x = 0 the value is ln 2 and the gradient 1/2.
func TestLog1pExpStableGradient(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := Log1pExp(x)
	d, err := compile.Grad(ops.Sum(y), x)
	require.NoError(t, err)
	naive, err := compile.Grad(ops.Sum(Log1pExpOp{}.Build([]*graph.Node{x})), x)
	require.NoError(t, err)
	got := fdtest.Evaluate(t, []*graph.Node{y, d[0], naive[0]}, x, []float64{0, 800})
	require.InDelta(t, math.Ln2, got[0][0], 1e-15)
	require.True(t, math.IsInf(got[0][1], 1), "the forward overflows: got %v", got[0][1])
	require.Equal(t, []float64{0.5, 1}, got[1])
	require.True(t, math.IsNaN(got[2][1]), "the subgraph's own gradient is NaN at 800: got %v", got[2][1])
}

// TestLog1pExpHigherOrders: its Backward is built of differentiable ops, so
// derivatives of any order go through it.
func TestLog1pExpHigherOrders(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 5)
	f := ops.Sum(ops.Mul(Log1pExp(x), ops.Sin(x)))
	fdtest.CheckOrders(t, "Log1pExp", f, x, []float64{-3, -0.5, 0, 0.7, 2.5}, 3)
}

// TestClipGradient: the forward is the identity; d/dx sum(c·clip(x)) is c
// clipped to [-1, 1], here for c = (3, -0.25, -8).
func TestClipGradient(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	c := g.Const(fdtest.TensorOf(t, x.Type(), 3, -0.25, -8))
	y := ClipGradient(x, 1)
	d, err := compile.Grad(ops.Sum(ops.Mul(c, y)), x)
	require.NoError(t, err)
	got := fdtest.Evaluate(t, []*graph.Node{y, d[0]}, x, []float64{0.5, 2, -4})
	require.Equal(t, []float64{0.5, 2, -4}, got[0])
	require.Equal(t, []float64{1, -0.25, -1}, got[1])

	// Where nothing is clipped, ClipGradient is transparent to all orders.
	f := ops.Sum(ops.Sin(ClipGradient(ops.Mul(x, x), 100)))
	fdtest.CheckOrders(t, "ClipGradient", f, x, []float64{0.3, -1.1, 0.8}, 3)
}

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

// TestSiLU: y = x·σ(x) and dy/dx = σ(x)·(1 + x·(1 − σ(x))); at x = 0,
// σ = 1/2, so y = 0 and dy/dx = 1/2; at x = ln 3, σ = 3/4, so
// y = 0.75·ln 3 and dy/dx = 0.75·(1 + ln 3/4).
func TestSiLU(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := SiLU(x)
	d, err := compile.Grad(ops.Sum(y), x)
	require.NoError(t, err)
	ln3 := math.Log(3)
	got := fdtest.Evaluate(t, []*graph.Node{y, d[0]}, x, []float64{0, ln3})
	fdtest.RequireClose(t, []float64{0, 0.75 * ln3}, got[0], 1e-12, "SiLU")
	fdtest.RequireClose(t, []float64{0.5, 0.75 * (1 + ln3/4)}, got[1], 1e-12, "SiLU'")

	// Inside a larger function, the first derivative matches finite differences.
	f := ops.Sum(ops.Mul(ops.Tanh(SiLU(ops.Square(x))), x))
	fdtest.CheckOrders(t, "through SiLU", f, x, []float64{0.8, -1.3}, 1)
}

// TestSiLUIsOnceDifferentiable: a second derivative through SiLU is an
// error from compile.Grad that names the op and says what to do.
func TestSiLUIsOnceDifferentiable(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	f := ops.Sum(SiLU(x))
	d, err := compile.Grad(f, x)
	require.NoError(t, err)
	_, err = compile.Grad(ops.Sum(d[0]), x)
	require.ErrorContains(t, err, "nabla: Grad: Backward of SiLUGradient: op SiLU is once-differentiable: it has a numeric backward kernel "+
		"and no symbolic Backward; give it a Backward to differentiate twice at silu_test.go:")
	_, err = compile.Hessian(f, x)
	require.ErrorContains(t, err, "op SiLU is once-differentiable")
}

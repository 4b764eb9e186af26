package main

import (
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// TestMaxWithIndexForward on x = [[1, 5, 5], [7, -2, 0]] (ties take the
// first index).
func TestMaxWithIndexForward(t *testing.T) {
	cases := []struct {
		axis            int
		values, indices []float64
	}{
		{1, []float64{5, 7}, []float64{1, 0}},
		{-1, []float64{5, 7}, []float64{1, 0}},
		{0, []float64{7, 5, 5}, []float64{1, 0, 0}},
	}
	for _, c := range cases {
		g := graph.New()
		x := g.Input("x", graph.Float64, 2, 3)
		values, indices := MaxWithIndex(x, c.axis)
		require.NoError(t, g.Err())
		m := fdtest.Machine(t, values, indices)
		var multi int
		for _, in := range m.Program().Instructions() {
			if in.Multi != nil {
				multi++
				require.Equal(t, "MaxWithIndex", in.Name())
				require.Len(t, in.Out, 2, "case %v: one instruction writes both outputs", c.axis)
			}
		}
		require.Equal(t, 1, multi, "case %v", c.axis)
		got := fdtest.Evaluate(t, []*graph.Node{values, indices}, x, []float64{1, 5, 5, 7, -2, 0})
		require.Equal(t, c.values, got[0], "case %v: values", c.axis)
		require.Equal(t, c.indices, got[1], "case %v: indices", c.axis)
	}
	g := graph.New()
	v, i := MaxWithIndex(g.Input("x", graph.Float64, 2, 3), 2)
	require.ErrorContains(t, v.Err(), "axis 2 out of range for rank 2")
	require.Equal(t, v, i)
	g = graph.New()
	v, _ = MaxWithIndex(g.Input("e", graph.Float64, 2, 0), 1)
	require.ErrorContains(t, v.Err(), "axis 1 of (2,0) is empty: it has no maximum")
}

// TestMaxWithIndexGradients: the gradient flows from whichever outputs are
// used: from the values to the elements they came from, from the indices
// to nothing (they are piecewise constant, and finite differences agree).
func TestMaxWithIndexGradients(t *testing.T) {
	x0 := []float64{0.3, -1.2, 0.8, 2.1, -0.4, 0.05, 1.7, 0.9, -0.6, 0.2, 1.1, -1.5}
	for _, axis := range []int{0, 1, 2} {
		uses := []struct {
			name  string
			build func(values, indices *graph.Node) *graph.Node
		}{
			{"values", func(v, _ *graph.Node) *graph.Node { return ops.Sum(ops.Sin(v)) }},
			{"values and indices", func(v, i *graph.Node) *graph.Node { return ops.Sum(ops.Mul(ops.Square(v), i)) }},
			{"indices", func(_, i *graph.Node) *graph.Node { return ops.Sum(ops.Square(i)) }},
		}
		for _, u := range uses {
			g := graph.New()
			x := g.Input("x", graph.Float64, 2, 3, 2)
			f := u.build(MaxWithIndex(ops.Tanh(x), axis))
			d, err := compile.GradWith(f, []*graph.Node{x}, compile.ZerosIfDisconnected())
			require.NoError(t, err)
			fdtest.RequireClose(t, fdtest.NumericGrad(t, f, x, x0), fdtest.Evaluate(t, d, x, x0)[0], 1e-6, u.name)
			if u.name != "indices" {
				fdtest.CheckOrders(t, u.name, f, x, x0, 2)
			}
		}
	}
}

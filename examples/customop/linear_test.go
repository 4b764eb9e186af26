package main

import (
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
)

// TestLinearFunctionValues, worked by hand for x = [[1,2,3],[4,5,6]],
// W = [[1,0,1],[0,1,0]], b = [10,20] and L = sum(y²):
//
//	x·Wᵀ     = [[1+3, 2], [4+6, 5]]      = [[4,2],[10,5]]
//	y        = x·Wᵀ + b                  = [[14,22],[20,25]]
//	g = 2y                               = [[28,44],[40,50]]
//	dL/dx = g·W                          = [[28,44,28],[40,50,40]]
//	dL/dW = gᵀ·x = [28·(1,2,3) + 40·(4,5,6), 44·(1,2,3) + 50·(4,5,6)]
//	             = [[188,256,324],[244,338,432]]
//	dL/db = column sums of g             = [68,94]
func TestLinearFunctionValues(t *testing.T) {
	for _, dtype := range []graph.Type{graph.TypeOf(graph.Float64), graph.TypeOf(graph.Float32)} {
		g := graph.New()
		x := g.Const(fdtest.TensorOf(t, dtype.WithShape(2, 3), 1, 2, 3, 4, 5, 6))
		w := g.Const(fdtest.TensorOf(t, dtype.WithShape(2, 3), 1, 0, 1, 0, 1, 0))
		b := g.Const(fdtest.TensorOf(t, dtype.WithShape(2), 10, 20))
		y := nn.LinearFunc(x, w, b)
		noBias := nn.LinearFunc(x, w, nil)
		grads, err := compile.Grad(ops.Sum(ops.Square(y)), x, w, b)
		require.NoError(t, err)
		got := fdtest.Evaluate(t, append([]*graph.Node{y, noBias}, grads...), nil, nil)
		want := [][]float64{
			{14, 22, 20, 25},
			{4, 2, 10, 5},
			{28, 44, 28, 40, 50, 40},
			{188, 256, 324, 244, 338, 432},
			{68, 94},
		}
		for i := range want {
			fdtest.RequireClose(t, want[i], got[i], 1e-6, dtype.DType.String())
		}
	}
}

// TestLinearFunctionNeedsGrad: Backward builds only the gradients asked for.
func TestLinearFunctionNeedsGrad(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 3)
	w := g.Input("w", graph.Float64, 2, 3)
	b := g.Input("b", graph.Float64, 2)
	y := nn.LinearFunc(x, w, b)
	gy := g.Input("g", graph.Float64, 4, 2)
	for _, needs := range [][]bool{{true, false, false}, {false, true, false}, {false, false, true}, {true, true, true}} {
		before := g.Len()
		grads := nn.LinearFunction{}.Backward(graph.NewGradContext(y, needs), gy)
		require.Len(t, grads, 3)
		built := 0
		for i, gi := range grads {
			require.Equal(t, needs[i], gi != nil, "case %v: gradient %d", needs, i)
			if gi != nil {
				require.True(t, gi.Type().Equal(y.Inputs()[i].Type()), "case %v: gradient %d has type %v", needs, i, gi.Type())
				built++
			}
		}
		require.Equal(t, built, g.Len()-before, "case %v: one node per gradient asked for", needs)
	}
	// Without bias there are two inputs and two gradients.
	grads := nn.LinearFunction{}.Backward(graph.NewGradContext(nn.LinearFunc(x, w, nil), []bool{true, true}), gy)
	require.Len(t, grads, 2)
}

// TestLinearFunctionHigherOrders checks three orders of derivatives with
// respect to each input, with and without bias, against finite differences.
func TestLinearFunctionHigherOrders(t *testing.T) {
	shapes := map[string][]int{"x": {4, 3}, "w": {2, 3}, "b": {2}}
	for _, bias := range []bool{true, false} {
		for wrt, shape := range shapes {
			if wrt == "b" && !bias {
				continue
			}
			g := graph.New()
			leaf := func(name string, seed uint64) *graph.Node {
				typ := graph.TypeOf(graph.Float64, shapes[name]...)
				if name == wrt {
					return g.Input(name, graph.Float64, shape...)
				}
				return g.Const(fdtest.TensorOf(t, typ, fdtest.RandomValues(seed, typ.Size())...))
			}
			x, w, b := leaf("x", 1), leaf("w", 2), leaf("b", 3)
			if !bias {
				b = nil
			}
			y := nn.LinearFunc(x, w, b)
			f := ops.Sum(ops.Mul(ops.Tanh(y), g.Const(fdtest.TensorOf(t, y.Type(), fdtest.RandomValues(4, y.Type().Size())...))))
			in := map[string]*graph.Node{"x": x, "w": w, "b": b}[wrt]
			fdtest.CheckOrders(t, "LinearFunction w.r.t. "+wrt, f, in, fdtest.RandomValues(5, graph.ShapeSize(shape)), 3)
		}
	}
}

func TestLinearFunctionBuildErrors(t *testing.T) {
	cases := []struct {
		x, w, b []int
		want    string
	}{
		{[]int{4, 3}, []int{2, 4}, []int{2}, "x has 3 features but W (2,4) expects 4"},
		{[]int{4, 3}, []int{2, 3}, []int{3}, "bias (3) does not match W (2,3): want (2)"},
		{[]int{3}, []int{2, 3}, nil, "must be matrices"},
	}
	for _, c := range cases {
		g := graph.New()
		var b *graph.Node
		if c.b != nil {
			b = g.Input("b", graph.Float64, c.b...)
		}
		y := nn.LinearFunc(g.Input("x", graph.Float64, c.x...), g.Input("w", graph.Float64, c.w...), b)
		require.Error(t, y.Err())
		require.ErrorContains(t, g.Err(), c.want, "case %v", c)
		require.ErrorContains(t, g.Err(), "nabla: LinearFunction: ", "case %v", c)
		require.ErrorContains(t, g.Err(), "linear_test.go:", "case %v", c)
	}
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 3)
	y := graph.Apply(nn.LinearFunction{}, x)
	require.ErrorContains(t, y.Err(), "takes 2 inputs (x, W) or 3 (x, W, b), got 1")
}

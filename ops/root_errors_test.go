package ops_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// halve is x/2 + c in x's dtype, and on its call-th call (counted in
// *calls) fails as given: a panic, or an Add of another dtype.
func halve(c *graph.Node, calls *int, call int, fail string) ops.RootFunc {
	return func(x *graph.Node) *graph.Node {
		*calls++
		switch {
		case *calls == call && fail == "panic":
			panic("boom")
		case *calls == call:
			return ops.Add(x, x.Graph().Scalar(1, graph.Float32))
		}
		return ops.Add(ops.Scale(x, 0.5), c)
	}
}

// An error of the loop FixedPoint iterates in is FixedPoint's, naming T
// where T fails, never the While it builds nor a solve the user did not
// give. T is called once to check it, once on x0, once in the loop.
func TestFixedPointErrorsNameFixedPoint(t *testing.T) {
	for _, c := range []struct {
		name       string
		call       int
		fail, want string
	}{
		{"T panics on x0", 2, "panic", "nabla: FixedPoint: iterating x ← T(x) panicked: boom at %[1]s"},
		{"T panics in the loop", 3, "panic", "nabla: FixedPoint: iterating x ← T(x): T panicked: boom at %[1]s"},
		{"T fails in the loop", 3, "Add", "nabla: FixedPoint: iterating x ← T(x): T: Add at %[2]s: dtypes differ: float64(2) and float32(): convert one with ops.Cast at %[1]s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			calls := 0
			x := ops.FixedPoint(halve(g.Input("c", graph.Float64, 2), &calls, c.call, c.fail), g.Input("x0", graph.Float64, 2), 1e-12, 100)
			want := fmt.Sprintf(c.want, lineAt(-1), lineAt(-23))
			if x.Err() == nil || x.Err().Error() != want || g.Err() == nil || g.Err().Error() != want {
				t.Fatalf("got  %v (the graph's: %v)\nwant %s", x.Err(), g.Err(), want)
			}
		})
	}
}

// Differentiating Root or FixedPoint through an F (a T) that has no
// Backward is the op's error naming F (T), told once, in either way of
// solving with ∂F/∂x; the user's graph keeps no error (the matrix-free
// solve's left one there, and told it with "nabla: " twice).
func TestRootGradErrorsNameF(t *testing.T) {
	noGrad := func(x *graph.Node) *graph.Node { return graph.Apply(noBackwardOp{}, x) }
	for _, solve := range rootSolves {
		for _, c := range []struct {
			name  string
			build func(g *graph.Graph, x *graph.Node) *graph.Node
		}{
			{"Root", func(g *graph.Graph, x *graph.Node) *graph.Node {
				return ops.Root(func(u *graph.Node) *graph.Node { return ops.Sub(noGrad(u), x) }, x,
					func(_ ops.RootFunc, x0 *graph.Node) *graph.Node { return x0 }, solve.opts...)
			}},
			{"FixedPoint", func(g *graph.Graph, x *graph.Node) *graph.Node {
				return ops.FixedPoint(func(u *graph.Node) *graph.Node { return ops.Add(ops.Scale(noGrad(u), 0.5), x) }, x, 1e-12, 100, solve.opts...)
			}},
		} {
			t.Run(solve.name+"/"+c.name, func(t *testing.T) {
				g := graph.New()
				x := g.Input("x", graph.Float64, 3)
				r := c.build(g, x)
				_, err := compile.Grad(ops.Sum(r), x)
				fn := map[string]string{"Root": "F", "FixedPoint": "T"}[c.name]
				want := "nabla: Grad: Backward of " + c.name + ": differentiating " + fn + ": Gradients: op NoBackward is not differentiable: it has no Backward at " + lineAt(-2)
				if err == nil || err.Error() != want {
					t.Fatalf("got  %v\nwant %s", err, want)
				}
				if err := g.Err(); err != nil {
					t.Fatalf("the graph keeps an error: %v", err)
				}
			})
		}
	}
}

// FixedPoint, and Root's matrix-free derivatives, of an x of rank 8:
// their loops carry x flat (a carry of rank 8 cannot be stacked over the
// steps; FixedPoint refused it, naming its While, and Root's gradient
// failed in Root's "solve"). x* = 2c for x = x/2 + c, so dΣx*/dc = 2;
// u* = c/2 for 2u − c = 0, so dΣu*/dc = ½.
func TestRootsOfRankEight(t *testing.T) {
	shape := []int{2, 2, 2, 2, 2, 2, 2, 1} // 128 elements: matrix-free by default
	n := 128
	cv := make([]float64, n)
	for i := range cv {
		cv[i] = float64(i%7) - 3
	}
	g := graph.New()
	c := g.Param("c", f64(t, cv, shape...))
	fixed := ops.FixedPoint(func(x *graph.Node) *graph.Node { return ops.Add(ops.Scale(x, 0.5), c) }, g.Const(graph.NewDenseOf(c.Type())), 1e-14, 200)
	root := ops.Root(func(u *graph.Node) *graph.Node { return ops.Sub(ops.Scale(u, 2), c) }, g.Const(graph.NewDenseOf(c.Type())),
		func(F ops.RootFunc, u0 *graph.Node) *graph.Node { return ops.Scale(c, 0.5) })
	d, err := compile.Grad(ops.Add(ops.Sum(fixed), ops.Sum(root)), c)
	if err != nil {
		t.Fatal(err)
	}
	dRoot, err := compile.Grad(ops.Sum(root), c)
	if err != nil {
		t.Fatal(err)
	}
	got := run(t, []*graph.Node{fixed, root, d[0], dRoot[0]}, nil)
	for i, ci := range cv {
		for _, v := range []struct {
			what      string
			got, want float64
		}{{"x*", got[0][i], 2 * ci}, {"u*", got[1][i], ci / 2}, {"d(Σx* + Σu*)/dc", got[2][i], 2.5}, {"dΣu*/dc", got[3][i], 0.5}} {
			if math.Abs(v.got-v.want) > 1e-9 {
				t.Fatalf("element %d: %s = %v, want %v", i, v.what, v.got, v.want)
			}
		}
	}
}

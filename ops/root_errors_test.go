package ops_test

import (
	"fmt"
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

package ops_test

import (
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// whileLoop is h ← tanh(h·w + b), k ← k + 1 while k < limit: the number
// of steps is set by limit's value at run time.
type whileLoop struct {
	g           *graph.Graph
	limit       *graph.Node
	h0, w, b, k *graph.Node
}

func newWhileLoop(t *testing.T) whileLoop {
	g := graph.New()
	return whileLoop{g: g, limit: g.Input("limit", graph.Float64),
		h0: g.Param("h0", f64(t, []float64{0.3, -0.4}, 2)),
		w:  g.Param("w", f64(t, []float64{0.9, 1.3}, 2)),
		b:  g.Param("b", f64(t, []float64{0.2, -0.1}, 2)),
		k:  g.Scalar(0, graph.Float64)}
}

func (l whileLoop) body(c []*graph.Node) []*graph.Node {
	return []*graph.Node{ops.Tanh(ops.Add(ops.Mul(c[0], l.w), l.b)), ops.Add(c[1], l.g.Scalar(1, graph.Float64))}
}

// derivatives are the loss (the final h's squares, summed), its gradient
// with respect to w and h0, the gradient of ‖∂/∂w‖² (second order) and of
// the sum of that gradient's entries (third), and forward-mode tangents
// of the loss and of its gradient along w.
func (l whileLoop) derivatives(t *testing.T, final *graph.Node) []*graph.Node {
	loss := ops.Sum(ops.Square(final))
	grads, err := compile.GradWith(loss, []*graph.Node{l.w, l.h0}, compile.ZerosIfDisconnected())
	if err != nil {
		t.Fatal(err)
	}
	second, err := compile.GradWith(ops.Sum(ops.Square(grads[0])), []*graph.Node{l.w, l.b}, compile.ZerosIfDisconnected())
	if err != nil {
		t.Fatal(err)
	}
	third, err := compile.GradWith(ops.Sum(second[0]), []*graph.Node{l.w}, compile.ZerosIfDisconnected())
	if err != nil {
		t.Fatal(err)
	}
	tangent := l.g.Const(f64(t, []float64{0.5, -1}, 2))
	jvp, err := compile.JVP([]*graph.Node{loss, grads[0]}, []*graph.Node{l.w}, []*graph.Node{tangent})
	if err != nil {
		t.Fatal(err)
	}
	return append(append(append([]*graph.Node{loss}, grads...), second...), append(third, jvp...)...)
}

// While's values and derivatives, to third order and in forward mode,
// are those of the loop unrolled to the steps it took: none, one,
// stopping early, and stopped by MaxSteps.
func TestWhileMatchesUnrolled(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit float64
		max   int
		steps int
	}{{"zero steps", 0, 5, 0}, {"one step", 0.5, 5, 1}, {"stopping early", 3.5, 6, 4}, {"hitting MaxSteps", 100, 5, 5}} {
		t.Run(c.name, func(t *testing.T) {
			l := newWhileLoop(t)
			final, steps := ops.While(func(c []*graph.Node) *graph.Node {
				return ops.Less(c[1], l.limit)
			}, l.body, []*graph.Node{l.h0, l.k}, ops.MaxSteps(c.max))
			outs := append([]*graph.Node{ops.Cast(steps, graph.Float64), final[0]}, l.derivatives(t, final[0])...)
			got := run(t, outs, vm.Feeds{l.limit: f64(t, []float64{c.limit})})
			if got[0][0] != float64(c.steps) {
				t.Fatalf("%v steps, want %d", got[0][0], c.steps)
			}

			u := newWhileLoop(t)
			carry := []*graph.Node{u.h0, u.k}
			for range c.steps {
				carry = u.body(carry)
			}
			want := run(t, append([]*graph.Node{carry[0]}, u.derivatives(t, carry[0])...), nil)
			names := []string{"final h", "loss", "d/dw", "d/dh0", "second d/dw", "second d/db", "third d/dw", "tangent of the loss", "tangent of d/dw"}
			for i := range want {
				for j := range want[i] {
					if math.Abs(got[i+1][j]-want[i][j]) > 1e-13*math.Max(1, math.Abs(want[i][j])) {
						t.Fatalf("%s: While gives %v, unrolled %v", names[i], got[i+1], want[i])
					}
				}
			}
		})
	}
}

// The loop stops when cond fails on values computed at run time:
// Newton's iteration for √a until x² is within 1e-12 of a, against the
// same iteration in Go.
func TestWhileValuesByHand(t *testing.T) {
	g := graph.New()
	a := g.Input("a", graph.Float64)
	final, steps := ops.While(func(c []*graph.Node) *graph.Node {
		return ops.Greater(ops.Abs(ops.Sub(ops.Square(c[0]), a)), g.Scalar(1e-12, graph.Float64))
	}, func(c []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Scale(ops.Add(c[0], ops.Div(a, c[0])), 0.5)}
	}, []*graph.Node{ops.Add(ops.Scale(a, 0.5), g.Scalar(0.5, graph.Float64))}, ops.MaxSteps(60))
	for _, av := range []float64{1, 2, 9, 1e6} {
		x, n := av/2+0.5, 0
		for ; n < 60 && math.Abs(x*x-av) > 1e-12; n++ {
			x = (x + av/x) / 2
		}
		vals := run(t, []*graph.Node{final[0], ops.Cast(steps, graph.Float64)}, vm.Feeds{a: f64(t, []float64{av})})
		if vals[0][0] != x || vals[1][0] != float64(n) {
			t.Errorf("√%v: %v after %v steps, want %v after %d", av, vals[0][0], vals[1][0], x, n)
		}
	}
}

func TestWhileErrors(t *testing.T) {
	keepGoing := func(c []*graph.Node) *graph.Node { return ops.Sum(c[0]) }
	same := func(c []*graph.Node) []*graph.Node { return c }
	cases := []struct {
		name  string
		build func(g *graph.Graph) []*graph.Node
		want  string
	}{
		{"MaxSteps missing", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.While(keepGoing, same, []*graph.Node{g.Input("h", graph.Float64, 2)})
			return f
		}, "MaxSteps is missing: bound the loop with MaxSteps(n)"},
		{"MaxSteps zero", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.While(keepGoing, same, []*graph.Node{g.Input("h", graph.Float64, 2)}, ops.MaxSteps(0))
			return f
		}, "MaxSteps(0) is not positive"},
		{"MaxSteps negative", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.While(keepGoing, same, []*graph.Node{g.Input("h", graph.Float64, 2)}, ops.MaxSteps(-3))
			return f
		}, "MaxSteps(-3) is not positive"},
		{"body changes shapes", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.While(keepGoing, func(c []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Concat(0, c[0], c[0])}
			}, []*graph.Node{g.Input("h", graph.Float64, 2)}, ops.MaxSteps(3))
			return f
		}, "body returns carry 0 of type float64(4), want init's float64(2)"},
		{"body changes dtypes", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.While(keepGoing, func(c []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Cast(c[0], graph.Float32)}
			}, []*graph.Node{g.Input("h", graph.Float64, 2)}, ops.MaxSteps(3))
			return f
		}, "body returns carry 0 of type float32(2), want init's float64(2)"},
		{"body returns another number of carries", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.While(keepGoing, func(c []*graph.Node) []*graph.Node { return nil },
				[]*graph.Node{g.Input("h", graph.Float64, 2)}, ops.MaxSteps(3))
			return f
		}, "body returns 0 carries for 1"},
		{"cond of several values", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.While(func(c []*graph.Node) *graph.Node { return c[0] }, same,
				[]*graph.Node{g.Input("h", graph.Float64, 2)}, ops.MaxSteps(3))
			return f
		}, "cond returns a node of type float64(2): it must hold one value"},
		{"cond panics", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.While(func([]*graph.Node) *graph.Node { panic("boom") }, same,
				[]*graph.Node{g.Input("h", graph.Float64, 2)}, ops.MaxSteps(3))
			return f
		}, "cond: panicked: boom"},
		{"body makes a parameter", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.While(keepGoing, func(c []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Add(c[0], c[0].Graph().Param("w", graph.NewDense(graph.Float64, 2)))}
			}, []*graph.Node{g.Input("h", graph.Float64, 2)}, ops.MaxSteps(3))
			return f
		}, `body makes parameter param "w"`},
		{"nil body", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.While(keepGoing, nil, []*graph.Node{g.Input("h", graph.Float64, 2)}, ops.MaxSteps(3))
			return f
		}, "cond or body is nil"},
		{"no carry", func(g *graph.Graph) []*graph.Node {
			f, s := ops.While(keepGoing, same, nil, ops.MaxSteps(3))
			return append(f, s)
		}, "no carry: give init"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			outs := c.build(g)
			if len(outs) == 0 || outs[0].Err() == nil {
				t.Fatalf("no error")
			}
			err := outs[0].Err()
			if err == nil || !strings.Contains(err.Error(), "nabla: While: "+c.want) || !strings.Contains(err.Error(), "while_test.go:") {
				t.Fatalf("error %v, want one from While containing %q and the caller's file", err, c.want)
			}
		})
	}
}

// A While stops at the step where cond first fails: the steps after it
// are not run (cond is evaluated once more than the steps taken, not
// MaxSteps times), and the results are those of running them all. Its
// gradient's loop skips them too (evaluating cond again at the steps
// taken only).
func TestWhileStopsAtTheFirstFailure(t *testing.T) {
	var evals atomic.Int64
	g := graph.New()
	limit := g.Input("limit", graph.Float64)
	one := g.Scalar(1, graph.Float64)
	final, steps := ops.While(func(c []*graph.Node) *graph.Node {
		return graph.Apply(countOp{runs: &evals}, ops.Less(c[1], limit))
	}, func(c []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Sin(c[0]), ops.Add(c[1], one)}
	}, []*graph.Node{g.Scalar(1, graph.Float64), g.Scalar(0, graph.Float64)}, ops.MaxSteps(50))
	x0 := g.Param("x0", f64(t, []float64{1}))
	gfinal, _ := ops.While(func(c []*graph.Node) *graph.Node {
		return graph.Apply(countOp{runs: &evals}, ops.Less(c[1], limit))
	}, func(c []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Sin(c[0]), ops.Add(c[1], one)}
	}, []*graph.Node{ops.Reshape(x0), g.Scalar(0, graph.Float64)}, ops.MaxSteps(50))
	grads, err := compile.Grad(gfinal[0], x0)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 3, 50} {
		evals.Store(0)
		vals := run(t, []*graph.Node{final[0], ops.Cast(steps, graph.Float64)}, vm.Feeds{limit: f64(t, []float64{float64(n)})})
		x := 1.0
		for range n {
			x = math.Sin(x)
		}
		if vals[0][0] != x || vals[1][0] != float64(n) {
			t.Fatalf("limit %d: %v after %v steps, want %v after %d", n, vals[0][0], vals[1][0], x, n)
		}
		if want := min(n+1, 50); evals.Load() != int64(want) {
			t.Fatalf("limit %d: cond ran %d times, want %d", n, evals.Load(), want)
		}
		evals.Store(0)
		d, x := 1.0, 1.0 // the derivative of sin applied n times, by the chain rule
		for range n {
			d, x = d*math.Cos(x), math.Sin(x)
		}
		vals = run(t, grads, vm.Feeds{limit: f64(t, []float64{float64(n)})})
		if math.Abs(vals[0][0]-d) > 1e-15 {
			t.Fatalf("limit %d: gradient %v, want %v", n, vals[0][0], d)
		}
		if want := min(n+1, 50) + n; evals.Load() != int64(want) {
			t.Fatalf("limit %d: with the gradient, cond ran %d times, want %d", n, evals.Load(), want)
		}
	}
}

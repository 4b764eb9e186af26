package ops_test

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/site"
	"github.com/nabla-go/nabla/ops"
)

// lineAt is the file:line delta lines below the line calling it.
var lineAt = site.At

// noBackwardOp is an identity without a Backward.
type noBackwardOp struct{}

func (noBackwardOp) Name() string                                        { return "NoBackward" }
func (noBackwardOp) Type(in []graph.Type) (graph.Type, error)            { return in[0], nil }
func (noBackwardOp) Forward(out *tensor.Dense, in []*tensor.Dense) error { return nil }

// An op failing in a body or branch is told once: one "nabla: ", the op
// holding the body, the failing op, with its own line where it is not
// the caller's, and the caller's line at the end, once.
func TestNestedErrorsReadOnce(t *testing.T) {
	same := func(o []*graph.Node) []*graph.Node { return o }
	const differ = "dtypes differ: float64(3) and float32(3): convert one with ops.Cast at "
	for _, c := range []struct {
		name  string
		build func(g *graph.Graph, x, y *graph.Node) (out *graph.Node, want string)
	}{
		{"Scan body", func(g *graph.Graph, x, y *graph.Node) (*graph.Node, string) {
			call, add := lineAt(1), lineAt(2)
			final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Add(c[0], y)}, nil
			}, []*graph.Node{x}, nil, ops.Steps(2))
			return final[0], "nabla: Scan: body: Add at " + add + ": " + differ + call
		}},
		{"Cond branch on the caller's line", func(g *graph.Graph, x, y *graph.Node) (*graph.Node, string) {
			call := lineAt(1)
			out := ops.Cond(g.Scalar(1, graph.Float64), func(o []*graph.Node) []*graph.Node { return []*graph.Node{ops.Add(o[0], y)} }, same, []*graph.Node{x})
			return out[0], "nabla: Cond: then branch: Add: " + differ + call
		}},
		{"While cond", func(g *graph.Graph, x, y *graph.Node) (*graph.Node, string) {
			call, less := lineAt(1), lineAt(2)
			final, _ := ops.While(func(c []*graph.Node) *graph.Node {
				return ops.Less(ops.Sum(c[0]), ops.Sum(y))
			}, same, []*graph.Node{x}, ops.MaxSteps(3))
			return final[0], "nabla: While: cond: Less at " + less + ": dtypes differ: float64() and float32(): convert one with ops.Cast at " + call
		}},
		{"While body", func(g *graph.Graph, x, y *graph.Node) (*graph.Node, string) {
			call, sub := lineAt(1), lineAt(3)
			final, _ := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(ops.Sum(c[0]), ops.Sum(c[0])) },
				func(c []*graph.Node) []*graph.Node {
					return []*graph.Node{ops.Sub(c[0], y)}
				}, []*graph.Node{x}, ops.MaxSteps(3))
			return final[0], "nabla: While: body: Sub at " + sub + ": " + differ + call
		}},
		{"Scan in a Scan's body", func(g *graph.Graph, x, y *graph.Node) (*graph.Node, string) {
			call, inner, mul := lineAt(1), lineAt(2), lineAt(3)
			final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
				in, _ := ops.Scan(func(d, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
					return []*graph.Node{ops.Mul(d[0], y)}, nil
				}, c, nil, ops.Steps(2))
				return in, nil
			}, []*graph.Node{x}, nil, ops.Steps(2))
			return final[0], "nabla: Scan: body: Scan at " + inner + ": body: Mul at " + mul + ": " + differ + call
		}},
		{"Root's F", func(g *graph.Graph, x, y *graph.Node) (*graph.Node, string) {
			call, add := lineAt(1), lineAt(2)
			root := ops.Root(func(x *graph.Node) *graph.Node {
				return ops.Add(x, y)
			}, x, func(_ ops.RootFunc, x0 *graph.Node) *graph.Node { return x0 })
			return root, "nabla: Root: F: Add at " + add + ": " + differ + call
		}},
		{"Root's solve", func(g *graph.Graph, x, y *graph.Node) (*graph.Node, string) {
			call, add := lineAt(1), lineAt(2)
			root := ops.Root(func(x *graph.Node) *graph.Node { return x }, x, func(_ ops.RootFunc, x0 *graph.Node) *graph.Node {
				return ops.Add(x0, y)
			})
			return root, "nabla: Root: solve: Add at " + add + ": " + differ + call
		}},
		{"Root's solve on the caller's line", func(g *graph.Graph, x, y *graph.Node) (*graph.Node, string) {
			call := lineAt(1)
			root := ops.Root(func(x *graph.Node) *graph.Node { return x }, x, func(_ ops.RootFunc, x0 *graph.Node) *graph.Node { return ops.Add(x0, y) })
			return root, "nabla: Root: solve: Add: " + differ + call
		}},
		{"Checkpoint's f", func(g *graph.Graph, x, y *graph.Node) (*graph.Node, string) {
			call, sub := lineAt(1), lineAt(2)
			outs := ops.Checkpoint(func(in []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sub(in[0], y)}
			}, x)
			return outs[0], "nabla: Checkpoint: f: Sub at " + sub + ": " + differ + call
		}},
		{"Checkpoint in a Scan's body", func(g *graph.Graph, x, y *graph.Node) (*graph.Node, string) {
			call, inner, mul := lineAt(1), lineAt(2), lineAt(3)
			final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return ops.Checkpoint(func(in []*graph.Node) []*graph.Node {
					return []*graph.Node{ops.Mul(in[0], y)}
				}, c...), nil
			}, []*graph.Node{x}, nil, ops.Steps(2))
			return final[0], "nabla: Scan: body: Checkpoint at " + inner + ": f: Mul at " + mul + ": " + differ + call
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			out, want := c.build(g, g.Input("x", graph.Float64, 3), g.Input("y", graph.Float32, 3))
			if out.Err() == nil || out.Err().Error() != want {
				t.Fatalf("got  %v\nwant %s", out.Err(), want)
			}
			if g.Err() == nil || g.Err().Error() != want {
				t.Fatalf("the graph's error is %v, want %s", g.Err(), want)
			}
		})
	}
}

// Differentiating a body or branch holding an op without a Backward is
// told once too, naming the function the user called (While, not the
// Scan it builds, nor the Cond of its step).
func TestNestedGradErrorsReadOnce(t *testing.T) {
	same := func(o []*graph.Node) []*graph.Node { return o }
	noGrad := func(x *graph.Node) *graph.Node { return graph.Apply(noBackwardOp{}, x) }
	const tail = "Gradients: op NoBackward is not differentiable: it has no Backward at "
	for _, c := range []struct {
		name  string
		build func(g *graph.Graph, x *graph.Node) *graph.Node
		want  string
	}{
		{"Scan", func(g *graph.Graph, x *graph.Node) *graph.Node {
			final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{noGrad(c[0])}, nil
			}, []*graph.Node{x}, nil, ops.Steps(2))
			return final[0]
		}, "nabla: Grad: Backward of Scan: differentiating the body: " + tail},
		{"Cond", func(g *graph.Graph, x *graph.Node) *graph.Node {
			return ops.Cond(g.Input("p", graph.Float64), func(o []*graph.Node) []*graph.Node { return []*graph.Node{noGrad(o[0])} }, same, []*graph.Node{x})[0]
		}, "nabla: Grad: Backward of Cond: differentiating the then branch: " + tail},
		{"While", func(g *graph.Graph, x *graph.Node) *graph.Node {
			final, _ := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(ops.Sum(c[0]), g.Scalar(3, graph.Float64)) },
				func(c []*graph.Node) []*graph.Node { return []*graph.Node{noGrad(c[0])} }, []*graph.Node{x}, ops.MaxSteps(3))
			return final[0]
		}, "nabla: Grad: Backward of While: differentiating the body: " + tail},
		{"Cond in a While's body", func(g *graph.Graph, x *graph.Node) *graph.Node {
			final, _ := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(ops.Sum(c[0]), g.Scalar(3, graph.Float64)) },
				func(c []*graph.Node) []*graph.Node {
					return ops.Cond(g.Input("p", graph.Float64), func(o []*graph.Node) []*graph.Node { return []*graph.Node{noGrad(o[0])} }, same, c)
				}, []*graph.Node{x}, ops.MaxSteps(3))
			return final[0]
		}, "nabla: Grad: Backward of While: differentiating the body: Gradients: Backward of Cond: differentiating the then branch: " + tail},
		{"Scan with Until", func(g *graph.Graph, x *graph.Node) *graph.Node {
			final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{noGrad(c[0])}, []*graph.Node{ops.Less(ops.Sum(c[0]), g.Scalar(3, graph.Float64))}
			}, []*graph.Node{x}, nil, ops.Steps(3), ops.Until())
			return final[0]
		}, "nabla: Grad: Backward of Scan: differentiating the body: " + tail},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", graph.Float64, 3)
			out := c.build(g, x)
			_, err := compile.Grad(ops.Sum(out), x)
			want := c.want + lineAt(-1)
			if err == nil || err.Error() != want {
				t.Fatalf("got  %v\nwant %s", err, want)
			}
		})
	}
}

// onceOp is an identity differentiable once: its gradient holds an op
// without a Backward.
type onceOp struct{ noBackwardOp }

func (onceOp) Name() string { return "Once" }

func (onceOp) Backward(_ *graph.GradContext, gOut *graph.Node) []*graph.Node {
	return []*graph.Node{graph.Apply(noBackwardOp{}, gOut)}
}

// A second derivative failing in a loop's gradient names the loop the
// user wrote: the gradient of a While is a Scan, which was named.
func TestSecondDerivativeErrorsNameTheLoop(t *testing.T) {
	body := func(c []*graph.Node) []*graph.Node { return []*graph.Node{ops.Mul(graph.Apply(onceOp{}, c[0]), c[0])} }
	scanBody := func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) { return body(c), nil }
	for _, c := range []struct {
		name  string
		build func(g *graph.Graph, x *graph.Node) *graph.Node
		want  string
	}{
		{"While", func(g *graph.Graph, x *graph.Node) *graph.Node {
			final, _ := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(ops.Sum(c[0]), g.Scalar(3, graph.Float64)) },
				body, []*graph.Node{x}, ops.MaxSteps(3))
			return final[0]
		}, "While"},
		{"Scan", func(g *graph.Graph, x *graph.Node) *graph.Node {
			final, _ := ops.Scan(scanBody, []*graph.Node{x}, nil, ops.Steps(2))
			return final[0]
		}, "Scan"},
		{"reversed Scan", func(g *graph.Graph, x *graph.Node) *graph.Node {
			final, _ := ops.Scan(scanBody, []*graph.Node{x}, nil, ops.Steps(2), ops.Reverse())
			return final[0]
		}, "Scan(reverse)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", graph.Float64, 3)
			loss := ops.Sum(c.build(g, x))
			if _, err := compile.Grad(loss, x); err != nil {
				t.Fatalf("the first derivative: %v", err)
			}
			_, err := compile.Hessian(loss, x)
			want := "nabla: Hessian: Backward of " + c.want + ": differentiating the body: Gradients: op NoBackward is not differentiable: it has no Backward at " + lineAt(-1)
			if err == nil || err.Error() != want {
				t.Fatalf("got  %v\nwant %s", err, want)
			}
		})
	}
}

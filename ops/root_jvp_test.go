package ops_test

import (
	"math"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// opaqueOp is an identity without a Backward or a forward rule.
type opaqueOp struct{}

func (opaqueOp) Name() string                             { return "Opaque" }
func (opaqueOp) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }
func (opaqueOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	graph.CopyValues(out, in[0])
	return nil
}

// opaqueNewton is a solve of Newton steps x ← x − F(x)/2x (for F(x) =
// x² − a) in a While whose body passes x through an op that has no
// derivative: Root never differentiates its solve.
func opaqueNewton(F ops.RootFunc, x0 *graph.Node) *graph.Node {
	g := x0.Graph()
	out, _ := ops.While(func(c []*graph.Node) *graph.Node {
		return ops.Greater(ops.Max(ops.Abs(F(c[0]))), g.Scalar(1e-13, graph.Float64))
	}, func(c []*graph.Node) []*graph.Node {
		return []*graph.Node{graph.Apply(opaqueOp{}, ops.Sub(c[0], ops.Div(F(c[0]), ops.Scale(c[0], 2))))}
	}, []*graph.Node{x0}, ops.MaxSteps(100))
	return out[0]
}

// Forward mode through Root and FixedPoint stops at the solution: a Root
// whose solve loop holds an op without a derivative has a JVP (it
// failed: "JVP: Backward of While: differentiating the body: …"), in
// either way of solving and with a batch of tangents (the forward-mode
// Jacobian). x* = √a and x* = a/(1 − w/2) for x = xw/2 + a; their
// tangents along (da, dw) against central differences of the solutions.
func TestRootJVPStopsAtTheSolution(t *testing.T) {
	av, wv := []float64{2, 9, 0.3}, []float64{0.5, -1, 1.2}
	da, dw := []float64{0.3, -0.5, 0.9}, []float64{-0.2, 0.4, 0.1}
	for _, solve := range rootSolves {
		for _, c := range []struct {
			name  string
			build func(a, w *graph.Node) *graph.Node
		}{
			{"Root", func(a, _ *graph.Node) *graph.Node {
				return ops.Root(func(x *graph.Node) *graph.Node { return ops.Sub(ops.Square(x), a) }, a, opaqueNewton, solve.opts...)
			}},
			{"FixedPoint", func(a, w *graph.Node) *graph.Node {
				return ops.FixedPoint(func(x *graph.Node) *graph.Node { return ops.Add(ops.Scale(ops.Mul(x, w), 0.5), a) }, a, 1e-15, 500, solve.opts...)
			}},
		} {
			t.Run(solve.name+"/"+c.name, func(t *testing.T) {
				solution := func(a, w []float64) []float64 {
					g := graph.New()
					ai, wi := g.Input("a", graph.Float64, 3), g.Input("w", graph.Float64, 3)
					return run(t, []*graph.Node{c.build(ai, wi)}, vm.Feeds{ai: f64(t, a, 3), wi: f64(t, w, 3)})[0]
				}
				g := graph.New()
				a, w := g.Input("a", graph.Float64, 3), g.Input("w", graph.Float64, 3)
				x := c.build(a, w)
				tan, err := compile.JVP([]*graph.Node{x}, []*graph.Node{a, w}, []*graph.Node{g.Const(f64(t, da, 3)), g.Const(f64(t, dw, 3))})
				if err != nil {
					t.Fatal(err)
				}
				jac, err := compile.JacobianWith(x, a, compile.Forward)
				if err != nil {
					t.Fatal(err)
				}
				got := run(t, []*graph.Node{tan[0], jac}, vm.Feeds{a: f64(t, av, 3), w: f64(t, wv, 3)})
				const h = 1e-6
				move := func(v, d []float64, s float64) []float64 {
					r := make([]float64, len(v))
					for i := range r {
						r[i] = v[i] + s*h*d[i]
					}
					return r
				}
				plus, minus := solution(move(av, da, 1), move(wv, dw, 1)), solution(move(av, da, -1), move(wv, dw, -1))
				for i := range plus {
					if want := (plus[i] - minus[i]) / (2 * h); math.Abs(got[0][i]-want) > 1e-7*max(1, math.Abs(want)) {
						t.Errorf("element %d: tangent %v, central differences %v", i, got[0][i], want)
					}
				}
				for j := range av { // column j of ∂x*/∂a: x* moves with a_j alone
					e := make([]float64, len(av))
					e[j] = 1
					plus, minus := solution(move(av, e, 1), wv), solution(move(av, e, -1), wv)
					for i := range plus {
						if want := (plus[i] - minus[i]) / (2 * h); math.Abs(got[1][i*3+j]-want) > 1e-7*max(1, math.Abs(want)) {
							t.Errorf("∂x*[%d]/∂a[%d] = %v, central differences %v", i, j, got[1][i*3+j], want)
						}
					}
				}
			})
		}
	}
}

// Forward mode through a Root or FixedPoint whose F (T) has no
// derivative is the op's error naming F (T), in either way of solving
// and with a batch of tangents; it named neither ("JVP: op NoBackward is
// not differentiable"), from the forward solve's loop.
func TestRootJVPErrorsNameF(t *testing.T) {
	noGrad := func(x *graph.Node) *graph.Node { return graph.Apply(opaqueOp{}, x) }
	for _, solve := range rootSolves {
		for _, c := range []struct {
			name  string
			build func(x *graph.Node) *graph.Node
		}{
			{"Root", func(x *graph.Node) *graph.Node {
				return ops.Root(func(u *graph.Node) *graph.Node { return ops.Sub(noGrad(ops.Square(u)), x) }, x,
					func(_ ops.RootFunc, x0 *graph.Node) *graph.Node { return ops.Sqrt(x0) }, solve.opts...)
			}},
			{"FixedPoint", func(x *graph.Node) *graph.Node {
				return ops.FixedPoint(func(u *graph.Node) *graph.Node { return ops.Add(ops.Scale(noGrad(u), 0.5), x) }, x, 1e-12, 100, solve.opts...)
			}},
		} {
			t.Run(solve.name+"/"+c.name, func(t *testing.T) {
				g := graph.New()
				x := g.Input("x", graph.Float64, 3)
				r := c.build(x)
				fn := map[string]string{"Root": "F", "FixedPoint": "T"}[c.name]
				_, err := compile.JVP([]*graph.Node{r}, []*graph.Node{x}, []*graph.Node{x})
				want := "nabla: JVP: JVP of " + c.name + ": differentiating " + fn + ": op Opaque is not differentiable: it has no Backward at " + lineAt(-1)
				if err == nil || err.Error() != want {
					t.Errorf("got  %v\nwant %s", err, want)
				}
				_, err = compile.JacobianWith(r, x, compile.Forward)
				want = "nabla: Jacobian: JVP of " + c.name + ": differentiating " + fn + ": op Opaque is not differentiable: it has no Backward at " + lineAt(-1)
				if err == nil || err.Error() != want {
					t.Errorf("batched: got  %v\nwant %s", err, want)
				}
			})
		}
	}
}

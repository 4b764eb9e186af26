package compile_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// tanhNet is f(x) = sum(tanh(tanh(x·W1 + b1)·W2 + b2)) with x of shape
// (1, n) and random constant weights: the W3 workload's function.
func tanhNet(n int) (x, f *graph.Node, x0 *tensor.Dense) {
	rng := rand.New(rand.NewPCG(3, uint64(n)))
	random := func(scale float64, shape ...int) *tensor.Dense {
		v := make([]float64, graph.ShapeSize(shape))
		for i := range v {
			v[i] = scale * (2*rng.Float64() - 1)
		}
		return must(graph.FromFloat64s(graph.Float64, v, shape...))
	}
	g := graph.New()
	x = g.Input("x", graph.Float64, 1, n)
	s := 1 / math.Sqrt(float64(n))
	layer := func(h *graph.Node) *graph.Node {
		return ops.Tanh(ops.Add(ops.MatMul(h, g.Const(random(s, n, n))), g.Const(random(0.1, n))))
	}
	return x, ops.Sum(layer(layer(x))), random(1, 1, n)
}

// derivatives builds the W3 quantities of tanhNet: the gradient, a
// Hessian–vector product (forward over reverse) and the Hessian.
func derivatives(tb testing.TB, x, f *graph.Node, v *tensor.Dense) (grad, hvp, hess *graph.Node) {
	gr := must(compile.Grad(f, x))
	hvp = must(compile.HVP(f, x, x.Graph().Const(v)))
	hess = must(compile.Hessian(f, x))
	return gr[0], hvp, hess
}

// Forward rules and the derivation of every tangent from the ops'
// Backward give the same Hessian–vector product and Hessian, and the rules
// compile to no more instructions.
func TestForwardRulesAgreeWithTransposition(t *testing.T) {
	const n = 8
	x, f, x0 := tanhNet(n)
	v := x0.Clone().(*tensor.Dense)
	_, hvp, hess := derivatives(t, x, f, v)
	restore := compile.TransposeEveryOp()
	_, hvpT, hessT := derivatives(t, x, f, v)
	restore()
	outs := []*graph.Node{hvp, hess, hvpT, hessT}
	vals := runNodes(t, vm.Feeds{x: x0}, outs...)
	for k := range 2 {
		for i, want := range vals[k+2] {
			if got := vals[k][i]; math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
				t.Fatalf("output %d entry %d: forward rules give %v, transposition %v", k, i, got, want)
			}
		}
	}
	for k, pair := range [][2]*graph.Node{{hvp, hvpT}, {hess, hessT}} {
		rules, transposed := instructions(t, pair[0]), instructions(t, pair[1])
		t.Logf("output %d: %d instructions with forward rules, %d by transposition", k, rules, transposed)
		if rules > transposed {
			t.Errorf("output %d: forward rules compile to %d instructions, transposition to %d", k, rules, transposed)
		}
	}
}

func instructions(t *testing.T, out *graph.Node) int {
	t.Helper()
	p, err := compile.Compile([]*graph.Node{out})
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Instructions())
}

// runNodes compiles outs, runs them once on feeds and returns their values.
func runNodes(t testing.TB, feeds vm.Feeds, outs ...*graph.Node) [][]float64 {
	t.Helper()
	return runNodesWith(t, feeds, nil, outs...)
}

// runNodesWith is runNodes compiling with opts.
func runNodesWith(t testing.TB, feeds vm.Feeds, opts []compile.Option, outs ...*graph.Node) [][]float64 {
	t.Helper()
	p, err := compile.Compile(outs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	return fdtest.Values(t, m, outs)
}

// cubeOp is a custom op, x³, with a Backward; with rule set it also has a
// forward rule, which counts its calls.
type cubeOp struct{ calls *int }

func (cubeOp) Name() string                             { return "Cube" }
func (cubeOp) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }
func (cubeOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	for i, v := range in[0].Float64s() {
		out.Float64s()[i] = v * v * v
	}
	return nil
}
func (cubeOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	x := ctx.Input(0)
	return []*graph.Node{ops.Mul(g, ops.Scale(ops.Square(x), 3))}
}

type cubeWithRule struct{ cubeOp }

func (op cubeWithRule) JVP(c *graph.JVPContext) *graph.Node {
	*op.calls++
	return ops.Mul(c.Tangent(0), ops.Scale(ops.Square(c.Input(0)), 3))
}

// A custom op gets forward mode from its Backward, batched or not, and a
// custom op's forward rule is used where it has one; both give 3x²·t.
func TestCustomOpForwardMode(t *testing.T) {
	for _, withRule := range []bool{false, true} {
		t.Run(fmt.Sprintf("rule=%v", withRule), func(t *testing.T) {
			calls := 0
			g := graph.New()
			x := g.Input("x", graph.Float64, 3)
			var op graph.Op = cubeOp{&calls}
			if withRule {
				op = cubeWithRule{cubeOp{&calls}}
			}
			y := graph.Apply(op, ops.Sin(x))
			tangent := g.Const(must(graph.FromFloat64s(graph.Float64, []float64{1, -2, 0.5}, 3)))
			jvp := must(compile.JVP([]*graph.Node{y}, []*graph.Node{x}, []*graph.Node{tangent}))[0]
			jac := must(compile.JacobianWith(y, x, compile.Forward))
			x0 := []float64{0.3, -1.1, 2}
			vals := runNodes(t, vm.Feeds{x: must(graph.FromFloat64s(graph.Float64, x0, 3))}, jvp, jac)
			for i, xi := range x0 {
				d := 3 * math.Pow(math.Sin(xi), 2) * math.Cos(xi) // d/dx sin³x
				if want := d * []float64{1, -2, 0.5}[i]; math.Abs(vals[0][i]-want) > 1e-12 {
					t.Errorf("JVP entry %d = %v, want %v", i, vals[0][i], want)
				}
				for j := range 3 {
					want := 0.0
					if i == j {
						want = d
					}
					if got := vals[1][i*3+j]; math.Abs(got-want) > 1e-12 {
						t.Errorf("Jacobian entry (%d, %d) = %v, want %v", i, j, got, want)
					}
				}
			}
			if withRule != (calls == 2) {
				t.Errorf("forward rule called %d times", calls)
			}
		})
	}
}

// BenchmarkForwardRules times W3's Hessian–vector product and Hessian
// with every tangent built by forward rules and by transposition, beside
// the gradient (the unit of cost), on one thread.
func BenchmarkForwardRules(b *testing.B) {
	x, f, x0 := tanhNet(64)
	v := x0.Clone().(*tensor.Dense)
	grad, hvp, hess := derivatives(b, x, f, v)
	restore := compile.TransposeEveryOp()
	_, hvpT, hessT := derivatives(b, x, f, v)
	restore()
	for _, c := range []struct {
		name string
		out  *graph.Node
	}{{"grad", grad}, {"hvp/rules", hvp}, {"hvp/transposed", hvpT}, {"hessian/rules", hess}, {"hessian/transposed", hessT}} {
		b.Run(c.name, func(b *testing.B) {
			p := must(compile.Compile([]*graph.Node{c.out}))
			m := must(vm.New(p, vm.WithThreads(1)))
			for b.Loop() {
				if err := m.Run(vm.Feeds{x: x0}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(p.Instructions())), "instrs")
		})
	}
}

// A Scan's forward rule, a Scan carrying the tangents beside the state,
// builds every tangent (no rule declines) and gives the same JVPs and forward-mode Jacobians, for carries,
// sequences and captured values, batched or not.
func TestScanForwardRule(t *testing.T) {
	g := graph.New()
	h0 := g.Input("h0", graph.Float64, 3)
	xs := g.Input("xs", graph.Float64, 5, 3)
	w := g.Input("w", graph.Float64, 3, 3)
	final, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		h := ops.Tanh(ops.Add(ops.Reshape(ops.MatMul(w, ops.Reshape(c[0], 3, 1)), 3), x[0]))
		return []*graph.Node{h}, []*graph.Node{ops.Square(h)}
	}, []*graph.Node{h0}, []*graph.Node{xs})
	y := ops.Add(ops.Sum(ys[0], 0), final[0])
	rng := rand.New(rand.NewPCG(5, 5))
	random := func(shape ...int) *tensor.Dense {
		v := make([]float64, graph.ShapeSize(shape))
		for i := range v {
			v[i] = 2*rng.Float64() - 1
		}
		return must(graph.FromFloat64s(graph.Float64, v, shape...))
	}
	wrt := []*graph.Node{h0, xs, w}
	tangents := []*graph.Node{g.Const(random(3)), g.Const(random(5, 3)), g.Const(random(3, 3))}
	build := func() []*graph.Node {
		outs := must(compile.JVP([]*graph.Node{y}, wrt, tangents))
		for _, x := range wrt {
			outs = append(outs, must(compile.JacobianWith(y, x, compile.Forward)))
		}
		return outs
	}
	stop := compile.CountDeclines()
	rule := build()
	if n := stop(); n > 0 {
		t.Fatalf("%d forward rules declined", n)
	}
	restore := compile.TransposeEveryOp()
	transposed := build()
	restore()
	feeds := vm.Feeds{h0: random(3), xs: random(5, 3), w: random(3, 3)}
	got := runNodes(t, feeds, append(rule, transposed...)...)
	for k := range rule {
		for i, want := range got[len(rule)+k] {
			if math.Abs(got[k][i]-want) > 1e-12*max(1, math.Abs(want)) {
				t.Fatalf("output %d entry %d: forward rule %v, transposition %v", k, i, got[k][i], want)
			}
		}
	}
}

// sumCubesOp is a custom op with a scalar output, Σ x³, and no forward
// rule.
type sumCubesOp struct{}

func (sumCubesOp) Name() string { return "SumCubes" }
func (sumCubesOp) Type(in []graph.Type) (graph.Type, error) {
	return graph.TypeOf(in[0].DType), nil
}
func (sumCubesOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	s := 0.0
	for _, v := range in[0].Float64s() {
		s += v * v * v
	}
	out.Float64s()[0] = s
	return nil
}
func (sumCubesOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{ops.Mul(g, ops.Scale(ops.Square(ctx.Input(0)), 3))}
}

// An op with a scalar output and no rule gets all its batched tangents
// from one Backward: its forward-mode Jacobian is its gradient, 3x².
func TestScalarOutputForwardMode(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 2)
	y := graph.Apply(sumCubesOp{}, ops.Sin(x))
	jac := must(compile.JacobianWith(y, x, compile.Forward))
	x0 := []float64{0.3, -1.1, 2, 0.7}
	got := runNodes(t, vm.Feeds{x: must(graph.FromFloat64s(graph.Float64, x0, 2, 2))}, jac)[0]
	for i, xi := range x0 {
		if want := 3 * math.Pow(math.Sin(xi), 2) * math.Cos(xi); math.Abs(got[i]-want) > 1e-12 {
			t.Errorf("Jacobian entry %d = %v, want %v", i, got[i], want)
		}
	}
}

// wrongRuleOp is cubeOp with a forward rule that returns a tangent of
// the wrong shape.
type wrongRuleOp struct{ cubeOp }

func (wrongRuleOp) JVP(c *graph.JVPContext) *graph.Node {
	return ops.Concat(0, c.Tangent(0), c.Tangent(0))
}

// A rule's tangent of the wrong shape is an error naming the op, and the
// user's graph is not poisoned by it.
func TestForwardRuleOfTheWrongShape(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	y := graph.Apply(wrongRuleOp{cubeOp{new(int)}}, x)
	_, err := compile.JVP([]*graph.Node{y}, []*graph.Node{x}, []*graph.Node{g.Const(graph.NewDense(graph.Float64, 3))})
	if err == nil || !strings.Contains(err.Error(), "forward rule of Cube") || !strings.Contains(err.Error(), "shape (6)") {
		t.Fatalf("got %v, want an error naming the rule and the shape", err)
	}
	if g.Err() != nil {
		t.Errorf("the graph is poisoned: %v", g.Err())
	}
}

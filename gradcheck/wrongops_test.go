package gradcheck_test

import (
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// testOp is a custom op assembled from functions, so each test can get one
// thing wrong. Type defaults to the first input's type; Forward works on
// float64 backing slices.
type testOp struct {
	name     string
	typ      func(in []graph.Type) (graph.Type, error)
	forward  func(out []float64, in [][]float64)
	backward func(ctx *graph.GradContext, g *graph.Node) []*graph.Node
}

func (op *testOp) Name() string { return op.name }

func (op *testOp) Type(in []graph.Type) (graph.Type, error) {
	if op.typ != nil {
		return op.typ(in)
	}
	return in[0], nil
}

func (op *testOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	xs := make([][]float64, len(in))
	for i, x := range in {
		xs[i] = x.Float64s()
	}
	op.forward(out.Float64s(), xs)
	return nil
}

func (op *testOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return op.backward(ctx, g)
}

// squareForward is x² elementwise.
func squareForward(out []float64, in [][]float64) {
	for i, v := range in[0] {
		out[i] = v * v
	}
}

// square returns x² with a correct Backward, 2x·g, unless grad overrides
// the factor 2x.
func square(name string, grad func(x *graph.Node) *graph.Node) *testOp {
	return &testOp{name: name, forward: squareForward,
		backward: func(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
			return []*graph.Node{ops.Mul(g, grad(ctx.Input(0)))}
		}}
}

// twiceWrong computes 2x, but its Backward says the derivative is 3.
var twiceWrong = &testOp{name: "TwiceWrong",
	forward: func(out []float64, in [][]float64) {
		for i, v := range in[0] {
			out[i] = 2 * v
		}
	},
	backward: func(_ *graph.GradContext, g *graph.Node) []*graph.Node { return []*graph.Node{ops.Scale(g, 3)} },
}

// ruledOp is a testOp with a forward-mode rule.
type ruledOp struct {
	*testOp
	jvp func(c *graph.JVPContext) *graph.Node
}

func (op ruledOp) JVP(c *graph.JVPContext) *graph.Node { return op.jvp(c) }

// squareWithRule is square with a correct Backward and the forward rule
// 2x·t, scaled by batchedFactor when the tangents are batched.
func squareWithRule(name string, factor, batchedFactor float64) ruledOp {
	return ruledOp{square(name, func(x *graph.Node) *graph.Node { return ops.Scale(x, 2) }),
		func(c *graph.JVPContext) *graph.Node {
			f := factor
			if c.Batch() > 0 {
				f = batchedFactor
			}
			return ops.Mul(c.Tangent(0), ops.Scale(c.Input(0), f))
		}}
}

// wrongOp is one deliberately wrong op and what CheckOp must say about it.
type wrongOp struct {
	name    string
	op      graph.Op
	inputs  []*tensor.Dense
	problem gradcheck.Problem
	says    string // a phrase the error text must contain
}

func wrongOps() []wrongOp {
	v := newValues(2)
	x := v.Signed(2, 3)
	calls := 0
	return []wrongOp{
		{"backward off by 2", square("SquareDoubled", func(x *graph.Node) *graph.Node { return ops.Scale(x, 4) }),
			[]*tensor.Dense{x}, gradcheck.FirstDerivative, "d out / d in0 differs from finite differences"},
		{"backward of backward wrong", square("SquareViaTwice", func(x *graph.Node) *graph.Node { return graph.Apply(twiceWrong, x) }),
			[]*tensor.Dense{x}, gradcheck.SecondDerivative, "culprit: TwiceWrong"},
		{"type inference too large", &testOp{name: "Tall", forward: squareForward,
			typ: func(in []graph.Type) (graph.Type, error) {
				return in[0].WithShape(in[0].Shape[0]+1, in[0].Shape[1]), nil
			}},
			[]*tensor.Dense{x}, gradcheck.TypeMismatch, "writes fewer elements than type inference says"},
		{"type inference too small", &testOp{name: "Short", forward: squareForward,
			typ: func(in []graph.Type) (graph.Type, error) {
				return in[0].WithShape(in[0].Shape[0]-1, in[0].Shape[1]), nil
			}},
			[]*tensor.Dense{x}, gradcheck.TypeMismatch, "write more than type inference says"},
		{"writes into its input", &testOp{name: "InPlace",
			forward: func(out []float64, in [][]float64) {
				for i := range in[0] {
					in[0][i] *= in[0][i]
					out[i] = in[0][i]
				}
			}},
			[]*tensor.Dense{x}, gradcheck.ModifiesInput, "Forward wrote into input 0"},
		{"not deterministic", &testOp{name: "Flaky",
			forward: func(out []float64, in [][]float64) {
				calls++
				for i, v := range in[0] {
					out[i] = v + float64(calls)*1e-9
				}
			}},
			[]*tensor.Dense{x}, gradcheck.Nondeterministic, "two runs on equal inputs differ"},
		{"accumulates without clearing", &testOp{name: "Accumulate",
			forward: func(out []float64, in [][]float64) {
				for i, v := range in[0] {
					out[i] += v
				}
			}},
			[]*tensor.Dense{x}, gradcheck.ReadsOutput, "reads its output before writing it"},
		{"backward returns one gradient for two inputs", &testOp{name: "MulOneGrad",
			forward: func(out []float64, in [][]float64) {
				for i := range out {
					out[i] = in[0][i] * in[1][i]
				}
			},
			backward: func(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(g, ctx.Input(1))}
			}},
			[]*tensor.Dense{x, v.Signed(2, 3)}, gradcheck.BackwardResult, "returned 1 gradients for 2 inputs: it must return one per input"},
		{"forward rule wrong", squareWithRule("SquareRule3x", 3, 3),
			[]*tensor.Dense{x}, gradcheck.ForwardRule, "Jacobian–vector product differs"},
		{"forward rule wrong for batched tangents", squareWithRule("SquareRuleBatched", 2, 2.5),
			[]*tensor.Dense{x}, gradcheck.ForwardRule, "with batched tangents"},
	}
}

// A right forward rule passes CheckOp.
func TestRightForwardRule(t *testing.T) {
	if err := gradcheck.CheckOp(squareWithRule("SquareRule", 2, 2), []*tensor.Dense{newValues(3).Signed(2, 3)}, gradcheck.Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestWrongOps(t *testing.T) {
	for _, w := range wrongOps() {
		t.Run(w.name, func(t *testing.T) {
			err := gradcheck.CheckOp(w.op, w.inputs, gradcheck.Options{})
			if err == nil {
				t.Fatalf("case %v: got no error, want %v", w.name, w.problem)
			}
			e := asCheckError(t, err)
			if e.Problem != w.problem || !strings.Contains(err.Error(), w.says) {
				t.Fatalf("case %v: got %v error:\n%v\nwant %v, saying %q", w.name, e.Problem, err, w.problem, w.says)
			}
			if !strings.Contains(err.Error(), "CheckOp("+w.op.Name()+")") {
				t.Errorf("case %v: error does not name the op: %v", w.name, err)
			}
		})
	}
}

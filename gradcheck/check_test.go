package gradcheck_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// doubled is x² whose Backward is off by a factor of 2.
var doubled = square("SquareDoubled", func(x *graph.Node) *graph.Node { return ops.Scale(x, 4) })

// noBackward computes x + 1 and has no Backward.
type noBackward struct{}

func (noBackward) Name() string                             { return "NoBackward" }
func (noBackward) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }
func (noBackward) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	for i, v := range in[0].Float64s() {
		out.Float64s()[i] = v + 1
	}
	return nil
}

func TestMisuse(t *testing.T) {
	x := newValues(4).Signed(2, 3)
	f32 := graph.NewDense(graph.Float32, 2, 3)
	ints := tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{1, 2}))
	tanh := func(in []*graph.Node) *graph.Node { return ops.Tanh(in[0]) }
	cases := []struct {
		name    string
		err     error
		problem gradcheck.Problem
		says    string
	}{
		{"nil fn", gradcheck.Check(nil, []*tensor.Dense{x}, gradcheck.Options{}), gradcheck.Misuse, "fn is nil"},
		{"no inputs", gradcheck.Check(tanh, nil, gradcheck.Options{}), gradcheck.Misuse, "no inputs"},
		{"nil input", gradcheck.Check(tanh, []*tensor.Dense{nil}, gradcheck.Options{}), gradcheck.Misuse, "input 0 is nil"},
		{"float32", gradcheck.Check(tanh, []*tensor.Dense{f32}, gradcheck.Options{}), gradcheck.Misuse, "set Options.ConvertFloat32"},
		{"ints", gradcheck.Check(tanh, []*tensor.Dense{ints}, gradcheck.Options{}), gradcheck.Misuse, "input 0 has dtype int"},
		{"negative eps", gradcheck.Check(tanh, []*tensor.Dense{x}, gradcheck.Options{Eps: -1}), gradcheck.Misuse, "Options.Eps is -1"},
		{"input out of range", gradcheck.Check(tanh, []*tensor.Dense{x}, gradcheck.Options{Inputs: []int{1}}), gradcheck.Misuse,
			"Options.Inputs names input 1, but there are 1 inputs"},
		{"input twice", gradcheck.Check(tanh, []*tensor.Dense{x}, gradcheck.Options{Inputs: []int{0, 0}}), gradcheck.Misuse, "names input 0 twice"},
		{"fn returns nil", gradcheck.Check(func([]*graph.Node) *graph.Node { return nil }, []*tensor.Dense{x}, gradcheck.Options{}),
			gradcheck.Misuse, "fn returned a nil node"},
		{"fn returns a poisoned node", gradcheck.Check(func(in []*graph.Node) *graph.Node { return ops.MatMul(in[0], in[0]) }, []*tensor.Dense{x}, gradcheck.Options{}),
			gradcheck.BuildFailed, "MatMul: shapes (2,3) and (2,3) do not align"},
		{"fn wants more inputs", gradcheck.Check(func(in []*graph.Node) *graph.Node { return ops.Add(in[0], in[1]) }, []*tensor.Dense{x}, gradcheck.Options{}),
			gradcheck.Misuse, "fn panicked: runtime error: index out of range [1] with length 1 (it was given 1 input nodes)"},
		{"fn output from another graph", gradcheck.Check(func([]*graph.Node) *graph.Node { return graph.New().Scalar(1, graph.Float64) }, []*tensor.Dense{x}, gradcheck.Options{}),
			gradcheck.Misuse, "does not belong to the graph of the input nodes"},
		{"fn with an op without Backward", gradcheck.Check(func(in []*graph.Node) *graph.Node { return ops.Sum(graph.Apply(noBackward{}, in[0])) }, []*tensor.Dense{x}, gradcheck.Options{}),
			gradcheck.Misuse, "op NoBackward (NoBackward #1 float64(2,3), built at check_test.go:"},
		{"nil op", gradcheck.CheckOp(nil, []*tensor.Dense{x}, gradcheck.Options{}), gradcheck.Misuse, "op is nil"},
		{"nil multi-op", gradcheck.CheckMultiOp(nil, []*tensor.Dense{x}, gradcheck.Options{}), gradcheck.Misuse, "op is nil"},
		{"op without Backward", gradcheck.CheckOp(noBackward{}, []*tensor.Dense{x}, gradcheck.Options{}), gradcheck.Misuse,
			"it does not implement graph.Differentiable"},
		{"too few inputs", gradcheck.CheckOp(opOfBuilder(ops.Add), []*tensor.Dense{x}, gradcheck.Options{}), gradcheck.BuildFailed,
			"type inference rejects 1 inputs of types float64(2,3): nabla: Add: takes 2 inputs, got 1"},
		{"multi-op without Backward", gradcheck.CheckMultiOp(sinCosNoBackward{}, []*tensor.Dense{x}, gradcheck.Options{}), gradcheck.Misuse,
			"graph.MultiDifferentiable"},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("case %v: got no error, want %v", c.name, c.problem)
			continue
		}
		e := asCheckError(t, c.err)
		if e.Problem != c.problem || !strings.Contains(c.err.Error(), c.says) {
			t.Errorf("case %v: got %v: %v\nwant %v saying %q", c.name, e.Problem, c.err, c.problem, c.says)
		}
	}
}

// opOfBuilder returns the op a binary builder applies.
func opOfBuilder(f func(a, b *graph.Node) *graph.Node) graph.Op {
	g := graph.New()
	return f(g.Input("a", graph.Float64, 2), g.Input("b", graph.Float64, 2)).Op()
}

func TestPoisonedGraphKeepsItsError(t *testing.T) {
	x := newValues(4).Signed(2, 3)
	err := gradcheck.Check(func(in []*graph.Node) *graph.Node { return ops.MatMul(in[0], in[0]) }, []*tensor.Dense{x}, gradcheck.Options{})
	var ge *graph.Error
	if !errors.As(err, &ge) || ge.Op != "MatMul" || !strings.HasPrefix(ge.Site, "check_test.go:") {
		t.Fatalf("got %v, want the graph's MatMul error built at check_test.go", err)
	}
}

func TestConvertFloat32(t *testing.T) {
	x := newValues(5).Signed(2, 3)
	x32 := graph.NewDense(graph.Float32, 2, 3)
	for i, v := range x.Float64s() {
		x32.Float32s()[i] = float32(v)
	}
	opts := gradcheck.Options{ConvertFloat32: true}
	if err := gradcheck.Check(func(in []*graph.Node) *graph.Node { return ops.Tanh(in[0]) }, []*tensor.Dense{x32}, opts); err != nil {
		t.Fatalf("got %v, want no error", err)
	}
	err := gradcheck.CheckOp(doubled, []*tensor.Dense{x32}, opts)
	if e := asCheckError(t, err); e.Problem != gradcheck.FirstDerivative {
		t.Fatalf("got %v, want a first-derivative mismatch", err)
	}
}

// TestErrorFields checks what a derivative mismatch reports: the input,
// the output, and the worst entries with their indices and values.
func TestErrorFields(t *testing.T) {
	x := tensorOf([]int{2, 3}, 0.5, -1, 1.5, 2, -0.25, 1)
	e := asCheckError(t, gradcheck.CheckOp(doubled, []*tensor.Dense{x}, gradcheck.Options{}))
	if e.Func != "CheckOp" || e.Op != "SquareDoubled" || e.Problem != gradcheck.FirstDerivative || e.Input != 0 || e.Output != 0 {
		t.Fatalf("got %+v, want a first derivative mismatch of CheckOp(SquareDoubled) at input 0, output 0", e)
	}
	if e.Culprit != nil {
		t.Errorf("got culprit %+v, want none for a single op", e.Culprit)
	}
	// d(x²)/dx = 2x, so numeric 2x and analytic 4x on the diagonal; the
	// worst is at x = 2, [1,0], then 1.5 [0,2], then -1 [0,1] and 1 [1,2].
	want := []struct {
		at       []int
		numeric  float64
		analytic float64
	}{{[]int{1, 0}, 4, 8}, {[]int{0, 2}, 3, 6}}
	if len(e.Entries) != 5 {
		t.Fatalf("got %d entries, want the 5 worst", len(e.Entries))
	}
	for i, w := range want {
		en := e.Entries[i]
		if !slices.Equal(en.Input, w.at) || !slices.Equal(en.Output, w.at) ||
			math.Abs(en.Numeric-w.numeric) > 1e-6 || math.Abs(en.Analytic-w.analytic) > 1e-12 {
			t.Errorf("entry %d: got %+v, want out%v in%v analytic %v numeric %v", i, en, w.at, w.at, w.analytic, w.numeric)
		}
	}
	for _, s := range []string{"CheckOp(SquareDoubled): first derivative: d out / d in0 differs from finite differences at 6 of 36 entries",
		"d out[1,0] / d in0[1,0]: analytic 8, numeric 4"} {
		if !strings.Contains(e.Error(), s) {
			t.Errorf("error text %q does not contain %q", e.Error(), s)
		}
	}
}

// TestCulpritInFunction checks that a mismatch in a function of several
// ops is blamed on the op whose own Backward is wrong, where it was built.
func TestCulpritInFunction(t *testing.T) {
	x := newValues(6).Signed(2, 3)
	fn := func(in []*graph.Node) *graph.Node {
		h := ops.Tanh(ops.Scale(in[0], 0.7))
		return ops.Sum(ops.Mul(ops.Exp(h), graph.Apply(doubled, ops.Sin(h))), 1)
	}
	for _, fast := range []bool{false, true} {
		e := asCheckError(t, gradcheck.Check(fn, []*tensor.Dense{x}, gradcheck.Options{Fast: fast}))
		c := e.Culprit
		if e.Problem != gradcheck.FirstDerivative || c == nil || c.Op != "SquareDoubled" || c.NoGradient ||
			!strings.HasPrefix(c.Site, "check_test.go:") || c.Err.Problem != gradcheck.FirstDerivative {
			t.Fatalf("fast %v: got %v, want a first-derivative mismatch blamed on SquareDoubled built in check_test.go", fast, e)
		}
	}
}

// TestSecondOrderCulprit checks that an op correct to first order whose
// Backward uses an op with a wrong Backward passes Check, fails
// GradGradCheck, and that the inner op is blamed.
func TestSecondOrderCulprit(t *testing.T) {
	x := newValues(7).Signed(3)
	sq := square("SquareViaTwice", func(x *graph.Node) *graph.Node { return graph.Apply(twiceWrong, x) })
	fn := func(in []*graph.Node) *graph.Node { return ops.Sin(graph.Apply(sq, in[0])) }
	if err := gradcheck.Check(fn, []*tensor.Dense{x}, gradcheck.Options{}); err != nil {
		t.Fatalf("first order: got %v, want no error", err)
	}
	e := asCheckError(t, gradcheck.GradGradCheck(fn, []*tensor.Dense{x}, gradcheck.Options{}))
	if e.Func != "GradGradCheck" || e.Problem != gradcheck.SecondDerivative || e.Culprit == nil || e.Culprit.Op != "TwiceWrong" ||
		!strings.HasPrefix(e.Culprit.Site, "check_test.go:") {
		t.Fatalf("got %v, want a second-derivative mismatch blamed on TwiceWrong built in sq's Backward", e)
	}
}

// TestStopGradientCulprit: a StopGradient where a gradient is needed is
// named as such.
func TestStopGradientCulprit(t *testing.T) {
	x := newValues(8).Signed(2, 2)
	fn := func(in []*graph.Node) *graph.Node { return ops.Sum(ops.Mul(in[0], ops.StopGradient(ops.Exp(in[0])))) }
	e := asCheckError(t, gradcheck.Check(fn, []*tensor.Dense{x}, gradcheck.Options{}))
	if e.Culprit == nil || e.Culprit.Op != "StopGradient" || !e.Culprit.NoGradient ||
		!strings.Contains(e.Error(), "its Backward declares no gradient for input 0, yet its output changes with it") {
		t.Fatalf("got %v, want StopGradient blamed for declaring no gradient", e)
	}
}

// wrongSecondInput is a·b whose gradient for b is wrong.
var wrongSecondInput = &testOp{name: "WrongSecondInput",
	forward: func(out []float64, in [][]float64) {
		for i := range out {
			out[i] = in[0][i] * in[1][i]
		}
	},
	backward: func(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
		return []*graph.Node{ops.Mul(g, ctx.Input(1)), ops.Mul(g, ctx.Input(1))}
	},
}

func TestInputsOption(t *testing.T) {
	v := newValues(9)
	inputs := []*tensor.Dense{v.Signed(2, 2), v.Signed(2, 2)}
	if err := gradcheck.CheckOp(wrongSecondInput, inputs, gradcheck.Options{Inputs: []int{0}}); err != nil {
		t.Fatalf("input 0 only: got %v, want no error", err)
	}
	e := asCheckError(t, gradcheck.CheckOp(wrongSecondInput, inputs, gradcheck.Options{}))
	if e.Problem != gradcheck.FirstDerivative || e.Input != 1 {
		t.Fatalf("all inputs: got %v, want a first-derivative mismatch at input 1", e)
	}
	if err := gradcheck.CheckOp(noBackward{}, inputs[:1], gradcheck.Options{Inputs: []int{}}); err != nil {
		t.Fatalf("kernel alone: got %v, want no error", err)
	}
}

// TestForwardFailure: a kernel error at a finite-difference point is
// reported as such, naming the input element.
func TestForwardFailure(t *testing.T) {
	labels := tensorOf([]int{2}, 1, 0)
	err := gradcheck.Check(func(in []*graph.Node) *graph.Node { return ops.OneHot(in[0], 2, in[0].DType()) }, []*tensor.Dense{labels}, gradcheck.Options{})
	e := asCheckError(t, err)
	if e.Problem != gradcheck.ForwardFailed || e.Input != 0 || !strings.Contains(err.Error(), "input 0 element [0] moved by ±1e-06 failed") ||
		!strings.Contains(err.Error(), "is not a class index") {
		t.Fatalf("got %v, want a forward failure at input 0 element [0]", err)
	}
}

func TestProblemString(t *testing.T) {
	if got := gradcheck.FirstDerivative.String(); got != "first derivative" {
		t.Errorf("got %q, want %q", got, "first derivative")
	}
	if got := gradcheck.Problem(99).String(); got != "Problem(99)" {
		t.Errorf("got %q, want %q", got, "Problem(99)")
	}
}

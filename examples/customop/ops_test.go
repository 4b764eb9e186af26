package main

import (
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
)

// taggedScale is MulConstant with a slice of tags and no Key: not
// comparable, so it must never merge with another.
type taggedScale struct {
	MulConstant
	tags []string
}

// TestOpIdentity: an op's identity is its type and parameters. Ops that
// differ only in a parameter never share a key, equal ones do; an op that
// is not comparable and has no Key never does; a Keyer merges by its key.
func TestOpIdentity(t *testing.T) {
	same := []struct {
		name string
		a, b any
	}{
		{"MulConstant", MulConstant{C: 2}, MulConstant{C: 2}},
		{"LinearFunction", nn.LinearFunction{}, nn.LinearFunction{}},
		{"MaxWithIndex", MaxWithIndexOp{Axis: 1}, MaxWithIndexOp{Axis: 1}},
		{"Polynomial (distinct slices)", PolynomialOp{Coeffs: []float64{1, 2.5}}, PolynomialOp{Coeffs: []float64{1, 2.5}}},
	}
	for _, c := range same {
		require.Equal(t, graph.OpKey(c.a), graph.OpKey(c.b), "case %v", c.name)
	}
	differ := []struct {
		name string
		a, b any
	}{
		{"MulConstant", MulConstant{C: 2}, MulConstant{C: 3}},
		{"ClipGradient", ClipGradientOp{Limit: 1}, ClipGradientOp{Limit: 2}},
		{"MaxWithIndex", MaxWithIndexOp{Axis: 0}, MaxWithIndexOp{Axis: 1}},
		{"Polynomial", PolynomialOp{Coeffs: []float64{1, 2}}, PolynomialOp{Coeffs: []float64{1, 2.0000000001}}},
		{"Polynomial lengths", PolynomialOp{Coeffs: []float64{1, 2}}, PolynomialOp{Coeffs: []float64{1, 2, 0}}},
		{"different types, same fields", MulConstant{C: 1}, struct{ C float64 }{1}},
		{"not comparable, no Key", taggedScale{MulConstant{2}, []string{"a"}}, taggedScale{MulConstant{2}, []string{"a"}}},
	}
	for _, c := range differ {
		require.True(t, graph.OpKey(c.a) != graph.OpKey(c.b), "case %v: keys must differ", c.name)
	}
	op := taggedScale{MulConstant{2}, nil}
	require.True(t, graph.OpKey(op) != graph.OpKey(op), "an op without identity never merges, even with itself")
}

func TestMulConstant(t *testing.T) {
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
		g := graph.New()
		x := g.Const(fdtest.TensorOf(t, graph.TypeOf(dtype, 3), 1, -2, 0.5))
		got := fdtest.Evaluate(t, []*graph.Node{MulConst(x, 2.5)}, nil, nil)[0]
		fdtest.RequireClose(t, []float64{2.5, -5, 1.25}, got, 1e-7, "2.5·x")
	}
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 2)
	y := MulConst(x, -1.5)
	fdtest.CheckOrders(t, "MulConstant", ops.Sum(ops.Sin(y)), x, []float64{0.3, -1, 2, 0.7}, 3)
	require.ErrorContains(t, graph.Apply(MulConstant{C: 2}, x, x).Err(), "takes 1 inputs, got 2")
}

// TestPolynomial: p(x) = 1 - 2x + 3x³ at x = 2 is 1 - 4 + 24 = 21, and its
// derivatives p' = -2 + 9x², p” = 18x, p”' = 18, p”” = 0 are 34, 36,
// 18 and 0 there: each derivative is a Polynomial op built by the previous
// one's Backward.
func TestPolynomial(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64)
	outs := []*graph.Node{Polynomial(x, 1, -2, 0, 3)}
	for range 4 {
		d, err := compileGrad(outs[len(outs)-1], x)
		require.NoError(t, err)
		outs = append(outs, d)
	}
	got := fdtest.Evaluate(t, outs, x, []float64{2})
	for k, want := range []float64{21, 34, 36, 18, 0} {
		fdtest.RequireClose(t, []float64{want}, got[k], 1e-12, "derivative")
	}
	for _, o := range outs[1:4] {
		require.Equal(t, "Polynomial", o.Inputs()[1].OpName(), "g·p'(x): the derivative is a custom op")
	}
	require.Equal(t, []float64{0}, fdtest.Evaluate(t, []*graph.Node{Polynomial(x)}, x, []float64{2})[0], "no coefficients: 0")
}

// TestCustomOpChain: a function built only of custom ops — LinearFunction,
// Polynomial, MulConstant and the composite Log1pExp — whose Backwards are
// built of custom ops in turn, has correct derivatives up to the third.
func TestCustomOpChain(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3, 2)
	w := g.Const(fdtest.TensorOf(t, graph.TypeOf(graph.Float64, 4, 2), fdtest.RandomValues(1, 8)...))
	b := g.Const(fdtest.TensorOf(t, graph.TypeOf(graph.Float64, 4), fdtest.RandomValues(2, 4)...))
	h := Log1pExp(Polynomial(nn.LinearFunc(x, w, b), 0.5, -1, 0.25, 0.1))
	f := ops.Sum(MulConst(ops.Mul(h, h), 0.7))
	fdtest.CheckOrders(t, "custom-op chain", f, x, fdtest.RandomValues(3, 6), 3)
}

func TestMulConstantDotLabel(t *testing.T) {
	g := graph.New()
	y := MulConst(g.Input("x", graph.Float64, 2), 2.5)
	require.Equal(t, "MulConstant ×2.5", graph.DotOpLabel(y))
}

// TestMulConstantInPlace: where x dies at MulConstant, the compiled
// program writes y over x's slot, and the values are still right:
// tanh(0.5, -1)·3 = (1.3864, -2.2848).
func TestMulConstantInPlace(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := MulConst(ops.Tanh(x), 3)
	m := fdtest.Machine(t, y)
	var found bool
	for _, in := range m.Program().Instructions() {
		if in.Name() == "MulConstant" {
			found = true
			require.Equal(t, in.In[0], in.Out[0], "MulConstant runs in place")
		}
	}
	require.True(t, found)
	got := fdtest.Evaluate(t, []*graph.Node{y}, x, []float64{0.5, -1})[0]
	fdtest.RequireClose(t, []float64{3 * math.Tanh(0.5), 3 * math.Tanh(-1)}, got, 1e-12, "3·tanh(x)")
}

// cubeOp is y = x³, whose Backward, 3·g·x², is built from two other custom
// ops: MulConstant and Polynomial.
type cubeOp struct{}

func (cubeOp) Name() string                             { return "Cube" }
func (cubeOp) Type(in []graph.Type) (graph.Type, error) { return elementwiseType(in) }
func (cubeOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return PolynomialOp{Coeffs: []float64{0, 0, 0, 1}}.Forward(out, in)
}
func (cubeOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{MulConst(ops.Mul(g, Polynomial(ctx.Input(0), 0, 0, 1)), 3)}
}

// TestBackwardFromOtherCustomOps: derivatives up to the third of
// sum(sin(x³)·x) through cubeOp match finite differences, and at x = 1.2
// the first is 3x³cos(x³) + sin(x³).
func TestBackwardFromOtherCustomOps(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	f := ops.Sum(ops.Mul(ops.Sin(graph.Apply(cubeOp{}, x)), x))
	fdtest.CheckOrders(t, "Cube", f, x, []float64{1.2, -0.4, 0.9}, 3)
	d, err := compileGrad(f, x)
	require.NoError(t, err)
	c := 1.2 * 1.2 * 1.2
	got := fdtest.Evaluate(t, []*graph.Node{d}, x, []float64{1.2, 0, 0})[0]
	fdtest.RequireClose(t, []float64{3*c*math.Cos(c) + math.Sin(c), 0, 0}, got, 1e-12, "first derivative")
}

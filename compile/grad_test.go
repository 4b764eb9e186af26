package compile_test

import (
	"fmt"
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// checkOrders checks the first three derivatives of the scalar function
// build at x0 against finite differences (see fdtest.CheckOrders).
func checkOrders(t *testing.T, name string, shape []int, x0 []float64, build func(x *graph.Node) *graph.Node) {
	t.Helper()
	x := graph.New().Input("x", graph.Float64, shape...)
	fdtest.CheckOrders(t, name, build(x), x, x0, 3)
}

// TestCubeDerivatives: d/dx x³ = 3x², d²/dx² = 6x (7.8 at 1.3, where
// Gorgonia's cached derivatives give 2.6), d³/dx³ = 6.
func TestCubeDerivatives(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64)
	y := ops.Mul(ops.Mul(x, x), x)
	d1, err := compile.Grad(y, x)
	require.NoError(t, err)
	d2, err := compile.Grad(d1[0], x)
	require.NoError(t, err)
	d3, err := compile.Grad(d2[0], x)
	require.NoError(t, err)
	got := fdtest.Evaluate(t, []*graph.Node{y, d1[0], d2[0], d3[0]}, x, []float64{1.3})
	fdtest.RequireClose(t, []float64{2.197}, got[0], 1e-12, "x³")
	fdtest.RequireClose(t, []float64{3 * 1.69}, got[1], 1e-12, "3x²")
	fdtest.RequireClose(t, []float64{7.8}, got[2], 1e-12, "6x")
	fdtest.RequireClose(t, []float64{6}, got[3], 1e-12, "6")
}

// TestSinCubeHandDerivatives compares sin(x)·x³ with its derivatives
// worked by hand:
//
//	f'   = x³cos x + 3x² sin x
//	f''  = -x³ sin x + 6x² cos x + 6x sin x
//	f''' = -x³ cos x - 9x² sin x + 18x cos x + 6 sin x
func TestSinCubeHandDerivatives(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64)
	f := ops.Mul(ops.Sin(x), ops.PowConst(x, 3))
	outs := []*graph.Node{f}
	for range 3 {
		d, err := compile.Grad(outs[len(outs)-1], x)
		require.NoError(t, err)
		outs = append(outs, d[0])
	}
	for _, v := range []float64{-1.7, 0.4, 2.3} {
		s, c := math.Sincos(v)
		want := []float64{
			s * v * v * v,
			v*v*v*c + 3*v*v*s,
			-v*v*v*s + 6*v*v*c + 6*v*s,
			-v*v*v*c - 9*v*v*s + 18*v*c + 6*s,
		}
		got := fdtest.Evaluate(t, outs, x, []float64{v})
		for k := range want {
			fdtest.RequireClose(t, want[k:k+1], got[k], 1e-10, fmt.Sprintf("order %d at %v", k, v))
		}
	}
}

// TestComposedFunctions checks three orders of derivatives of composed
// functions against finite differences.
func TestComposedFunctions(t *testing.T) {
	x6 := []float64{0.3, -1.2, 0.8, 2.1, -0.4, 0.05}
	constOf := func(x *graph.Node, shape []int, seed uint64) *graph.Node {
		rng := rand.New(rand.NewPCG(seed, 7))
		vals := make([]float64, graph.ShapeSize(shape))
		for i := range vals {
			vals[i] = rng.Float64()*2 - 1
		}
		return x.Graph().Const(fdtest.TensorOf(t, x.Type().WithShape(shape...), vals...))
	}
	cases := []struct {
		name  string
		shape []int
		build func(x *graph.Node) *graph.Node
	}{
		{"tanh", []int{6}, func(x *graph.Node) *graph.Node { return ops.Sum(ops.Tanh(x)) }},
		{"sigmoid", []int{6}, func(x *graph.Node) *graph.Node { return ops.Sum(ops.Mul(ops.Sigmoid(x), x)) }},
		{"softmax", []int{2, 3}, func(x *graph.Node) *graph.Node {
			return ops.Sum(ops.Mul(ops.Softmax(x, 1), constOf(x, []int{2, 3}, 1)))
		}},
		{"log-softmax cross-entropy", []int{2, 3}, func(x *graph.Node) *graph.Node {
			labels := x.Graph().Const(fdtest.TensorOf(t, x.Type().WithShape(2), 2, 0))
			return ops.Mean(ops.CrossEntropy(x, labels))
		}},
		{"log-softmax one-hot", []int{2, 3}, func(x *graph.Node) *graph.Node {
			return ops.Sum(ops.Neg(ops.Mul(ops.LogSoftmax(x, -1), constOf(x, []int{2, 3}, 2))))
		}},
		{"logsumexp over axis 0", []int{3, 2}, func(x *graph.Node) *graph.Node {
			return ops.Sum(ops.Mul(ops.LogSumExp(x, 0), constOf(x, []int{2}, 3)))
		}},
		{"matmul chain", []int{2, 3}, func(x *graph.Node) *graph.Node {
			a := constOf(x, []int{3, 4}, 4)
			b := constOf(x, []int{4, 2}, 5)
			return ops.Sum(ops.Tanh(ops.MatMul(ops.MatMul(x, a), ops.Tanh(b))))
		}},
		{"x·xᵀ", []int{2, 3}, func(x *graph.Node) *graph.Node {
			return ops.Sum(ops.Sin(ops.MatMul(x, ops.Transpose(x))))
		}},
		{"broadcasting adds", []int{3, 1}, func(x *graph.Node) *graph.Node {
			b := constOf(x, []int{3}, 6)
			return ops.Sum(ops.Square(ops.Tanh(ops.Add(ops.Add(x, b), ops.Transpose(x)))))
		}},
		{"reshape and transpose", []int{6}, func(x *graph.Node) *graph.Node {
			m := ops.Transpose(ops.Reshape(x, 2, 3))
			return ops.Sum(ops.Mul(ops.Exp(m), constOf(x, []int{3, 2}, 7)))
		}},
		{"max over an axis", []int{2, 3}, func(x *graph.Node) *graph.Node {
			return ops.Sum(ops.Square(ops.Max(ops.Mul(x, x), 1)))
		}},
		{"where", []int{6}, func(x *graph.Node) *graph.Node {
			cond := ops.Greater(x, x.Graph().Scalar(0, graph.Float64))
			return ops.Sum(ops.Where(cond, ops.PowConst(x, 3), ops.Sin(x)))
		}},
		{"division and pow", []int{6}, func(x *graph.Node) *graph.Node {
			sq := ops.Add(ops.Square(x), x.Graph().Scalar(1, graph.Float64))
			return ops.Sum(ops.Div(ops.Pow(sq, ops.Sigmoid(x)), sq))
		}},
	}
	for _, c := range cases {
		checkOrders(t, c.name, c.shape, x6[:graph.ShapeSize(c.shape)], c.build)
	}
}

// TestGradTwiceInAnyOrder: taking gradients of several functions of the
// same graph, in any order and after building other nodes, gives each its
// own correct derivative.
func TestGradTwiceInAnyOrder(t *testing.T) {
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		g := graph.New()
		x := g.Input("x", graph.Float64)
		cube := ops.PowConst(x, 3)
		sin := ops.Sin(x)
		funcs := []*graph.Node{cube, sin}
		firsts := make([]*graph.Node, 2)
		for _, i := range order {
			d, err := compile.Grad(funcs[i], x)
			require.NoError(t, err)
			firsts[i] = d[0]
		}
		// A function of a gradient, then its gradient.
		penalty := ops.Mul(firsts[0], firsts[1]) // 3x²·cos x
		d, err := compile.Grad(penalty, x)
		require.NoError(t, err)
		second := make([]*graph.Node, 2)
		for _, i := range order {
			d, err := compile.Grad(firsts[i], x)
			require.NoError(t, err)
			second[i] = d[0]
		}
		v := 1.3
		got := fdtest.Evaluate(t, []*graph.Node{firsts[0], firsts[1], second[0], second[1], d[0]}, x, []float64{v})
		want := []float64{3 * v * v, math.Cos(v), 6 * v, -math.Sin(v), 6*v*math.Cos(v) - 3*v*v*math.Sin(v)}
		for k := range want {
			fdtest.RequireClose(t, want[k:k+1], got[k], 1e-12, fmt.Sprintf("order %v, result %d", order, k))
		}
	}
}

// TestGradientPenalty: d/dW of sum((∂f/∂x)²) for f = sum(tanh(W x)).
func TestGradientPenalty(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	w0 := make([]float64, 12)
	for i := range w0 {
		w0[i] = rng.NormFloat64()
	}
	g := graph.New()
	w := g.Input("W", graph.Float64, 3, 4)
	x := g.Const(fdtest.TensorOf(t, graph.TypeOf(graph.Float64, 4, 1), 0.5, -0.3, 0.8, 0.1))
	f := ops.Sum(ops.Tanh(ops.MatMul(w, x)))
	dx, err := compile.Grad(f, x)
	require.NoError(t, err)
	penalty := ops.Sum(ops.Square(dx[0]))
	dw, err := compile.Grad(penalty, w)
	require.NoError(t, err)
	got := fdtest.Evaluate(t, []*graph.Node{dw[0]}, w, w0)[0]
	fdtest.RequireClose(t, fdtest.NumericGrad(t, penalty, w, w0), got, 1e-6, "gradient penalty")
}

// TestHessianOfTanhNetwork: the Hessian of sum(tanh(W2 tanh(W1 x))) with
// 64×64 weights is symmetric and matches finite differences of the
// gradient.
func TestHessianOfTanhNetwork(t *testing.T) {
	const n = 64
	rng := rand.New(rand.NewPCG(5, 6))
	weights := func() *tensor.Dense {
		vals := make([]float64, n*n)
		for i := range vals {
			vals[i] = rng.NormFloat64() / math.Sqrt(n)
		}
		return fdtest.TensorOf(t, graph.TypeOf(graph.Float64, n, n), vals...)
	}
	x0 := make([]float64, n)
	for i := range x0 {
		x0[i] = rng.NormFloat64()
	}
	g := graph.New()
	x := g.Input("x", graph.Float64, n, 1)
	w1, w2 := g.Const(weights()), g.Const(weights())
	f := ops.Sum(ops.Tanh(ops.MatMul(w2, ops.Tanh(ops.MatMul(w1, x)))))
	h, err := compile.Hessian(f, x)
	require.NoError(t, err)
	require.Equal(t, []int{n, 1, n, 1}, h.Shape())
	gr, err := compile.Grad(f, x)
	require.NoError(t, err)
	hv := fdtest.Evaluate(t, []*graph.Node{h}, x, x0)[0]
	for i := range n {
		for j := range i {
			require.InDelta(t, hv[i*n+j], hv[j*n+i], 1e-12, "H[%d,%d] vs H[%d,%d]", i, j, j, i)
		}
	}
	// Row i of H is the gradient of ∂f/∂x_i.
	for _, i := range []int{0, 17, 63} {
		gi := ops.Sum(ops.Slice(gr[0], 0, i, i+1))
		fdtest.RequireClose(t, fdtest.NumericGrad(t, gi, x, x0), hv[i*n:(i+1)*n], 1e-6, fmt.Sprintf("Hessian row %d", i))
	}
}

// TestHVP: the Hessian–vector product equals the Hessian times v.
func TestHVP(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	f := ops.Sum(ops.Mul(ops.Sin(x), ops.PowConst(x, 3)))
	v := g.Const(fdtest.TensorOf(t, x.Type(), 1, -2, 0.5))
	hv, err := compile.HVP(f, x, v)
	require.NoError(t, err)
	h, err := compile.Hessian(f, x)
	require.NoError(t, err)
	x0 := []float64{0.5, -1.2, 2}
	got := fdtest.Evaluate(t, []*graph.Node{hv, h}, x, x0)
	// f is a sum of functions of one coordinate, so H is diagonal with
	// entries -x³ sin x + 6x² cos x + 6x sin x.
	vs := []float64{1, -2, 0.5}
	for i, xi := range x0 {
		s, c := math.Sincos(xi)
		d := -xi*xi*xi*s + 6*xi*xi*c + 6*xi*s
		require.InDelta(t, d*vs[i], got[0][i], 1e-10)
		for j := range 3 {
			want := 0.0
			if i == j {
				want = d
			}
			require.InDelta(t, want, got[1][i*3+j], 1e-10)
		}
	}
}

// TestJacobian of an elementwise map is diagonal.
func TestJacobian(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := ops.Mul(ops.Exp(x), g.Const(fdtest.TensorOf(t, x.Type(), 2, 3)))
	j, err := compile.Jacobian(y, x)
	require.NoError(t, err)
	got := fdtest.Evaluate(t, []*graph.Node{j}, x, []float64{0, 1})[0]
	fdtest.RequireClose(t, []float64{2, 0, 0, 3 * math.E}, got, 1e-12, "Jacobian")
}

func TestGradErrors(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	unused := g.Input("unused", graph.Float64, 2)
	y := ops.Sum(ops.Exp(x))
	_, err := compile.Grad(y, unused)
	require.ErrorContains(t, err, `"unused"`)
	require.ErrorContains(t, err, "no path")
	zs, err := compile.GradWith(y, []*graph.Node{unused}, compile.ZerosIfDisconnected())
	require.NoError(t, err)
	require.Equal(t, []float64{0, 0}, fdtest.Evaluate(t, zs, nil, nil)[0])

	_, err = compile.Grad(ops.Exp(x), x)
	require.ErrorContains(t, err, "not a scalar")

	stopped := ops.Sum(ops.Mul(ops.StopGradient(x), x))
	d, err := compile.Grad(stopped, x)
	require.NoError(t, err)
	// d/dx sum(stop(x)·x) = stop(x) = x.
	require.Equal(t, []float64{3, 4}, fdtest.Evaluate(t, d, x, []float64{3, 4})[0])
	_, err = compile.Grad(ops.Sum(ops.StopGradient(x)), x)
	require.ErrorContains(t, err, "no path")
}

// TestPowDerivativesAtZero: where the power rule's formulas give 0·∞ at
// x = 0, the derivatives are PyTorch's: d/dx x⁰ = 0, d²/dx² x¹ = 0,
// ∂/∂a a^b = 0 where b = 0, and ∂/∂b a^b = 0 where a = 0 and b ≥ 0.
func TestPowDerivativesAtZero(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64)
	d0 := must(compile.Grad(ops.PowConst(x, 0), x))[0]
	d1 := must(compile.Grad(ops.PowConst(x, 1), x))[0]
	dd1 := must(compile.Grad(d1, x))[0]
	d2 := must(compile.Grad(ops.PowConst(x, 2), x))[0]
	got := fdtest.Evaluate(t, []*graph.Node{d0, d1, dd1, d2}, x, []float64{0})
	for i, want := range []float64{0, 1, 0, 0} {
		if got[i][0] != want {
			t.Errorf("PowConst derivative %d at 0: got %v, want %v", i, got[i][0], want)
		}
	}

	b := g.Input("b", graph.Float64, 3)
	a := g.Input("a", graph.Float64, 3)
	grads := must(compile.Grad(ops.Sum(ops.Pow(a, b)), a, b))
	p := must(compile.Compile(grads))
	m := must(vm.New(p))
	av := must(graph.FromFloat64s(graph.Float64, []float64{0, 0, 2}, 3))
	bv := must(graph.FromFloat64s(graph.Float64, []float64{0, 2, 3}, 3))
	require.NoError(t, m.Run(vm.Feeds{a: av, b: bv}))
	da, db := must(m.Value(grads[0])).Float64s(), must(m.Value(grads[1])).Float64s()
	// ∂/∂a: b·a^(b-1) = [0 (b = 0), 0, 12]; ∂/∂b: a^b·ln a = [0, 0, 8 ln 2].
	require.Equal(t, []float64{0, 0, 12}, da)
	require.Equal(t, []float64{0, 0, 8 * math.Log(2)}, db)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

package ops

import (
	"cmp"
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// TestBinaryForward checks each binary op on hand-computed values,
// including scalars, broadcasting and size-1 and zero-size dimensions.
func TestBinaryForward(t *testing.T) {
	type operand struct {
		shape []int
		vals  []float64
	}
	cases := []struct {
		name  string
		op    func(a, b *graph.Node) *graph.Node
		a, b  operand
		shape []int
		want  []float64
	}{
		{"same shape", Add, operand{[]int{2, 2}, []float64{1, 2, 3, 4}}, operand{[]int{2, 2}, []float64{10, 20, 30, 40}},
			[]int{2, 2}, []float64{11, 22, 33, 44}},
		// (4,1)+(3,) -> (4,3): row i is a[i] + b.
		{"(4,1)+(3,)", Add, operand{[]int{4, 1}, []float64{0, 10, 20, 30}}, operand{[]int{3}, []float64{1, 2, 3}},
			[]int{4, 3}, []float64{1, 2, 3, 11, 12, 13, 21, 22, 23, 31, 32, 33}},
		// (2,1,3)*(4,1) -> (2,4,3): out[i,j,k] = a[i,0,k]*b[j,0].
		{"(2,1,3)*(4,1)", Mul, operand{[]int{2, 1, 3}, []float64{1, 2, 3, 4, 5, 6}}, operand{[]int{4, 1}, []float64{1, 10, 100, -1}},
			[]int{2, 4, 3}, []float64{
				1, 2, 3, 10, 20, 30, 100, 200, 300, -1, -2, -3,
				4, 5, 6, 40, 50, 60, 400, 500, 600, -4, -5, -6}},
		{"scalar-scalar", Sub, operand{nil, []float64{5}}, operand{nil, []float64{7}}, nil, []float64{-2}},
		{"scalar-left", Sub, operand{nil, []float64{1}}, operand{[]int{3}, []float64{1, 2, 3}}, []int{3}, []float64{0, -1, -2}},
		{"scalar-right", Div, operand{[]int{3}, []float64{1, 2, 3}}, operand{nil, []float64{2}}, []int{3}, []float64{0.5, 1, 1.5}},
		{"size-1 leading", Div, operand{[]int{1, 3}, []float64{1, 4, 9}}, operand{[]int{3}, []float64{1, 2, 3}}, []int{1, 3}, []float64{1, 2, 3}},
		{"(3,1)-(1,2)", Sub, operand{[]int{3, 1}, []float64{1, 2, 3}}, operand{[]int{1, 2}, []float64{10, 20}},
			[]int{3, 2}, []float64{-9, -19, -8, -18, -7, -17}},
		{"pow", Pow, operand{[]int{3}, []float64{2, 9, 4}}, operand{[]int{3}, []float64{3, 0.5, -1}}, []int{3}, []float64{8, 3, 0.25}},
		{"maximum", Maximum, operand{[]int{3}, []float64{1, 5, 2}}, operand{[]int{3}, []float64{4, 2, 2}}, []int{3}, []float64{4, 5, 2}},
		{"minimum bcast", Minimum, operand{[]int{2, 2}, []float64{1, 5, 2, 0}}, operand{[]int{2}, []float64{3, 1}}, []int{2, 2}, []float64{1, 1, 2, 0}},
		{"greater", Greater, operand{[]int{3}, []float64{1, 5, 2}}, operand{nil, []float64{2}}, []int{3}, []float64{0, 1, 0}},
		{"less", Less, operand{[]int{3}, []float64{1, 5, 2}}, operand{nil, []float64{2}}, []int{3}, []float64{1, 0, 0}},
		{"equal", Equal, operand{[]int{3}, []float64{1, 5, 2}}, operand{nil, []float64{2}}, []int{3}, []float64{0, 0, 1}},
		{"zero-size", Add, operand{[]int{0, 3}, nil}, operand{[]int{3}, []float64{1, 2, 3}}, []int{0, 3}, nil},
	}
	for _, dt := range dtypes {
		for _, c := range cases {
			g := graph.New()
			a := g.Const(dense(t, dt, c.a.shape, c.a.vals...))
			b := g.Const(dense(t, dt, c.b.shape, c.b.vals...))
			y := c.op(a, b)
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				assertValues(t, eval(t, y, nil), c.shape, c.want...)
			})
		}
	}
}

// TestUnaryForward checks each unary op at a few points against math.
func TestUnaryForward(t *testing.T) {
	xs := []float64{-2, -0.5, 0, 0.5, 3}
	cases := []struct {
		name string
		op   func(*graph.Node) *graph.Node
		f    func(float64) float64
		xs   []float64
	}{
		{"Neg", Neg, func(x float64) float64 { return -x }, xs},
		{"Exp", Exp, math.Exp, xs},
		{"Log", Log, math.Log, []float64{0.1, 1, 2.5}},
		{"Log1p", Log1p, math.Log1p, []float64{-0.5, 0, 1e-10, 3}},
		{"Sqrt", Sqrt, math.Sqrt, []float64{0, 0.25, 4}},
		{"Square", Square, func(x float64) float64 { return x * x }, xs},
		{"Abs", Abs, math.Abs, xs},
		{"Sign", Sign, func(x float64) float64 { return float64(cmp.Compare(x, 0)) }, xs},
		{"Sin", Sin, math.Sin, xs},
		{"Cos", Cos, math.Cos, xs},
		{"Tanh", Tanh, math.Tanh, xs},
		{"Sigmoid", Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, xs},
		{"ReLU", ReLU, func(x float64) float64 { return math.Max(x, 0) }, xs},
		{"Softplus", Softplus, func(x float64) float64 { return math.Log(1 + math.Exp(x)) }, xs},
		{"PowConst3", func(x *graph.Node) *graph.Node { return PowConst(x, 3) }, func(x float64) float64 { return x * x * x }, xs},
		{"PowConstHalf", func(x *graph.Node) *graph.Node { return PowConst(x, 0.5) }, math.Sqrt, []float64{0, 1, 6.25}},
		{"Scale", func(x *graph.Node) *graph.Node { return Scale(x, -1.5) }, func(x float64) float64 { return -1.5 * x }, xs},
	}
	for _, dt := range dtypes {
		for _, c := range cases {
			want := make([]float64, len(c.xs))
			for i, x := range c.xs {
				want[i] = c.f(x)
				if dt == graph.Float32 {
					want[i] = c.f(float64(float32(x)))
				}
			}
			g := graph.New()
			y := c.op(g.Const(dense(t, dt, []int{len(c.xs)}, c.xs...)))
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				assertValues(t, eval(t, y, nil), []int{len(c.xs)}, want...)
			})
			// A scalar input gives a scalar output.
			gs := graph.New()
			ys := c.op(gs.Scalar(c.xs[len(c.xs)-1], dt))
			assertValues(t, eval(t, ys, nil), nil, want[len(want)-1])
		}
	}
}

// TestStableActivations checks values where a naive formula overflows.
func TestStableActivations(t *testing.T) {
	g := graph.New()
	x := g.Const(dense(t, graph.Float64, []int{4}, -1000, -40, 40, 1000))
	assertValues(t, eval(t, Sigmoid(x), nil), []int{4}, 0, math.Exp(-40)/(1+math.Exp(-40)), 1/(1+math.Exp(-40)), 1)
	assertValues(t, eval(t, Softplus(x), nil), []int{4}, 0, math.Log1p(math.Exp(-40)), 40+math.Log1p(math.Exp(-40)), 1000)
}

// TestWhereForward checks Where with a broadcast condition.
func TestWhereForward(t *testing.T) {
	for _, dt := range dtypes {
		g := graph.New()
		cond := g.Const(dense(t, dt, []int{2, 1}, 1, 0))
		a := g.Const(dense(t, dt, []int{2, 3}, 1, 2, 3, 4, 5, 6))
		b := g.Scalar(-1, dt)
		// Row 0 takes a, row 1 takes b.
		assertValues(t, eval(t, Where(cond, a, b), nil), []int{2, 3}, 1, 2, 3, -1, -1, -1)
	}
}

// TestElementwiseBadBuilds checks that bad elementwise builds are sticky
// errors naming the op and shapes.
func TestElementwiseBadBuilds(t *testing.T) {
	g := graph.New()
	a := g.Input("a", graph.Float64, 2, 3)
	b := g.Input("b", graph.Float64, 4)
	y := Exp(Add(a, b))
	if y.Err() == nil || g.Err() == nil {
		t.Fatal("no error for (2,3)+(4)")
	}
	for _, want := range []string{"Add", "(2,3)", "(4)", "elementwise_test.go:"} {
		if !strings.Contains(g.Err().Error(), want) {
			t.Errorf("error %q does not mention %q", g.Err(), want)
		}
	}
	g2 := graph.New()
	f32 := g2.Input("a", graph.Float32, 3)
	f64 := g2.Input("b", graph.Float64, 3)
	if Mul(f32, f64).Err() == nil || !strings.Contains(g2.Err().Error(), "dtypes differ") {
		t.Errorf("got %v, want a dtype error", g2.Err())
	}
}

// TestUnaryFloat32Blocks checks the float32 kernel, which works a block
// at a time, on lengths around the block size, out of place and in place:
// each element must be float32(f(float64(x))) exactly, as in one loop.
func TestUnaryFloat32Blocks(t *testing.T) {
	for _, n := range []int{1, unaryBlock - 1, unaryBlock, unaryBlock + 1, 3*unaryBlock + 5} {
		for _, inPlace := range []bool{false, true} {
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = float64(i%13)/3 - 2 // -2 .. 2
			}
			in := dense(t, graph.Float32, []int{n}, vals...)
			want := make([]float32, n)
			for i, v := range in.Float32s() {
				want[i] = float32(math.Tanh(float64(v)))
			}
			out := in
			if !inPlace {
				out = graph.NewDense(graph.Float32, n)
			}
			if err := (unary{kind: tanhKind}).Forward(out, []*tensor.Dense{in}); err != nil {
				t.Fatal(err)
			}
			for i, got := range out.Float32s() {
				if got != want[i] {
					t.Fatalf("case n=%d in place %v: element %d: got %v, want %v", n, inPlace, i, got, want[i])
				}
			}
		}
	}
}

// unaryAllocCases are the unary ops that call a math function per
// element, and Neg, the cheapest, for scale. Log's input is made positive.
var unaryAllocCases = []allocsCase{
	{"Neg", Neg},
	{"Exp", Exp},
	{"Log", func(x *graph.Node) *graph.Node { return Log(Exp(x)) }},
	{"Sin", Sin},
	{"Tanh", Tanh},
	{"Sigmoid", Sigmoid},
	{"Softplus", Softplus},
}

func TestUnaryForwardAllocs(t *testing.T) { checkForwardAllocs(t, unaryAllocCases) }

func BenchmarkUnaryForward(b *testing.B) { benchmarkForward(b, unaryAllocCases) }

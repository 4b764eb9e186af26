package ops

import (
	"cmp"
	"math"
	"slices"
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

// TestUnaryVmath checks the unary ops computed by internal/kernel/vmath against
// the op table's scalar functions (math), on lengths around the kernels'
// 4-element vectors and tails and in place, for both dtypes: within 2 ulp
// in float64 and 1 ulp in float32 (GELU's float32, computed in float32
// lanes, 2 ulp, and below -1, where 1+erf is small, within 2^-23·|x|/2 as
// vmath.GELU32 states), and each element the same as computed alone (so
// that results do not depend on where a slice is split).
func TestUnaryVmath(t *testing.T) {
	for _, kind := range []unaryKind{expKind, logKind, tanhKind, sigmoidKind, softplusKind, erfKind, geluKind} {
		op := unary{kind: kind}
		f := unaryDefs[kind].f
		for _, n := range []int{1, 3, 4, 5, 8, 13, 64, 67} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(i%19)*1.37 - 12 // Log gets NaN below 0
			}
			for _, inPlace := range []bool{false, true} {
				x64, x32 := slices.Clone(xs), make([]float32, n)
				for i, v := range xs {
					x32[i] = float32(v)
				}
				o64, o32 := make([]float64, n), make([]float32, n)
				if inPlace {
					o64, o32 = x64, x32
				}
				unaryLoop(op, o64, x64)
				unaryLoop(op, o32, x32)
				for i, v := range xs {
					var one64 [1]float64
					var one32 [1]float32
					unaryLoop(op, one64[:], []float64{v})
					unaryLoop(op, one32[:], []float32{float32(v)})
					want64, want32 := f(v, 0), float32(f(float64(float32(v)), 0))
					if d := ulpDist(o64[i], want64, 53); d > 2 || o64[i] != one64[0] && !math.IsNaN(o64[i]) {
						t.Fatalf("%s float64 n=%d in place %v: element %d (%v) = %v (alone %v), want %v (%v ulp)",
							op.Name(), n, inPlace, i, v, o64[i], one64[0], want64, d)
					}
					d := ulpDist(float64(o32[i]), float64(want32), 24)
					tol := 1.0
					if kind == geluKind {
						tol = 2
						if v < -1 && math.Abs(float64(o32[i]-want32)) <= 0x1p-23*math.Abs(v)/2 {
							d = 0
						}
					}
					if d > tol || o32[i] != one32[0] && o32[i] == o32[i] {
						t.Fatalf("%s float32 n=%d in place %v: element %d (%v) = %v (alone %v), want %v (%v ulp)",
							op.Name(), n, inPlace, i, v, o32[i], one32[0], want32, d)
					}
				}
			}
		}
	}
}

// ulpDist is |a-b| in units of the last place of b for a float of the
// given precision (53 or 24 bits), 0 when both are NaN or equal, and +Inf
// when only one is NaN or they are infinities that differ.
func ulpDist(a, b float64, bits int) float64 {
	switch {
	case a == b || math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0):
		return math.Inf(1)
	}
	minExp := -1021 // of normal float64s, as Frexp gives it
	if bits == 24 {
		minExp = -125
	}
	_, e := math.Frexp(b)
	return math.Abs(a-b) / math.Ldexp(1, max(e, minExp)-bits)
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

// TestFloat32Blocks checks the float32 kernels that widen a block at a
// time (Sin, and Pow with each operand layout its loop sees) on lengths
// around the block size, out of place and, where the output has input 0's
// shape, in place: each element must be float32(f(float64(a), float64(b)))
// exactly, as in one loop.
func TestFloat32Blocks(t *testing.T) {
	pow := binary{powKind}
	cases := []struct {
		name    string
		op      graph.Op
		a, b    func(n int) []int // shapes; b nil for a unary op
		f       func(a, b float64) float64
		inPlace bool
	}{
		{"Sin", unary{kind: sinKind}, vector, nil, func(a, _ float64) float64 { return math.Sin(a) }, true},
		{"Pow", pow, vector, vector, math.Pow, true},
		{"Pow scalar exponent", pow, vector, scalarShape, math.Pow, true},
		{"Pow scalar base", pow, scalarShape, vector, math.Pow, false},
		// (2,n) by (1,n): the broadcasting walker, one row of n at a time.
		{"Pow rows", pow, func(n int) []int { return []int{2, n} }, func(n int) []int { return []int{1, n} }, math.Pow, true},
	}
	for _, c := range cases {
		for _, n := range []int{1, wideBlock - 1, wideBlock, wideBlock + 1, 3*wideBlock + 5} {
			for _, inPlace := range []bool{false, true} {
				if inPlace && !c.inPlace {
					continue
				}
				in := []*tensor.Dense{blockInput(t, c.a(n), 0.25)}
				if c.b != nil {
					in = append(in, blockInput(t, c.b(n), -0.5))
				}
				var shapes [][]int
				for _, x := range in {
					shapes = append(shapes, x.Shape())
				}
				shape, err := graph.BroadcastShapes(shapes...)
				if err != nil {
					t.Fatal(err)
				}
				// Each input's elements repeat along the output: index
				// i of the output reads element i mod len of each input.
				want := make([]float32, graph.ShapeSize(shape))
				for i := range want {
					a, b := in[0].Float32s(), []float32{0}
					if len(in) > 1 {
						b = in[1].Float32s()
					}
					want[i] = float32(c.f(float64(a[i%len(a)]), float64(b[i%len(b)])))
				}
				out := in[0]
				if !inPlace {
					out = graph.NewDense(graph.Float32, shape...)
				}
				if err := c.op.Forward(out, in); err != nil {
					t.Fatal(err)
				}
				for i, got := range out.Float32s() {
					if got != want[i] {
						t.Fatalf("case %s n=%d in place %v: element %d: got %v, want %v", c.name, n, inPlace, i, got, want[i])
					}
				}
			}
		}
	}
}

func vector(n int) []int    { return []int{n} }
func scalarShape(int) []int { return nil }

// blockInput returns a float32 tensor of the given shape holding the
// values i%13/4 + 0.45 + off: positive (Pow's bases) for off > -0.45, and
// different for two offsets.
func blockInput(t *testing.T, shape []int, off float64) *tensor.Dense {
	vals := make([]float64, graph.ShapeSize(shape))
	for i := range vals {
		vals[i] = float64(i%13)/4 + 0.45 + off
	}
	return dense(t, graph.Float32, shape, vals...)
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
	{"Erf", Erf},
	{"GELU", func(x *graph.Node) *graph.Node { return GELU(x, false) }},
	{"Sqrt", func(x *graph.Node) *graph.Node { return Sqrt(Square(x)) }},
	{"Abs", Abs},
	{"ReLU", ReLU},
}

func TestUnaryForwardAllocs(t *testing.T) { checkForwardAllocs(t, unaryAllocCases) }

func BenchmarkUnaryForward(b *testing.B) { benchmarkForward(b, unaryAllocCases) }

// binaryAllocCases are Pow, which calls math.Pow per element, on a
// positive base and a fractional exponent (integer exponents take a
// shortcut), elementwise and by a scalar, and Mul, the cheapest, for scale.
var binaryAllocCases = []allocsCase{
	{"Mul", func(x *graph.Node) *graph.Node { return Mul(x, x) }},
	{"Greater", func(x *graph.Node) *graph.Node { return Greater(x, scalarLike(x, 0)) }},
	{"Div", func(x *graph.Node) *graph.Node { return Div(x, Exp(x)) }},
	{"Pow", func(x *graph.Node) *graph.Node { return Pow(Exp(Scale(x, 0.3)), Scale(x, 0.37)) }},
	{"Pow scalar", func(x *graph.Node) *graph.Node { return Pow(Exp(Scale(x, 0.3)), scalarLike(x, 1.37)) }},
}

func TestBinaryForwardAllocs(t *testing.T) { checkForwardAllocs(t, binaryAllocCases) }

func BenchmarkBinaryForward(b *testing.B) { benchmarkForward(b, binaryAllocCases) }

// Sign's loop keeps what the table's function keeps: 0, -0 and NaN.
func TestSignLoopMatchesSign(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e-310, -1e-310, 2.5, -7}
	got := make([]float64, len(xs))
	unaryLoop(unary{kind: signKind}, got, xs)
	for i, x := range xs {
		if want := sign(x, 0); math.Float64bits(got[i]) != math.Float64bits(want) {
			t.Errorf("case %v: got %v, want %v", x, got[i], want)
		}
	}
}

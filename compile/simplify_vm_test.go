package compile_test

import (
	"math"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// extremes are the values at which a rewrite that holds in real numbers
// may not hold in IEEE arithmetic: signed zeros, the largest and smallest
// floats, infinities, NaN.
var extremes = []float64{math.Copysign(0, -1), 0, 1.5, -3, 1e200, -1e200, 1e300, math.MaxFloat64,
	-math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-310, math.Inf(1), math.Inf(-1), math.NaN()}

// TestSimplifyKeepsBits: the simplified program and the plain one give the
// same bits as the scalar arithmetic they stand for, at every extreme
// value (x+0 is +0 at x = -0; 1e200·1e300·1e-300 is +Inf).
func TestSimplifyKeepsBits(t *testing.T) {
	negZero := math.Copysign(0, -1)
	cases := []struct {
		name string
		y    func(x *graph.Node) *graph.Node
		want func(x float64) float64 // the same arithmetic, in Go
	}{
		{"x+0", func(x *graph.Node) *graph.Node { return ops.Add(x, x.Graph().Scalar(0, graph.Float64)) },
			func(x float64) float64 { return x + 0 }},
		{"0+x", func(x *graph.Node) *graph.Node { return ops.Add(x.Graph().Scalar(0, graph.Float64), x) },
			func(x float64) float64 { return 0 + x }},
		{"x+(-0)", func(x *graph.Node) *graph.Node { return ops.Add(x, x.Graph().Scalar(negZero, graph.Float64)) },
			func(x float64) float64 { return x + negZero }},
		{"x-0", func(x *graph.Node) *graph.Node { return ops.Sub(x, x.Graph().Scalar(0, graph.Float64)) },
			func(x float64) float64 { return x - 0 }},
		{"x-(-0)", func(x *graph.Node) *graph.Node { return ops.Sub(x, x.Graph().Scalar(negZero, graph.Float64)) },
			func(x float64) float64 { return x - negZero }},
		{"Scale(Scale(x,1e300),1e-300)", func(x *graph.Node) *graph.Node { return ops.Scale(ops.Scale(x, 1e300), 1e-300) },
			func(x float64) float64 { return x * 1e300 * 1e-300 }},
		{"Scale(Scale(x,2),0.5)", func(x *graph.Node) *graph.Node { return ops.Scale(ops.Scale(x, 2), 0.5) },
			func(x float64) float64 { return x * 2 * 0.5 }},
		{"Scale(Scale(x,0.5),2)", func(x *graph.Node) *graph.Node { return ops.Scale(ops.Scale(x, 0.5), 2) },
			func(x float64) float64 { return x * 0.5 * 2 }},
		{"Scale(Scale(x,0.1),3)", func(x *graph.Node) *graph.Node { return ops.Scale(ops.Scale(x, 0.1), 3) },
			func(x float64) float64 { return x * 0.1 * 3 }},
		{"-Scale(-x,3)·(-1)", func(x *graph.Node) *graph.Node { return ops.Scale(ops.Neg(ops.Scale(ops.Neg(x), 3)), -1) },
			func(x float64) float64 { return -(-x * 3) * -1 }},
		{"SumTo x's shape", func(x *graph.Node) *graph.Node { return ops.SumTo(x, len(extremes)) },
			func(x float64) float64 { return 0 + x }},
		{"x·(-0)", func(x *graph.Node) *graph.Node { return ops.Mul(x, x.Graph().Scalar(negZero, graph.Float64)) },
			func(x float64) float64 { return x * negZero }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", graph.Float64, len(extremes))
			y := tc.y(x)
			feed := must(graph.FromFloat64s(graph.Float64, extremes, len(extremes)))
			var plain []compile.Option
			for _, name := range compile.OptionalPasses() {
				plain = append(plain, compile.WithoutPass(name))
			}
			for _, opts := range [][]compile.Option{nil, plain} {
				got := runOnce(t, y, vm.Feeds{x: feed}, opts...)
				for i, v := range extremes {
					if w := tc.want(v); !sameFloat(got[i], w) {
						t.Errorf("x = %v: got %v, want %v (passes on: %v)", v, got[i], w, opts == nil)
					}
				}
			}
		})
	}
}

// sameFloat reports whether a and b are the same float, or both NaN.
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

// runOnce compiles y with opts, runs it on feeds and returns its value.
func runOnce(t *testing.T, y *graph.Node, feeds vm.Feeds, opts ...compile.Option) []float64 {
	t.Helper()
	return runNodesWith(t, feeds, opts, y)[0]
}

package ops

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// allDTypes are every dtype a node may have.
var allDTypes = []tensor.Dtype{graph.Float32, graph.Float64, graph.Int32, graph.Int64}

// castSource holds vals in dtype: truncated toward zero for an integer.
func castSource(t *testing.T, dtype tensor.Dtype, vals []float64) *tensor.Dense {
	t.Helper()
	if graph.IsInteger(dtype) {
		ints := make([]float64, len(vals))
		for i, v := range vals {
			ints[i] = math.Trunc(v)
		}
		vals = ints
	}
	return dense(t, dtype, []int{len(vals)}, vals...)
}

func TestCastBetweenAllDTypes(t *testing.T) {
	vals := []float64{-3, -1.75, -0.5, 0, 0.5, 2.5, 7.25, 1000}
	for _, from := range allDTypes {
		for _, to := range allDTypes {
			src := castSource(t, from, vals)
			g := graph.New()
			y := Cast(g.Const(src), to)
			if y.DType() != to {
				t.Fatalf("case %v→%v: dtype %v", from, to, y.DType())
			}
			got := eval(t, y, nil)
			for i := range vals {
				// The reference: the value the source holds, then C's and
				// PyTorch's conversion (truncation toward zero) to an integer.
				want := graph.Float(src, i)
				if graph.IsInteger(to) {
					want = math.Trunc(want)
				}
				if got.Dtype() != to || graph.Float(got, i) != want {
					t.Errorf("case %v→%v: element %d: got %v (%v), want %v", from, to, i, graph.Float(got, i), got.Dtype(), want)
				}
			}
		}
	}
}

func TestCastToItsOwnDTypeIsTheNode(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Int64, 2)
	if Cast(x, graph.Int64) != x {
		t.Errorf("Cast to the node's own dtype: got a new node, want the node")
	}
}

func TestCastRangeErrors(t *testing.T) {
	cases := []struct {
		from tensor.Dtype
		to   tensor.Dtype
		vals []float64
		want string // "" for no error
	}{
		{graph.Float64, graph.Int32, []float64{0, math.NaN()}, "value NaN at position (1) is out of int32's range"},
		{graph.Float64, graph.Int32, []float64{3e9, 0}, "value 3e+09 at position (0) is out of int32's range"},
		{graph.Float64, graph.Int32, []float64{-(1 << 31), 1<<31 - 1}, ""},
		{graph.Float64, graph.Int32, []float64{0, -(1 << 31) - 1}, "value -2.147483649e+09 at position (1) is out of int32's range"},
		{graph.Float32, graph.Int64, []float64{math.Inf(-1)}, "value -Inf at position (0) is out of int64's range"},
		{graph.Float64, graph.Int64, []float64{math.Ldexp(1, 63)}, "out of int64's range"},
		{graph.Float64, graph.Int64, []float64{-math.Ldexp(1, 63), math.Ldexp(1, 62)}, ""},
		{graph.Int64, graph.Int32, []float64{1 << 40}, "value 1099511627776 at position (0) is out of int32's range"},
		{graph.Int64, graph.Int32, []float64{-(1 << 31)}, ""},
		// Truncation toward zero decides: the values at each end that
		// truncate into the range are cast, the next ones out are not.
		{graph.Float64, graph.Int32, []float64{-2147483648.9, 2147483647.9, -0.9, 0.9}, ""},
		{graph.Float64, graph.Int32, []float64{math.Nextafter(-(1<<31)-1, 0)}, ""},
		{graph.Float64, graph.Int32, []float64{1 << 31}, "value 2.147483648e+09 at position (0) is out of int32's range"},
		{graph.Float32, graph.Int32, []float64{-(1 << 31), float64(math.Nextafter32(1<<31, 0))}, ""},
		{graph.Float32, graph.Int32, []float64{float64(math.Nextafter32(-(1 << 31), -1<<32))}, "value -2.147484e+09 at position (0) is out of int32's range"},
		{graph.Float32, graph.Int32, []float64{1 << 31}, "value 2.1474836e+09 at position (0) is out of int32's range"},
		{graph.Float64, graph.Int64, []float64{-math.Ldexp(1, 63), math.Nextafter(math.Ldexp(1, 63), 0)}, ""},
		{graph.Float64, graph.Int64, []float64{math.Nextafter(-math.Ldexp(1, 63), math.Inf(-1))}, "value -9.223372036854778e+18 at position (0) is out of int64's range"},
		{graph.Float32, graph.Int64, []float64{-math.Ldexp(1, 63), float64(math.Nextafter32(float32(math.Ldexp(1, 63)), 0))}, ""},
		{graph.Float32, graph.Int64, []float64{float64(math.Nextafter32(-float32(math.Ldexp(1, 63)), float32(math.Inf(-1))))}, "value -9.223373e+18 at position (0) is out of int64's range"},
		{graph.Float32, graph.Int64, []float64{math.Ldexp(1, 63)}, "value 9.223372e+18 at position (0) is out of int64's range"},
		{graph.Float32, graph.Int32, []float64{math.NaN()}, "value NaN at position (0) is out of int32's range"},
		{graph.Float64, graph.Int64, []float64{math.NaN()}, "value NaN at position (0) is out of int64's range"},
		{graph.Float32, graph.Int32, []float64{math.Inf(1)}, "value +Inf at position (0) is out of int32's range"},
		{graph.Float64, graph.Int32, []float64{math.Inf(-1)}, "value -Inf at position (0) is out of int32's range"},
		{graph.Float64, graph.Int64, []float64{math.Inf(1)}, "value +Inf at position (0) is out of int64's range"},
	}
	for _, c := range cases {
		g := graph.New()
		y := Cast(g.Const(dense(t, c.from, []int{len(c.vals)}, c.vals...)), c.to)
		out := graph.NewDenseOf(y.Type())
		err := y.Op().Forward(out, []*tensor.Dense{y.Inputs()[0].Value()})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("case %v→%v %v: %v", c.from, c.to, c.vals, err)
		case c.want == "":
			for i, v := range c.vals {
				if graph.Float(out, i) != math.Trunc(v) {
					t.Errorf("case %v→%v %v: element %d: got %v", c.from, c.to, c.vals, i, graph.Float(out, i))
				}
			}
		case err == nil || !strings.Contains(err.Error(), c.want):
			t.Errorf("case %v→%v %v: got error %v, want %q", c.from, c.to, c.vals, err, c.want)
		}
	}
}

func TestCastBuildErrors(t *testing.T) {
	runErrors(t, []errorCase{
		{"unsupported target", func(g *graph.Graph) *graph.Node { return Cast(g.Input("x", graph.Float64, 2), tensor.Bool) },
			"Cast", []string{"cannot cast to bool: the dtypes are float32, float64, int32 and int64"}},
	})
	if Cast(nil, graph.Float64).Err() == nil {
		t.Errorf("Cast of nil: got no error")
	}
}

func TestCastGradient(t *testing.T) {
	for _, c := range []struct {
		from, to tensor.Dtype
		grad     bool
	}{
		{graph.Float64, graph.Float32, true},
		{graph.Float32, graph.Float64, true},
		{graph.Float64, graph.Int64, false},
		{graph.Int32, graph.Float32, false},
		{graph.Int64, graph.Int32, false},
	} {
		g := graph.New()
		x := g.Input("x", c.from, 3)
		y := Cast(x, c.to)
		seed := g.Input("g", c.to, 3)
		grads := castOp{to: c.to}.Backward(graph.NewGradContext(y, []bool{true}), seed)
		if len(grads) != 1 {
			t.Fatalf("case %v→%v: %d gradients", c.from, c.to, len(grads))
		}
		switch gr := grads[0]; {
		case !c.grad && gr != nil:
			t.Errorf("case %v→%v: got gradient %v, want none", c.from, c.to, gr)
		case c.grad && (gr == nil || gr.OpName() != "Cast" || gr.Inputs()[0] != seed || !gr.Type().Equal(x.Type())):
			t.Errorf("case %v→%v: got gradient %v, want the seed cast to %v", c.from, c.to, gr, x.Type())
		}
	}
}

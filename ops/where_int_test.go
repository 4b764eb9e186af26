package ops

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// bigInts are int64 values a float64 does not hold (beyond 2⁵³, odd), and
// the bounds.
var bigInts = []int64{1<<53 + 1, -(1<<60 + 3), math.MaxInt64, math.MinInt64, 1<<62 + 5, 7}

// Where selects int64 and int32 values exactly, beyond 2⁵³ too, from a
// cond of any dtype (a float mask, NaN counting as non-zero, or an
// integer), broadcasting all three.
func TestWhereIntegers(t *testing.T) {
	a, err := graph.FromInt64s(graph.Int64, bigInts, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := graph.FromInt64s(graph.Int64, []int64{-(1<<55 + 1)}) // a scalar, broadcast
	for _, cdt := range []tensor.Dtype{graph.Float32, graph.Float64, graph.Int32, graph.Int64} {
		cond, _ := graph.FromInt64s(cdt, []int64{1, 0, 3}, 3) // a row, broadcast
		if graph.IsFloat(cdt) {
			graph.SetFloat(cond, 2, math.NaN())
		}
		g := graph.New()
		y := Where(g.Const(cond), g.Const(a), g.Const(b))
		got := graph.Int64s(eval(t, y, nil))
		want := slices.Clone(bigInts)
		want[1], want[4] = -(1<<55 + 1), -(1<<55 + 1)
		if y.DType() != graph.Int64 || !slices.Equal(got, want) {
			t.Errorf("cond %v: got %v %v, want int64 %v", cdt, y.DType(), got, want)
		}
	}
	g := graph.New()
	a32, _ := graph.FromInt64s(graph.Int32, []int64{math.MaxInt32, math.MinInt32, 5}, 3)
	b32, _ := graph.FromInt64s(graph.Int32, []int64{-1, -2, -3}, 3)
	cond, _ := graph.FromFloat64s(graph.Float32, []float64{0, 1, 0}, 3)
	got := graph.Int64s(eval(t, Where(g.Const(cond), g.Const(a32), g.Const(b32)), nil))
	if want := []int64{-1, math.MinInt32, -3}; !slices.Equal(got, want) {
		t.Errorf("int32: got %v, want %v", got, want)
	}
}

// Where's operands a and b must have one dtype; an integer and a float
// one is an error naming both.
func TestWhereIntegerErrors(t *testing.T) {
	for _, pair := range [][2]tensor.Dtype{{graph.Int64, graph.Float64}, {graph.Int64, graph.Int32}, {graph.Float64, graph.Int64}} {
		g := graph.New()
		y := Where(g.Input("c", graph.Float64, 3), g.Input("a", pair[0], 3), g.Input("b", pair[1], 3))
		err := y.Err()
		if err == nil || !strings.Contains(err.Error(), "dtypes differ") || !strings.Contains(err.Error(), pair[0].String()+"(3)") || !strings.Contains(err.Error(), pair[1].String()+"(3)") {
			t.Errorf("Where of %v and %v: got %v, want an error naming both dtypes", pair[0], pair[1], err)
		}
	}
}

// Transpose and BroadcastTo move integer elements as they are: int64
// values beyond 2⁵³ come out exact.
func TestLayoutIntegers(t *testing.T) {
	x, _ := graph.FromInt64s(graph.Int64, bigInts, 2, 3)
	g := graph.New()
	got := graph.Int64s(eval(t, Transpose(g.Const(x)), nil))
	if want := []int64{bigInts[0], bigInts[3], bigInts[1], bigInts[4], bigInts[2], bigInts[5]}; !slices.Equal(got, want) {
		t.Errorf("Transpose: got %v, want %v", got, want)
	}
	got = graph.Int64s(eval(t, BroadcastTo(g.Const(x), 2, 2, 3), nil))
	if want := slices.Concat(bigInts, bigInts); !slices.Equal(got, want) {
		t.Errorf("BroadcastTo: got %v, want %v", got, want)
	}
	x32, _ := graph.FromInt64s(graph.Int32, []int64{math.MaxInt32, -4, math.MinInt32}, 3, 1)
	got = graph.Int64s(eval(t, BroadcastTo(g.Const(x32), 3, 2), nil))
	if want := []int64{math.MaxInt32, math.MaxInt32, -4, -4, math.MinInt32, math.MinInt32}; !slices.Equal(got, want) {
		t.Errorf("BroadcastTo int32: got %v, want %v", got, want)
	}
}

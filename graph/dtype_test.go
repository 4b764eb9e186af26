package graph_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

func TestIntegerLeaves(t *testing.T) {
	g := graph.New()
	x := g.Input("labels", graph.Int64, 4)
	require.NoError(t, g.Err())
	require.Equal(t, "int64(4)", x.Type().String())
	v, err := graph.FromInt64s(graph.Int32, []int64{3, -1, 7}, 3)
	require.NoError(t, err)
	c := g.Const(v)
	require.NoError(t, g.Err())
	v.Int32s()[0] = 99
	require.Equal(t, []int32{3, -1, 7}, c.Value().Int32s(), "a constant keeps its own copy")
	s := g.Scalar(-5, graph.Int64)
	require.NoError(t, g.Err())
	require.Equal(t, []int64{-5}, s.Value().Int64s())
}

func TestIntegerParamIsAnError(t *testing.T) {
	g := graph.New()
	p := g.Param("steps", graph.NewDense(graph.Int64, 2))
	require.Error(t, p.Err())
	msg := g.Err().Error()
	for _, want := range []string{`nabla: Param: "steps" is int64(2): parameters are float32 or float64`, "Input or a Const", "dtype_test.go:"} {
		require.Contains(t, msg, want)
	}
}

func TestScalarIntegerChecksItsValue(t *testing.T) {
	for _, c := range []struct {
		v     float64
		dtype tensor.Dtype
	}{{2.5, graph.Int64}, {math.NaN(), graph.Int32}, {1 << 31, graph.Int32}, {math.Inf(1), graph.Int64}} {
		g := graph.New()
		g.Scalar(c.v, c.dtype)
		require.ErrorContains(t, g.Err(), "is not an integer that "+c.dtype.String()+" holds", "case %v %v", c.v, c.dtype)
	}
	g := graph.New()
	g.Scalar(1, tensor.Bool)
	require.ErrorContains(t, g.Err(), "dtype bool is not supported (float32, float64, int32 or int64)")
}

func TestFromInt64sAndFromFloat64s(t *testing.T) {
	big := int64(1)<<53 + 1
	i64, err := graph.FromInt64s(graph.Int64, []int64{big, -2}, 2)
	require.NoError(t, err)
	require.Equal(t, []int64{big, -2}, graph.Int64s(i64), "int64s beyond 2⁵³ are exact")
	f32, err := graph.FromInt64s(graph.Float32, []int64{3, -2}, 1, 2)
	require.NoError(t, err)
	require.Equal(t, []float32{3, -2}, f32.Float32s())
	_, err = graph.FromInt64s(graph.Int32, []int64{1 << 31}, 1)
	require.ErrorContains(t, err, "value 2147483648 at index 0 does not fit int32")
	_, err = graph.FromInt64s(graph.Int64, []int64{1, 2}, 3)
	require.ErrorContains(t, err, "2 values for shape (3)")

	i32, err := graph.FromFloat64s(graph.Int32, []float64{4, -3}, 2)
	require.NoError(t, err)
	require.Equal(t, []int32{4, -3}, i32.Int32s())
	require.Equal(t, []float64{4, -3}, graph.Float64s(i32))
	_, err = graph.FromFloat64s(graph.Int64, []float64{1, 0.5}, 2)
	require.ErrorContains(t, err, "value 0.5 at index 1 is not an integer that int64 holds")
	_, err = graph.FromFloat64s(graph.Int64, []float64{math.Ldexp(1, 63)}, 1)
	require.ErrorContains(t, err, "is not an integer that int64 holds")

	fl, err := graph.FromFloat64s(graph.Float64, []float64{2.9, -2.9}, 2)
	require.NoError(t, err)
	require.Equal(t, []int64{2, -2}, graph.Int64s(fl), "floats convert toward zero")
}

func TestCloneDenseIntegers(t *testing.T) {
	for _, dtype := range []tensor.Dtype{graph.Int32, graph.Int64} {
		v, err := graph.FromInt64s(dtype, []int64{1, 2, 3, 4, 5, 6}, 2, 3)
		require.NoError(t, err)
		c, err := graph.CloneDense(v)
		require.NoError(t, err)
		require.Equal(t, graph.Int64s(v), graph.Int64s(c), "dtype %v", dtype)
		require.Equal(t, dtype, c.Dtype())
		graph.SetFloat(v, 0, 9)
		require.Equal(t, 9.0, graph.Float(v, 0))
		require.Equal(t, 1.0, graph.Float(c, 0), "the clone has its own data")
	}
}

func TestSameDTypeSaysToCast(t *testing.T) {
	f64, i64 := graph.TypeOf(graph.Float64, 2), graph.TypeOf(graph.Int64, 2)
	_, err := graph.SameDType([]graph.Type{f64, i64})
	require.EqualError(t, err, "dtypes differ: float64(2) and int64(2): convert one with ops.Cast")
	_, err = graph.SameDType([]graph.Type{i64, i64})
	require.EqualError(t, err, "int64(2) is not supported: the op computes on float32 or float64 (convert with ops.Cast)")
	d, err := graph.SameDType([]graph.Type{f64, f64})
	require.NoError(t, err)
	require.Equal(t, graph.Float64, d)
	require.True(t, graph.IsInteger(graph.Int32) && graph.IsInteger(graph.Int64) && !graph.IsInteger(graph.Float64))
	require.True(t, graph.IsSupported(graph.Int32) && !graph.IsSupported(tensor.Int) && !graph.IsSupported(tensor.Uint8))
}

func TestScalarString(t *testing.T) {
	big, _ := graph.FromInt64s(graph.Int64, []int64{1<<53 + 1})
	f32, _ := graph.FromFloat64s(graph.Float32, []float64{0.1})
	f64, _ := graph.FromFloat64s(graph.Float64, []float64{-2.5})
	i32, _ := graph.FromInt64s(graph.Int32, []int64{-7})
	for _, c := range []struct {
		t    *tensor.Dense
		want string
	}{{big, "9007199254740993"}, {f32, "0.1"}, {f64, "-2.5"}, {i32, "-7"}} {
		if got := graph.ScalarString(c.t); got != c.want {
			t.Errorf("case %v: got %q, want %q", c.t.Dtype(), got, c.want)
		}
	}
	g := graph.New()
	g.Const(big)
	var b strings.Builder
	require.NoError(t, graph.WriteDot(&b, g, graph.DotOptions{}))
	require.Contains(t, b.String(), "const 9007199254740993")
}

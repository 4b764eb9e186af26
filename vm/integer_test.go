package vm_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TestIntegerInputsRun feeds int64 indices and int32 labels and reads an
// integer output.
func TestIntegerInputsRun(t *testing.T) {
	g := graph.New()
	idx := g.Input("idx", graph.Int64, 3)
	table := g.Const(dense(t, graph.Float64, []int{3, 2}, 1, 2, 3, 4, 5, 6))
	rows := ops.Gather(table, idx)
	back := ops.Cast(ops.Sum(rows, 1), graph.Int32) // row sums: 3, 7, 11
	m := machine(t, []*graph.Node{rows, back})
	iv, err := graph.FromInt64s(graph.Int64, []int64{2, 0, 2}, 3)
	require.NoError(t, err)
	for range 2 { // the second run reuses the buffers
		require.NoError(t, m.Run(vm.Feeds{idx: iv}))
		r, err := m.Value(rows)
		require.NoError(t, err)
		require.Equal(t, []float64{5, 6, 1, 2, 5, 6}, r.Float64s())
		b, err := m.Value(back)
		require.NoError(t, err)
		require.Equal(t, []int32{11, 3, 11}, b.Int32s())
		in, err := m.Value(idx)
		require.NoError(t, err)
		require.Equal(t, []int64{2, 0, 2}, in.Int64s())
	}
	allocs := testing.AllocsPerRun(20, func() { _ = m.Run(vm.Feeds{idx: iv}) })
	require.Zero(t, allocs, "Run with integer feeds allocates nothing")
}

func TestFeedingTheWrongKindOfDType(t *testing.T) {
	g := graph.New()
	labels := g.Input("labels", graph.Int64, 2)
	x := g.Input("x", graph.Float32, 2)
	y := ops.Mul(x, ops.Cast(labels, graph.Float32))
	m := machine(t, []*graph.Node{y})
	ints, _ := graph.FromInt64s(graph.Int64, []int64{1, 2}, 2)
	floats, _ := graph.FromFloat64s(graph.Float32, []float64{1, 2}, 2)
	i32, _ := graph.FromInt64s(graph.Int32, []int64{1, 2}, 2)

	// Each error ends with the caller's file:line.
	err := m.Run(vm.Feeds{labels: floats, x: floats})
	require.Regexp(t, `^nabla: Run: input "labels": got a float32 tensor for int64 values: convert it \(graph.FromInt64s, say\) at integer_test.go:\d+$`, err.Error())
	err = m.Run(vm.Feeds{labels: ints, x: ints})
	require.Regexp(t, `^nabla: Run: input "x": got an int64 tensor for float32 values: convert it \(graph.FromFloat64s, say\), or make the input int64 and cast it in the graph with ops.Cast at integer_test.go:\d+$`, err.Error())
	err = m.Run(vm.Feeds{labels: i32, x: floats})
	require.Regexp(t, `^nabla: Run: input "labels": dtype int32, want int64 at integer_test.go:\d+$`, err.Error())
	require.NoError(t, m.Run(vm.Feeds{labels: ints, x: floats}))
	v, err := m.Value(y)
	require.NoError(t, err)
	require.Equal(t, []float32{1, 4}, v.Float32s())
}

// TestNaNCheckSkipsIntegers: WithNaNCheck reads only float outputs.
func TestNaNCheckSkipsIntegers(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := ops.Cast(ops.Cast(x, graph.Int64), graph.Float64)
	m := machine(t, []*graph.Node{y})
	m2, err := vm.New(m.Program(), vm.WithNaNCheck())
	require.NoError(t, err)
	require.NoError(t, m2.Run(vm.Feeds{x: dense(t, graph.Float64, []int{2}, -2.5, 7.9)}))
	v, err := m2.Value(y)
	require.NoError(t, err)
	require.Equal(t, []float64{-2, 7}, v.Float64s())
}

// TestReshapedIntegerLabels: labels fed as a column are reshaped to the
// vector CrossEntropy takes.
func TestReshapedIntegerLabels(t *testing.T) {
	g := graph.New()
	col := g.Input("labels", graph.Int32, 2, 1)
	logits := g.Const(dense(t, graph.Float64, []int{2, 2}, 0, 0, 1, 1))
	flat := ops.Reshape(col, 2)
	loss := ops.CrossEntropy(logits, flat)
	m := machine(t, []*graph.Node{loss, flat})
	lv, _ := graph.FromInt64s(graph.Int32, []int64{1, 0}, 2, 1)
	require.NoError(t, m.Run(vm.Feeds{col: lv}))
	f, err := m.Value(flat)
	require.NoError(t, err)
	require.Equal(t, []int32{1, 0}, f.Int32s())
	l, err := m.Value(loss)
	require.NoError(t, err)
	require.InDeltaSlice(t, []float64{math.Ln2, math.Ln2}, l.Float64s(), 1e-15)
}

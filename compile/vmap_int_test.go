package compile_test

import (
	"math"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// int64s is a tensor of int64 values of the given shape.
func int64s(t *testing.T, vals []int64, shape ...int) *tensor.Dense {
	t.Helper()
	d, err := graph.FromInt64s(graph.Int64, vals, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A Vmapped While with int64 carries (beyond 2⁵³, where a float64 does
// not hold them, one of them starting from a value every example shares)
// is one loop over the batch, not a loop over the examples: its final
// carries, steps and per-example gradient equal the examples' separate
// runs and the loop's own arithmetic bit for bit.
func TestVmapWhileInt64Carries(t *testing.T) {
	limits := []float64{-1, 0.5, 2.5, 4, 7, 3}
	bigs := []int64{1<<62 + 1, 1<<53 + 1, -(1<<60 + 3), 1<<55 + 7, math.MaxInt64, math.MinInt64 + 5}
	const start, maxSteps = 1<<61 + 3, 5
	lv, _ := graph.FromFloat64s(graph.Float64, limits, len(limits))
	sv, _ := graph.FromFloat64s(graph.Float64, []float64{1.5, 0.5, 2, -1, 1.25, 3}, len(limits))
	inputs := []*tensor.Dense{lv, int64s(t, bigs, len(bigs)), int64s(t, []int64{start}), sv}
	batched, axes := []bool{true, true, false, true}, []int{0, 0, compile.NotBatched, 0}
	// Per step: x counts up, y scales by s, the int64 carries c1 and c2
	// swap.
	f := func(ex []*graph.Node) []*graph.Node {
		limit, big, s := ex[0], ex[1], ex[3]
		zero := ops.Sub(limit, limit)
		final, steps := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(c[0], limit) },
			func(c []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Add(c[0], ops.Div(limit, limit)), ops.Mul(c[1], s), c[3], c[2]}
			}, []*graph.Node{zero, ops.Div(s, s), ex[2], big}, ops.MaxSteps(maxSteps))
		grad, err := compile.Grad(final[1], s)
		if err != nil {
			panic(err)
		}
		return append(final, steps, grad[0])
	}
	stop := compile.LoopedOps()
	got := batchedRun(t, func(in []*graph.Node) []*graph.Node { return vmapOrPanic(f, in, axes) }, inputs)
	if looped := stop(); len(looped) > 0 {
		t.Errorf("looped %v over the batch", looped)
	}
	checkRows(t, "Vmap of While with int64 carries", got, separate(t, f, inputs, batched), 0)

	// The loop by hand.
	c1s, c2s := graph.Int64s(got[2]), graph.Int64s(got[3])
	stepsGot := graph.Int64s(got[4])
	for b, limit := range limits {
		x, c1, c2, steps := 0.0, int64(start), bigs[b], int64(0)
		for ; steps < maxSteps && x < limit; steps++ {
			x++
			c1, c2 = c2, c1
		}
		if c1s[b] != c1 || c2s[b] != c2 || stepsGot[b] != steps {
			t.Errorf("example %d: carries %d, %d after %d steps, want %d, %d after %d", b, c1s[b], c2s[b], stepsGot[b], c1, c2, steps)
		}
	}
}

// A Vmapped Cond with a batched predicate and int64 outputs (beyond 2⁵³,
// batched or shared by the examples in either branch) and an int32 one
// selects each example's outputs exactly, without a loop over the
// examples: bit for bit its separate run's and the branch it takes.
func TestVmapCondIntOutputs(t *testing.T) {
	xs := []float64{2, -1, 0, 0.5, -3}
	bigs := []int64{1<<62 + 1, 1<<53 + 1, -(1<<60 + 3), 1<<55 + 7, math.MaxInt64}
	smalls := []int32{math.MaxInt32, 5, -6, math.MinInt32, 8}
	const shared = -(1<<58 + 9)
	xv, _ := graph.FromFloat64s(graph.Float64, xs, len(xs))
	sv := tensor.New(tensor.WithShape(len(smalls)), tensor.WithBacking(smalls))
	inputs := []*tensor.Dense{xv, int64s(t, bigs, len(bigs)), int64s(t, []int64{shared}), sv}
	batched, axes := []bool{true, true, false, true}, []int{0, 0, compile.NotBatched, 0}
	f := func(ex []*graph.Node) []*graph.Node {
		g := ex[0].Graph()
		return ops.Cond(ops.Greater(ex[0], ops.Sub(ex[0], ex[0])), func(o []*graph.Node) []*graph.Node {
			return []*graph.Node{o[1], o[2], o[3], ops.Scale(o[0], 2)}
		}, func(o []*graph.Node) []*graph.Node {
			return []*graph.Node{o[2], o[1], g.Scalar(-9, graph.Int32), ops.Neg(o[0])}
		}, ex)
	}
	stop := compile.LoopedOps()
	got := batchedRun(t, func(in []*graph.Node) []*graph.Node { return vmapOrPanic(f, in, axes) }, inputs)
	if looped := stop(); len(looped) > 0 {
		t.Errorf("looped %v over the batch", looped)
	}
	checkRows(t, "Vmap of Cond with integer outputs", got, separate(t, f, inputs, batched), 0)
	var want [3][]int64
	for b, x := range xs {
		if x > 0 {
			want[0], want[1], want[2] = append(want[0], bigs[b]), append(want[1], shared), append(want[2], int64(smalls[b]))
		} else {
			want[0], want[1], want[2] = append(want[0], shared), append(want[1], bigs[b]), append(want[2], -9)
		}
	}
	for k, w := range want {
		if g := graph.Int64s(got[k]); got[k].Dtype() != inputs[min(k+1, 3)].Dtype() || !slices.Equal(g, w) {
			t.Errorf("output %d: got %v %v, want %v", k, got[k].Dtype(), g, w)
		}
	}
}

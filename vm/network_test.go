package vm_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TestTwoLayerTanhNetwork runs y = tanh(tanh(x·W1 + b1)·W2 + b2) from feeds
// and parameters and compares with values worked by hand.
func TestTwoLayerTanhNetwork(t *testing.T) {
	for _, dt := range []graph.Type{graph.TypeOf(graph.Float64), graph.TypeOf(graph.Float32)} {
		g := graph.New()
		x := g.Input("x", dt.DType, 2, 3)
		w1 := g.Param("W1", dense(t, dt.DType, []int{3, 2}, 0.1, -0.2, 0.3, 0.4, -0.5, 0.6))
		b1 := g.Param("b1", dense(t, dt.DType, []int{2}, 0.05, -0.1))
		w2 := g.Param("W2", dense(t, dt.DType, []int{2, 1}, 1.5, -2))
		b2 := g.Param("b2", dense(t, dt.DType, []int{1}, 0.2))
		h := ops.Tanh(ops.Add(ops.MatMul(x, w1), b1))
		y := ops.Tanh(ops.Add(ops.MatMul(h, w2), b2))
		m := machine(t, []*graph.Node{y, h})
		require.NoError(t, m.Run(vm.Feeds{x: dense(t, dt.DType, []int{2, 3}, 1, 0, -1, 0.5, 2, 0)}))

		// Pre-activations of the hidden layer:
		//   row 0: 1·0.1 + 0·0.3 + (-1)·(-0.5) + 0.05 = 0.65,  1·(-0.2) + 0·0.4 + (-1)·0.6 - 0.1 = -0.9
		//   row 1: 0.5·0.1 + 2·0.3 + 0·(-0.5) + 0.05 = 0.7,    0.5·(-0.2) + 2·0.4 + 0·0.6 - 0.1 = 0.6
		hWant := []float64{math.Tanh(0.65), math.Tanh(-0.9), math.Tanh(0.7), math.Tanh(0.6)}
		yWant := []float64{
			math.Tanh(1.5*hWant[0] - 2*hWant[1] + 0.2),
			math.Tanh(1.5*hWant[2] - 2*hWant[3] + 0.2),
		}
		tol := 1e-12
		if dt.DType == graph.Float32 {
			tol = 1e-6
		}
		hv, err := m.Value(h)
		require.NoError(t, err)
		require.InDeltaSlice(t, hWant, graph.Float64s(hv), tol, "%v hidden", dt)
		yv, err := m.Value(y)
		require.NoError(t, err)
		require.Equal(t, []int{2, 1}, []int(yv.Shape()))
		require.InDeltaSlice(t, yWant, graph.Float64s(yv), tol, "%v output", dt)
	}
}

// TestTrainingStepDoesNotAllocate: a forward, backward and SGD update in
// one program runs without allocating after the first run.
func TestTrainingStepDoesNotAllocate(t *testing.T) {
	for _, dtype := range []graph.Type{graph.TypeOf(graph.Float64), graph.TypeOf(graph.Float32)} {
		g := graph.New()
		x := g.Input("x", dtype.DType, 8, 5)
		labels := g.Input("labels", dtype.DType, 8)
		w1 := g.Param("W1", graph.NewDense(dtype.DType, 5, 16))
		b1 := g.Param("b1", graph.NewDense(dtype.DType, 16))
		w2 := g.Param("W2", graph.NewDense(dtype.DType, 16, 3))
		logits := ops.MatMul(ops.Tanh(ops.Add(ops.MatMul(x, w1), b1)), w2)
		loss := ops.Mean(ops.CrossEntropy(logits, labels))
		params := []*graph.Node{w1, b1, w2}
		grads, err := compile.Grad(loss, params...)
		require.NoError(t, err)
		updates := map[*graph.Node]*graph.Node{}
		for i, p := range params {
			updates[p] = ops.Sub(p, ops.Scale(grads[i], 0.1))
		}
		m := machine(t, []*graph.Node{loss}, compile.WithUpdates(updates))
		feeds := vm.Feeds{
			x:      graph.NewDense(dtype.DType, 8, 5),
			labels: dense(t, dtype.DType, []int{8}, 0, 1, 2, 0, 1, 2, 0, 1),
		}
		require.NoError(t, m.Run(feeds))
		allocs := testing.AllocsPerRun(20, func() {
			if err := m.Run(feeds); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "%v: allocations per training step", dtype.DType)
	}
}

// TestEmptyBatch: a zero-size input is fed and computed like any other.
func TestEmptyBatch(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 0, 3)
	w := g.Param("w", dense(t, graph.Float64, []int{3, 2}, 1, 2, 3, 4, 5, 6))
	y := ops.MatMul(x, w)
	s := ops.Sum(y)
	m := machine(t, []*graph.Node{y, s})
	require.NoError(t, m.Run(vm.Feeds{x: graph.NewDense(graph.Float64, 0, 3)}))
	yv, err := m.Value(y)
	require.NoError(t, err)
	require.Equal(t, []int{0, 2}, []int(yv.Shape()))
	sv, err := m.Value(s)
	require.NoError(t, err)
	require.Equal(t, []float64{0}, sv.Float64s())
}

// TestProgramSharedAcrossGoroutines: one Program, eight machines each
// owned by its own goroutine, give each the same results as running alone
// (run with -race to see that nothing in the program is written).
func TestProgramSharedAcrossGoroutines(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 3)
	w := g.Param("w", dense(t, graph.Float64, []int{3, 2}, 0.5, -1, 2, 0.25, -0.75, 1))
	loss := ops.Sum(ops.Square(ops.Tanh(ops.MatMul(x, w))))
	grads, err := compile.Grad(loss, w)
	require.NoError(t, err)
	p, err := compile.Compile([]*graph.Node{loss, grads[0]},
		compile.WithUpdates(map[*graph.Node]*graph.Node{w: ops.Sub(w, ops.Scale(grads[0], 0.1))}))
	require.NoError(t, err)
	feed := func(k int) vm.Feeds {
		vals := make([]float64, 12)
		for i := range vals {
			vals[i] = float64((i+k)%5) - 2
		}
		return vm.Feeds{x: dense(t, graph.Float64, []int{4, 3}, vals...)}
	}
	// What each machine computes over ten steps, run alone.
	alone := func(k int) []float64 {
		m, err := vm.New(p)
		require.NoError(t, err)
		var losses []float64
		for range 10 {
			require.NoError(t, m.Run(feed(k)))
			v, err := m.Value(loss)
			require.NoError(t, err)
			losses = append(losses, v.Float64s()[0])
		}
		return losses
	}
	const machines = 8
	want := make([][]float64, machines)
	feeds := make([]vm.Feeds, machines)
	for k := range want {
		want[k] = alone(k)
		feeds[k] = feed(k)
	}
	got := make([][]float64, machines)
	done := make(chan int)
	for k := range got {
		go func() {
			defer func() { done <- k }()
			m, err := vm.New(p)
			if err != nil {
				return
			}
			for range 10 {
				if m.Run(feeds[k]) != nil {
					return
				}
				v, _ := m.Value(loss)
				got[k] = append(got[k], v.Float64s()[0])
			}
		}()
	}
	for range got {
		<-done
	}
	require.Equal(t, want, got)
}

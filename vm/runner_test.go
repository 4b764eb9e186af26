package vm_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// runnerModel is a small perceptron with a mean squared loss and SGD
// updates, built on inputs of a given batch size in g, sharing params.
type runnerModel struct {
	w1, b1, w2 *graph.Node
}

func newRunnerModel(g *graph.Graph) runnerModel {
	rng := rand.New(rand.NewPCG(1, 2))
	param := func(name string, shape ...int) *graph.Node {
		v := make([]float64, graph.ShapeSize(shape))
		for i := range v {
			v[i] = rng.Float64() - 0.5
		}
		t, _ := graph.FromFloat64s(graph.Float64, v, shape...)
		return g.Param(name, t)
	}
	return runnerModel{w1: param("w1", 4, 8), b1: param("b1", 8), w2: param("w2", 8, 1)}
}

// build returns the predictions and the loss for inputs x (n, 4) and
// targets t (n, 1).
func (m runnerModel) build(x, t *graph.Node) (pred, loss *graph.Node) {
	pred = ops.MatMul(ops.Tanh(ops.Add(ops.MatMul(x, m.w1), m.b1)), m.w2)
	return pred, ops.Mean(ops.Square(ops.Sub(pred, t)))
}

// sgd is the SGD step (lr 0.1) of a loss: a vm.Trainer for outputs
// whose first is the loss.
func (m runnerModel) sgd(outputs []*graph.Node) (map[*graph.Node]*graph.Node, error) {
	return sgdUpdates(outputs[0], 0.1, m.w1, m.b1, m.w2)
}

// sgdUpdates are plain gradient descent's updates of params for loss.
func sgdUpdates(loss *graph.Node, lr float64, params ...*graph.Node) (map[*graph.Node]*graph.Node, error) {
	grads, err := compile.Grad(loss, params...)
	if err != nil {
		return nil, err
	}
	updates := map[*graph.Node]*graph.Node{}
	for i, p := range params {
		updates[p] = ops.Sub(p, ops.Scale(grads[i], lr))
	}
	return updates, nil
}

func rows(rng *rand.Rand, n, cols int) *tensor.Dense {
	v := make([]float64, n*cols)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	t, _ := graph.FromFloat64s(graph.Float64, v, n, cols)
	return t
}

// A model built for batches of 64 trains on a last batch of 17 and
// evaluates 1 and 1000 rows, exactly as graphs built for those sizes do.
func TestRunnerRunsAnyBatchSize(t *testing.T) {
	g := graph.New()
	model := newRunnerModel(g)
	x, y := g.Input("x", graph.Float64, 64, 4), g.Input("y", graph.Float64, 64, 1)
	_, loss := model.build(x, y)
	r, err := vm.NewRunner([]*graph.Node{loss}, nil, model.sgd, vm.WithThreads(2))
	require.NoError(t, err)

	// The reference: programs compiled from graphs built for each size by
	// hand, sharing their parameters.
	ref := map[int]*vm.Machine{}
	refIn := map[int][2]*graph.Node{}
	var base *vm.Machine
	for _, n := range []int{64, 17} {
		xr, yr := g.Input("x", graph.Float64, n, 4), g.Input("y", graph.Float64, n, 1)
		_, l := model.build(xr, yr)
		u, err := model.sgd([]*graph.Node{l})
		require.NoError(t, err)
		p, err := compile.Compile([]*graph.Node{l}, compile.WithUpdates(u))
		require.NoError(t, err)
		var opts []vm.Option
		if base != nil {
			opts = append(opts, vm.SharingParams(base))
		}
		m, err := vm.New(p, append(opts, vm.WithThreads(1))...)
		require.NoError(t, err)
		if base == nil {
			base = m
		}
		ref[n], refIn[n] = m, [2]*graph.Node{xr, yr}
	}

	rng := rand.New(rand.NewPCG(3, 4))
	for step, n := range []int{64, 64, 17, 64, 17} {
		xv, yv := rows(rng, n, 4), rows(rng, n, 1)
		require.NoError(t, r.Run(vm.Feeds{x: xv, y: yv}))
		require.NoError(t, ref[n].Run(vm.Feeds{refIn[n][0]: xv, refIn[n][1]: yv}))
		got, err := r.Scalar(loss)
		require.NoError(t, err)
		want, err := ref[n].Scalar(ref[n].Program().Outputs()[0])
		require.NoError(t, err)
		require.Equal(t, math.Float64bits(want), math.Float64bits(got), "step %d (batch %d): loss", step, n)
	}
	for _, p := range []*graph.Node{model.w1, model.b1, model.w2} {
		got, err := r.Value(p)
		require.NoError(t, err)
		want, err := base.Value(p)
		require.NoError(t, err)
		require.Equal(t, graph.Float64s(want), graph.Float64s(got), "parameter %v", p)
	}
	require.Equal(t, 2, r.Sizes())

	// Evaluation on 1 and 1000 rows of a prediction-only Runner that
	// shares the trained parameters through its graph.
	pred, _ := model.build(x, y)
	eval, err := vm.NewRunner([]*graph.Node{pred}, nil, nil, vm.WithThreads(1))
	require.NoError(t, err)
	for _, p := range []*graph.Node{model.w1, model.b1, model.w2} {
		v, err := base.Value(p)
		require.NoError(t, err)
		require.NoError(t, eval.Machine().Set(p, v))
	}
	for _, n := range []int{1, 1000} {
		xv := rows(rng, n, 4)
		require.NoError(t, eval.Run(vm.Feeds{x: xv, y: rows(rng, n, 1)}))
		got, err := eval.Value(pred)
		require.NoError(t, err)
		require.Equal(t, []int{n, 1}, []int(got.Shape()))
		// Row by row against the batch-64 machine, on a batch holding it.
		xs := graph.Float64s(xv)
		for _, i := range []int{0, n / 2, n - 1} {
			batch := make([]float64, 64*4)
			copy(batch, xs[i*4:i*4+4])
			bt, _ := graph.FromFloat64s(graph.Float64, batch, 64, 4)
			require.NoError(t, eval.Run(vm.Feeds{x: bt, y: rows(rng, 64, 1)}))
			row, err := eval.Value(pred)
			require.NoError(t, err)
			require.InDelta(t, graph.Float64s(row)[0], graph.Float64s(got)[i], 1e-12, "row %d of %d", i, n)
			require.NoError(t, eval.Run(vm.Feeds{x: xv, y: rows(rng, n, 1)}))
			got, _ = eval.Value(pred)
		}
	}
}

func TestRunnerDoesNotAllocate(t *testing.T) {
	g := graph.New()
	model := newRunnerModel(g)
	x, y := g.Input("x", graph.Float64, 64, 4), g.Input("y", graph.Float64, 64, 1)
	_, loss := model.build(x, y)
	r, err := vm.NewRunner([]*graph.Node{loss}, nil, model.sgd, vm.WithThreads(2))
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{64, 17} {
		feeds := vm.Feeds{x: rows(rng, n, 4), y: rows(rng, n, 1)}
		require.NoError(t, r.Run(feeds))
		allocs := testing.AllocsPerRun(10, func() {
			if err := r.Run(feeds); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "batch %d", n)
	}
}

func TestRunnerErrors(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 8, 3)
	z := g.Input("z", graph.Float64, 8, 2)
	flat := ops.Reshape(x, 8*3) // bakes the batch size in
	out := ops.Add(ops.Sum(flat), ops.Sum(z))
	r, err := vm.NewRunner([]*graph.Node{out}, nil, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 8))
	require.NoError(t, r.Run(vm.Feeds{x: rows(rng, 8, 3), z: rows(rng, 8, 2)}))
	err = r.Run(vm.Feeds{x: rows(rng, 5, 3), z: rows(rng, 5, 2)})
	require.ErrorContains(t, err, "Reshape")
	require.ErrorContains(t, err, "runner_test.go")
	require.ErrorContains(t, err, "batch size 5; the graph was built for 8")
	require.NoError(t, g.Err(), "a refused size must not poison the graph")
	require.ErrorContains(t, r.Run(vm.Feeds{x: rows(rng, 5, 3), z: rows(rng, 4, 2)}), "batched inputs share one leading size")
	require.ErrorContains(t, r.Run(vm.Feeds{x: rows(rng, 5, 3)}), `input "z"`)
}

// A BatchNorm's running statistics follow the batch size a Runner runs,
// as a graph built for that size would.
func TestRunnerReplaysStateUpdates(t *testing.T) {
	g := graph.New()
	bn := nn.NewBatchNorm1d(g, "bn", 3, 1e-5, 0.1)
	x := g.Input("x", graph.Float64, 64, 3)
	y := ops.Sum(bn.Forward(x))
	r, err := vm.NewRunner([]*graph.Node{y}, nn.StateUpdates(bn), nil, vm.WithThreads(1))
	require.NoError(t, err)
	// The same updates coming from a Trainer, as nn.TrainingUpdates gives
	// them (built by the Forward on 64 rows), are replayed too.
	built := nn.StateUpdates(bn)
	fromTrainer, err := vm.NewRunner([]*graph.Node{y}, nil, func([]*graph.Node) (map[*graph.Node]*graph.Node, error) {
		return built, nil
	}, vm.WithThreads(1))
	require.NoError(t, err)

	x17 := g.Input("x", graph.Float64, 17, 3)
	y17 := ops.Sum(bn.Forward(x17))
	p, err := compile.Compile([]*graph.Node{y17}, compile.WithUpdates(nn.StateUpdates(bn)))
	require.NoError(t, err)
	ref, err := vm.New(p, vm.WithThreads(1))
	require.NoError(t, err)

	xv := rows(rand.New(rand.NewPCG(9, 9)), 17, 3)
	require.NoError(t, ref.Run(vm.Feeds{x17: xv}))
	for _, runner := range []*vm.Runner{r, fromTrainer} {
		require.NoError(t, runner.Run(vm.Feeds{x: xv}))
		for _, b := range []*graph.Node{bn.RunningMean, bn.RunningVar, bn.NumBatchesTracked} {
			got, err := runner.Value(b)
			require.NoError(t, err)
			want, err := ref.Value(b)
			require.NoError(t, err)
			require.Equal(t, graph.Float64s(want), graph.Float64s(got), "%v", b)
		}
	}
}

package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/vm"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	res, err := run(&out)
	require.NoError(t, err)
	// The clusters' centres are 4 deviations apart: about 4% of points
	// fall nearer another centre.
	require.Greater(t, res.accuracy, 0.9)
	for j := range 2 {
		require.InEpsilon(t, dataMean[j], res.mean[j], 0.03, "running mean of feature %d", j)
	}
	require.Equal(t, []string{
		"layers.0.weight", "layers.0.bias", "layers.2.weight", "layers.2.bias",
		"norm.running_mean", "norm.running_var",
		"optimizer.lr", "optimizer.step",
		"optimizer.exp_avg.layers.0.weight", "optimizer.exp_avg_sq.layers.0.weight",
		"optimizer.exp_avg.layers.0.bias", "optimizer.exp_avg_sq.layers.0.bias",
		"optimizer.exp_avg.layers.2.weight", "optimizer.exp_avg_sq.layers.2.weight",
		"optimizer.exp_avg.layers.2.bias", "optimizer.exp_avg_sq.layers.2.bias",
	}, res.state)
	// docs/extending.md shows this tree.
	require.True(t, strings.HasPrefix(out.String(), `Classifier(
  (norm): Standardize(momentum=0.1)
  (layers.0): Linear(in_features=2, out_features=16, bias=true)
  (layers.1): Tanh()
  (layers.2): Linear(in_features=16, out_features=3, bias=true)
)
`), out.String())
	require.Regexp(t, `\naccuracy: 0\.\d{4}\n$`, out.String())
	require.Contains(t, out.String(), "the model's buffers: [norm.running_mean norm.running_var]")

	// The checkpoint restores the buffers too: a fresh model loaded from
	// it evaluates exactly as the trained one.
	fresh, err := newSetup(rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	state := append(nn.StateOf(fresh.model), nn.Prefix("optimizer", fresh.opt.State())...)
	require.NoError(t, nn.Load(bytes.NewReader(res.checkpoint), fresh.train, state))
	got, err := fresh.eval.Get(fresh.model.norm.RunningMean)
	require.NoError(t, err)
	require.Equal(t, res.mean, got.Float64s(), "the evaluation machine shares the loaded buffer")
}

// In evaluation mode Standardize uses the running statistics: with the
// initial ones (mean 0, variance 1) it is nearly the identity,
// x/√(1+1e-5).
func TestStandardizeModes(t *testing.T) {
	g := graph.New()
	s := NewStandardize(g, "norm", 2, 0.5)
	x := g.Input("x", graph.Float64, 2, 2)
	train := s.Forward(x)
	require.Len(t, s.StateUpdates(), 2)
	s.SetTraining(false)
	eval := s.Forward(x)

	prog, err := compile.Compile([]*graph.Node{train, eval}, compile.WithUpdates(s.StateUpdates()))
	require.NoError(t, err)
	m, err := vm.New(prog)
	require.NoError(t, err)
	in, err := graph.FromFloat64s(graph.Float64, []float64{1, 10, 3, 30}, 2, 2)
	require.NoError(t, err)
	require.NoError(t, m.Run(vm.Feeds{x: in}))
	// Training: batch mean (2, 20), variance (1, 100): rows (∓1, ∓1)/√(v+1e-5)·√v.
	tv, _ := m.Value(train)
	for i, want := range []float64{-1 / math.Sqrt(1+1e-5), -10 / math.Sqrt(100+1e-5), 1 / math.Sqrt(1+1e-5), 10 / math.Sqrt(100+1e-5)} {
		require.InDelta(t, want, tv.Float64s()[i], 1e-12)
	}
	// Evaluation, in the same run, read the running statistics before the
	// update: x/√(1+1e-5).
	ev, _ := m.Value(eval)
	for i, v := range []float64{1, 10, 3, 30} {
		require.InDelta(t, v/math.Sqrt(1+1e-5), ev.Float64s()[i], 1e-12)
	}
	// The update moved them halfway: mean (1, 10), variance (1, 50.5).
	mean, _ := m.Get(s.RunningMean)
	variance, _ := m.Get(s.RunningVar)
	require.Equal(t, []float64{1, 10}, mean.Float64s())
	require.Equal(t, []float64{1, 50.5}, variance.Float64s())
}

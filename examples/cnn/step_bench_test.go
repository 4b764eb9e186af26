package main

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// BenchmarkStep times one training step of the Fashion-MNIST network on a
// batch of 64 (the LeNet-style workload of the CNN issue), float32:
//
//	go test -run '^$' -bench Step ./examples/cnn/
func BenchmarkStep(b *testing.B) { benchStep(b) }

// benchStep times the training step of newStep on a machine with opts.
func benchStep(b *testing.B, opts ...vm.Option) {
	r, feeds, loss := newStep(b, opts...)
	b.ResetTimer()
	for range b.N {
		if err := r.Run(feeds); err != nil {
			b.Fatal(err)
		}
		// Reading the loss waits for a device's work.
		if _, err := r.Scalar(loss); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/step")
}

// After its first run, the training step allocates nothing.
func TestStepDoesNotAllocate(t *testing.T) {
	r, feeds, _ := newStep(t)
	if n := testing.AllocsPerRun(3, func() {
		if err := r.Run(feeds); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a training step allocates %v times, want 0", n)
	}
}

// newStep builds BenchmarkStep's training step and its feeds (random
// pixels and labels) on a machine with opts, run once, and its loss.
func newStep(tb testing.TB, opts ...vm.Option) (*vm.Runner, vm.Feeds, *graph.Node) {
	g := graph.New()
	model := buildModel(g, Config{Fashion: true, Seed: 1}, images{side: 28, classes: 10})
	x := g.Input("x", tensor.Float32, 64, 1, 28, 28)
	y := g.Input("y", tensor.Int64, 64)
	loss := nn.CrossEntropy(model.Forward(ops.Scale(x, 1.0/255)), y)
	updates, err := nn.TrainingUpdates(nn.NewAdam(nn.DefaultAdam()), loss, model)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := vm.NewRunner([]*graph.Node{loss}, nil, func([]*graph.Node) (map[*graph.Node]*graph.Node, error) { return updates, nil }, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	xv := graph.NewDense(tensor.Float32, 64, 1, 28, 28)
	for i := range xv.Float32s() {
		xv.Float32s()[i] = float32(rng.IntN(256))
	}
	yv := graph.NewDense(tensor.Int64, 64)
	for i := range yv.Int64s() {
		yv.Int64s()[i] = int64(rng.IntN(10))
	}
	feeds := vm.Feeds{x: xv, y: yv}
	if err := r.Run(feeds); err != nil {
		tb.Fatal(err)
	}
	return r, feeds, loss
}

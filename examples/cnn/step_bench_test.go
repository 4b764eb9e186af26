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
func BenchmarkStep(b *testing.B) {
	g := graph.New()
	model := buildModel(g, Config{Fashion: true, Seed: 1}, images{side: 28, classes: 10})
	x := g.Input("x", tensor.Float32, 64, 1, 28, 28)
	y := g.Input("y", tensor.Int64, 64)
	loss := nn.CrossEntropy(model.Forward(ops.Scale(x, 1.0/255)), y)
	updates, err := nn.TrainingUpdates(nn.NewAdam(nn.DefaultAdam()), loss, model)
	if err != nil {
		b.Fatal(err)
	}
	r, err := vm.NewRunner([]*graph.Node{loss}, nil, func([]*graph.Node) (map[*graph.Node]*graph.Node, error) { return updates, nil })
	if err != nil {
		b.Fatal(err)
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
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := r.Run(feeds); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/step")
}

package testnet

import (
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// RandomDense returns a float64 tensor of the given shape with elements
// drawn uniformly from [-1, 1).
func RandomDense(rng *rand.Rand, shape ...int) *tensor.Dense {
	t := graph.NewDense(graph.Float64, shape...)
	for i := range t.Float64s() {
		t.Float64s()[i] = rng.Float64()*2 - 1
	}
	return t
}

// MLP is a two-layer perceptron, tanh(x·W1 + b1)·W2 + b2, with its mean
// squared error against y on one batch, the gradients of the loss with
// respect to its parameters, and the SGD updates p ← p - 0.1·grad.
type MLP struct {
	X, Y, Loss *graph.Node
	Params     []*graph.Node // W1, b1, W2, b2
	Grads      []*graph.Node // parallel to Params
	Updates    map[*graph.Node]*graph.Node
	Feeds      vm.Feeds // a random batch
}

// NewMLP builds the network for batches of the given size, with random
// parameters and a random batch drawn from rng.
func NewMLP(rng *rand.Rand, batch, in, hidden, out int) (*MLP, error) {
	g := graph.New()
	m := &MLP{X: g.Input("x", graph.Float64, batch, in), Y: g.Input("y", graph.Float64, batch, out)}
	w1 := g.Param("W1", RandomDense(rng, in, hidden))
	b1 := g.Param("b1", RandomDense(rng, hidden))
	w2 := g.Param("W2", RandomDense(rng, hidden, out))
	b2 := g.Param("b2", RandomDense(rng, out))
	m.Params = []*graph.Node{w1, b1, w2, b2}
	h := ops.Tanh(ops.Add(ops.MatMul(m.X, w1), b1))
	m.Loss = ops.Mean(ops.Square(ops.Sub(ops.Add(ops.MatMul(h, w2), b2), m.Y)))
	grads, err := compile.Grad(m.Loss, m.Params...)
	if err != nil {
		return nil, err
	}
	m.Grads = grads
	m.Updates = map[*graph.Node]*graph.Node{}
	for i, p := range m.Params {
		m.Updates[p] = ops.Sub(p, ops.Scale(grads[i], 0.1))
	}
	m.Feeds = vm.Feeds{m.X: RandomDense(rng, batch, in), m.Y: RandomDense(rng, batch, out)}
	return m, g.Err()
}

package ops

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// BenchmarkMaxPool2x2 times, on one thread, 2×2 max pooling of the
// examples/cnn network's first block, (64, 32, 28, 28) float32, and its
// gradient.
func BenchmarkMaxPool2x2(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := randomDense(rng, graph.Float32, 64, 32, 28, 28)
	gy := randomDense(rng, graph.Float32, 64, 32, 14, 14)
	p := newPool2d(PoolOptions{Kernel: []int{2}}, true)
	for _, c := range []struct {
		kind poolKind
		out  *tensor.Dense
		in   []*tensor.Dense
	}{
		{maxPoolKind, graph.NewDense(graph.Float32, 64, 32, 14, 14), []*tensor.Dense{x}},
		{maxPoolGradKind, graph.NewDense(graph.Float32, 64, 32, 28, 28), []*tensor.Dense{x, gy}},
	} {
		b.Run(poolNames[c.kind], func(b *testing.B) {
			op := poolOp{kind: c.kind, pool2d: p}
			for b.Loop() {
				if err := op.Forward(c.out, c.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

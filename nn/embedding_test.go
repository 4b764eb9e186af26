package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// BenchmarkEmbedding runs the lookup of a batch of 256 indices in a
// 10000×64 float32 table, alone ("forward"), and as a training step needs
// it ("gradient"): the sum of the looked-up vectors and its gradient with
// respect to the table.
func BenchmarkEmbedding(b *testing.B) {
	const num, dim, batch = 10000, 64, 256
	rng := rand.New(rand.NewPCG(1, 1))
	vals := make([]float64, batch)
	for i := range vals {
		vals[i] = float64(rng.IntN(num))
	}
	indices, err := graph.FromFloat64s(graph.Float32, vals, batch)
	if err != nil {
		b.Fatal(err)
	}
	for _, withGrad := range []bool{false, true} {
		name := "forward"
		if withGrad {
			name = "gradient"
		}
		b.Run(name, func(b *testing.B) {
			g := graph.New()
			e := NewEmbedding(g, "emb", num, dim, WithDType(graph.Float32), WithRand(rand.New(rand.NewPCG(2, 2))))
			idx := g.Input("idx", graph.Float32, batch)
			outputs := []*graph.Node{e.Forward(idx)}
			if withGrad {
				loss := ops.Sum(outputs[0])
				grads, err := compile.Grad(loss, e.Weight)
				if err != nil {
					b.Fatal(err)
				}
				outputs = []*graph.Node{loss, grads[0]}
			}
			prog, err := compile.Compile(outputs)
			if err != nil {
				b.Fatal(err)
			}
			m, err := vm.New(prog)
			if err != nil {
				b.Fatal(err)
			}
			feeds := vm.Feeds{idx: indices}
			b.ReportAllocs()
			for b.Loop() {
				if err := m.Run(feeds); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

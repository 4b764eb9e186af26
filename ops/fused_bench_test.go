package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// BenchmarkFusedSteps runs a fused chain of cheap steps (multiply, add,
// scale, neg) over a short and a long vector: ns/step is the cost of a
// step over the vector, kernel and dispatch.
func BenchmarkFusedSteps(b *testing.B) {
	const steps = 400
	for _, size := range []int{16, 4096} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			types := []graph.Type{graph.TypeOf(graph.Float64, size), graph.TypeOf(graph.Float64, size)}
			kinds := []graph.Op{binary{mulKind}, binary{addKind}, unary{kind: scaleKind, c: 0.5}, unary{kind: negKind}}
			var s []FusedStep
			for j := range steps {
				op := kinds[j%len(kinds)]
				prev := 1 + j // the previous step, or input 1
				if _, ok := op.(binary); ok {
					s = append(s, FusedStep{Op: op, Args: []int{prev, 0}})
				} else {
					s = append(s, FusedStep{Op: op, Args: []int{prev}})
				}
			}
			op, err := NewFused(types, s)
			if err != nil {
				b.Fatal(err)
			}
			// Factors near 1 keep the values far from overflow and
			// subnormals, which would time the FPU's slow paths.
			near1 := graph.NewDense(graph.Float64, size)
			for i := range size {
				near1.Float64s()[i] = 1 + (rng.Float64()-0.5)/100
			}
			in := []*tensor.Dense{near1, randomDense(rng, graph.Float64, size)}
			out := graph.NewDense(graph.Float64, size)
			e := graph.NewExec(nil)
			for b.Loop() {
				if err := op.ForwardExec(e, out, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/steps, "ns/step")
		})
	}
}

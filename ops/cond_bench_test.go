package ops_test

import (
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// BenchmarkCondStep runs scanModel's loop (T = 1000), forward and
// backward, with its step as it is and through a Cond whose branches
// both are that step, taken alternately: the Cond's cost per step is the
// difference (compare ns/step).
func BenchmarkCondStep(b *testing.B) {
	const T = 1000
	for _, cond := range []bool{false, true} {
		name := "Scan"
		if cond {
			name = "Cond in Scan"
		}
		b.Run(name, func(b *testing.B) {
			g := graph.New()
			W := g.Param("W", graph.NewDense(graph.Float32, 16, 16))
			h0 := g.Param("h0", graph.NewDense(graph.Float32, 4, 16))
			xs := g.Input("xs", graph.Float32, T, 4, 16)
			ps := g.Input("ps", graph.Float32, T)
			step := func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Tanh(ops.Add(ops.MatMul(o[0], W), o[1]))}
			}
			seqs := []*graph.Node{xs}
			if cond {
				seqs = append(seqs, ps)
			}
			final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				if cond {
					return ops.Cond(x[1], step, step, []*graph.Node{c[0], x[0]}), nil
				}
				return step([]*graph.Node{c[0], x[0]}), nil
			}, []*graph.Node{h0}, seqs)
			loss := ops.Sum(final[0])
			grads, err := compile.Grad(loss, W)
			if err != nil {
				b.Fatal(err)
			}
			p, err := compile.Compile([]*graph.Node{loss, grads[0]})
			if err != nil {
				b.Fatal(err)
			}
			m, err := vm.New(p, vm.WithThreads(1))
			if err != nil {
				b.Fatal(err)
			}
			pv := graph.NewDense(graph.Float32, T)
			for t := 0; t < T; t += 2 {
				pv.Float32s()[t] = 1
			}
			feeds := vm.Feeds{xs: graph.NewDense(graph.Float32, T, 4, 16)}
			if cond {
				feeds[ps] = pv
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := m.Run(feeds); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*T), "ns/step")
		})
	}
}

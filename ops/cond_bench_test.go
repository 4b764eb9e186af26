package ops_test

import (
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// BenchmarkControlFlowStep runs scanModel's step T = 1000 times, forward
// and backward: in a Scan, through a Cond whose branches both are that
// step (taken alternately) in a Scan, and in a While of MaxSteps(T) whose
// cond holds throughout. The cost of Cond or While per step is the
// difference from Scan's (compare ns/step).
func BenchmarkControlFlowStep(b *testing.B) {
	const T = 1000
	for _, kind := range []string{"Scan", "Cond in Scan", "While"} {
		b.Run(kind, func(b *testing.B) {
			g := graph.New()
			W := g.Param("W", graph.NewDense(graph.Float32, 16, 16))
			h0 := g.Param("h0", graph.NewDense(graph.Float32, 4, 16))
			xs := g.Input("xs", graph.Float32, T, 4, 16)
			ps := g.Input("ps", graph.Float32, T)
			x := g.Input("x", graph.Float32, 4, 16)
			step := func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Tanh(ops.Add(ops.MatMul(o[0], W), o[1]))}
			}
			var final *graph.Node
			feeds := vm.Feeds{}
			switch kind {
			case "While":
				one, limit := g.Scalar(1, graph.Float32), g.Scalar(2*T, graph.Float32)
				f, _ := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(c[1], limit) },
					func(c []*graph.Node) []*graph.Node {
						return append(step([]*graph.Node{c[0], x}), ops.Add(c[1], one))
					}, []*graph.Node{h0, g.Scalar(0, graph.Float32)}, ops.MaxSteps(T))
				final, feeds[x] = f[0], graph.NewDense(graph.Float32, 4, 16)
			case "Cond in Scan":
				f, _ := ops.Scan(func(c, s []*graph.Node) ([]*graph.Node, []*graph.Node) {
					return ops.Cond(s[1], step, step, []*graph.Node{c[0], s[0]}), nil
				}, []*graph.Node{h0}, []*graph.Node{xs, ps})
				pv := graph.NewDense(graph.Float32, T)
				for t := 0; t < T; t += 2 {
					pv.Float32s()[t] = 1
				}
				final, feeds[xs], feeds[ps] = f[0], graph.NewDense(graph.Float32, T, 4, 16), pv
			default:
				f, _ := ops.Scan(func(c, s []*graph.Node) ([]*graph.Node, []*graph.Node) {
					return step([]*graph.Node{c[0], s[0]}), nil
				}, []*graph.Node{h0}, []*graph.Node{xs})
				final, feeds[xs] = f[0], graph.NewDense(graph.Float32, T, 4, 16)
			}
			loss := ops.Sum(final)
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

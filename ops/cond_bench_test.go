package ops_test

import (
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// BenchmarkControlFlowStep runs one step body T = 1000 times, forward
// and backward: scanModel's step beside a counter, in a Scan, through a
// Cond whose branches both are that body (taken alternately) in a Scan,
// and in a While of MaxSteps(T) whose cond (the counter under a bound)
// holds throughout. The cost of Cond or While per step is the difference
// from Scan's (compare ns/step).
func BenchmarkControlFlowStep(b *testing.B) {
	const T = 1000
	for _, kind := range []string{"Scan", "Cond in Scan", "While"} {
		b.Run(kind, func(b *testing.B) {
			g := graph.New()
			W := g.Param("W", graph.NewDense(graph.Float32, 16, 16))
			h0 := g.Param("h0", graph.NewDense(graph.Float32, 4, 16))
			x := g.Input("x", graph.Float32, 4, 16)
			ps := g.Input("ps", graph.Float32, T)
			one, limit := g.Scalar(1, graph.Float32), g.Scalar(2*T, graph.Float32)
			init := []*graph.Node{h0, g.Scalar(0, graph.Float32)}
			body := func(c []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Tanh(ops.Add(ops.MatMul(c[0], W), x)), ops.Add(c[1], one)}
			}
			var final []*graph.Node
			feeds := vm.Feeds{x: graph.NewDense(graph.Float32, 4, 16)}
			switch kind {
			case "While":
				final, _ = ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(c[1], limit) },
					body, init, ops.MaxSteps(T))
			case "Cond in Scan":
				final, _ = ops.Scan(func(c, s []*graph.Node) ([]*graph.Node, []*graph.Node) {
					return ops.Cond(s[0], body, body, c), nil
				}, init, []*graph.Node{ps})
				pv := graph.NewDense(graph.Float32, T)
				for t := 0; t < T; t += 2 {
					pv.Float32s()[t] = 1
				}
				feeds[ps] = pv
			default:
				final, _ = ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
					return body(c), nil
				}, init, nil, ops.Steps(T))
			}
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

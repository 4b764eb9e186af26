package compile

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// BenchmarkCompile compiles random elementwise graphs of growing size
// with every pass, to show compile time growing linearly: ns/node should
// stay flat from 1k to 100k nodes.
func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		g := graph.New()
		pool := []*graph.Node{g.Input("x", graph.Float64, 4), g.Scalar(1, graph.Float64), g.Scalar(0, graph.Float64)}
		for len(pool) < n {
			a, c := pool[rng.IntN(len(pool))], pool[max(0, len(pool)-1-rng.IntN(8))]
			var y *graph.Node
			switch rng.IntN(5) {
			case 0:
				y = ops.Add(a, c)
			case 1:
				y = ops.Mul(a, c)
			case 2:
				y = ops.Neg(c)
			case 3:
				y = ops.Scale(c, 2)
			default:
				y = ops.Tanh(c)
			}
			pool = append(pool, y)
		}
		out := pool[len(pool)-1]
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Compile([]*graph.Node{out}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}

package ops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestScanDebug(t *testing.T) {
	cases := []scanCase{
		{"no captures", func(g *graph.Graph, loop loopFunc) (*graph.Node, []*graph.Node) {
			rng := rand.New(rand.NewPCG(1, 2))
			h0 := randParam(g, rng, "h0", 0.5, 2)
			xs := randParam(g, rng, "xs", 1, 3, 2)
			final, _ := loop(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				h := ops.Mul(ops.Sin(c[0]), x[0])
				return []*graph.Node{h}, []*graph.Node{h}
			}, []*graph.Node{h0}, []*graph.Node{xs})
			return ops.Sum(final[0]), []*graph.Node{h0, xs}
		}},
		{"only h0", func(g *graph.Graph, loop loopFunc) (*graph.Node, []*graph.Node) {
			rng := rand.New(rand.NewPCG(1, 2))
			h0 := randParam(g, rng, "h0", 0.5, 2)
			xs := randParam(g, rng, "xs", 1, 3, 2)
			final, _ := loop(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				h := ops.Mul(ops.Sin(c[0]), x[0])
				return []*graph.Node{h}, []*graph.Node{h}
			}, []*graph.Node{h0}, []*graph.Node{xs})
			return ops.Sum(final[0]), []*graph.Node{h0}
		}},
		{"one step", func(g *graph.Graph, loop loopFunc) (*graph.Node, []*graph.Node) {
			rng := rand.New(rand.NewPCG(1, 2))
			h0 := randParam(g, rng, "h0", 0.5, 2)
			xs := randParam(g, rng, "xs", 1, 1, 2)
			final, _ := loop(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				h := ops.Mul(ops.Sin(c[0]), x[0])
				return []*graph.Node{h}, []*graph.Node{h}
			}, []*graph.Node{h0}, []*graph.Node{xs})
			return ops.Sum(final[0]), []*graph.Node{h0}
		}},
	}
	for _, c := range cases {
		want := derivatives(t, c, unrolled)
		got := derivatives(t, c, ops.Scan)
		for i := range want {
			for j := range want[i] {
				if d := math.Abs(got[i][j] - want[i][j]); d > 1e-12*max(1, math.Abs(want[i][j])) {
					t.Errorf("%s: output %d entry %d: scan %v, unrolled %v", c.name, i, j, got[i][j], want[i][j])
				}
			}
		}
	}
}

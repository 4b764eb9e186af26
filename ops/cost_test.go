package ops

import (
	"testing"

	"github.com/nabla-go/nabla/graph"
)

// TestCost: each op family's cost for given shapes, counted by hand.
func TestCost(t *testing.T) {
	g := graph.New()
	a := g.Input("a", graph.Float64, 3, 4)
	b := g.Input("b", graph.Float64, 4, 5)
	bt := g.Input("bt", graph.Float64, 5, 4)
	batch := g.Input("batch", graph.Float64, 2, 3, 4)
	col := g.Input("col", graph.Float32, 3, 1)
	row := g.Input("row", graph.Float32, 1, 4)
	cases := []struct {
		name string
		node *graph.Node
		want graph.Cost
	}{
		// 2·3·5·4 = 120 flops; reads (12+20)·8 bytes, writes 15·8.
		{"MatMul", MatMul(a, b), graph.Cost{Flops: 120, BytesRead: 256, BytesWritten: 120}},
		// a·btᵀ is the same product.
		{"MatMulT", MatMulT(a, bt, false, true), graph.Cost{Flops: 120, BytesRead: 256, BytesWritten: 120}},
		// Two (3,4)·(4,5) products: 240 flops; reads (24+20)·8, writes 30·8.
		{"batched MatMul", MatMul(batch, b), graph.Cost{Flops: 240, BytesRead: 352, BytesWritten: 240}},
		// (3,1)+(1,4) broadcasts to 12 elements; reads (3+4)·4, writes 12·4.
		{"Add", Add(col, row), graph.Cost{Flops: 12, BytesRead: 28, BytesWritten: 48}},
		{"Tanh", Tanh(a), graph.Cost{Flops: 12, BytesRead: 96, BytesWritten: 96}},
		// Three inputs: reads (3+4+1)·4, writes 12·4.
		{"Where", Where(col, row, g.Scalar(0, graph.Float32)), graph.Cost{Flops: 12, BytesRead: 32, BytesWritten: 48}},
		// Summing (3,4) over axis 1: 12 flops; reads 12·8, writes 3·8.
		{"Sum", Sum(a, 1), graph.Cost{Flops: 12, BytesRead: 96, BytesWritten: 24}},
		{"SumTo", SumTo(a, 1, 4), graph.Cost{Flops: 12, BytesRead: 96, BytesWritten: 32}},
		// A shape op moves bytes and counts no flops.
		{"Transpose", Transpose(a), graph.Cost{BytesRead: 96, BytesWritten: 96}},
	}
	for _, c := range cases {
		n := c.node
		if n.Err() != nil {
			t.Fatalf("case %v: %v", c.name, n.Err())
		}
		in := make([]graph.Type, len(n.Inputs()))
		for i, x := range n.Inputs() {
			in[i] = x.Type()
		}
		if got := graph.CostOf(n.Op(), in, n.Type()); got != c.want {
			t.Errorf("case %v: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

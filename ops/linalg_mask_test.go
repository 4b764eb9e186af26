package ops

import (
	"testing"

	"github.com/nabla-go/nabla/graph"
)

// TestMatrixHelpersForward checks the triangles, diagonals, traces and the
// identity against values written out by hand, batched and not.
func TestMatrixHelpersForward(t *testing.T) {
	m34 := arange(3, 4) // [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
	b223 := arange(2, 2, 3)
	one := func(f func(*graph.Node) *graph.Node) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return f(xs[0]) }
	}
	runForward(t, []forwardCase{
		{"Tril 0", []values{m34}, one(func(x *graph.Node) *graph.Node { return Tril(x, 0) }), []int{3, 4},
			[]float64{0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0}},
		{"Tril 1", []values{m34}, one(func(x *graph.Node) *graph.Node { return Tril(x, 1) }), []int{3, 4},
			[]float64{0, 1, 0, 0, 4, 5, 6, 0, 8, 9, 10, 11}},
		{"Tril -1 batched", []values{b223}, one(func(x *graph.Node) *graph.Node { return Tril(x, -1) }), []int{2, 2, 3},
			[]float64{0, 0, 0, 3, 0, 0, 0, 0, 0, 9, 0, 0}},
		{"Triu 0", []values{m34}, one(func(x *graph.Node) *graph.Node { return Triu(x, 0) }), []int{3, 4},
			[]float64{0, 1, 2, 3, 0, 5, 6, 7, 0, 0, 10, 11}},
		{"Triu 2", []values{m34}, one(func(x *graph.Node) *graph.Node { return Triu(x, 2) }), []int{3, 4},
			[]float64{0, 0, 2, 3, 0, 0, 0, 7, 0, 0, 0, 0}},
		{"Triu -1 batched", []values{b223}, one(func(x *graph.Node) *graph.Node { return Triu(x, -1) }), []int{2, 2, 3},
			[]float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{"Diagonal wide", []values{m34}, one(Diagonal), []int{3}, []float64{0, 5, 10}},
		{"Diagonal tall batched", []values{arange(2, 3, 2)}, one(Diagonal), []int{2, 2}, []float64{0, 3, 6, 9}},
		{"DiagEmbed", []values{of([]int{3}, 1, 2, 3)}, one(DiagEmbed), []int{3, 3}, []float64{1, 0, 0, 0, 2, 0, 0, 0, 3}},
		{"DiagEmbed batched", []values{of([]int{2, 2}, 1, 2, 3, 4)}, one(DiagEmbed), []int{2, 2, 2}, []float64{1, 0, 0, 2, 3, 0, 0, 4}},
		{"Trace", []values{m34}, one(Trace), nil, []float64{15}},
		{"Trace batched", []values{arange(2, 3, 3)}, one(Trace), []int{2}, []float64{12, 39}},
		{"Eye", []values{of([]int{2, 2}, 5, 6, 7, 8)}, one(func(x *graph.Node) *graph.Node {
			return Mul(x, Eye(x.Graph(), x.DType(), 2))
		}), []int{2, 2}, []float64{5, 0, 0, 8}},
	})
}

// TestMatrixHelpersBuildErrors: inputs that are not matrices, and a bad
// Eye, are build errors naming the op, the shapes and the caller.
func TestMatrixHelpersBuildErrors(t *testing.T) {
	runErrors(t, []errorCase{
		{"Tril of a vector", func(g *graph.Graph) *graph.Node { return Tril(g.Input("v", graph.Float64, 3), 0) },
			"Tril", []string{"shape (3) is not a matrix or a batch of matrices (rank ≥ 2)"}},
		{"Diagonal of a scalar", func(g *graph.Graph) *graph.Node { return Diagonal(g.Input("s", graph.Float64)) },
			"Diagonal", []string{"shape () is not a matrix"}},
		{"Trace of a vector", func(g *graph.Graph) *graph.Node { return Trace(g.Input("v", graph.Float32, 3)) },
			"Trace", []string{"shape (3) is not a matrix"}},
		{"DiagEmbed of a scalar", func(g *graph.Graph) *graph.Node { return DiagEmbed(g.Input("s", graph.Float64)) },
			"DiagEmbed", []string{"shape (): DiagEmbed takes a rank from 1 to 7"}},
		{"Eye of negative size", func(g *graph.Graph) *graph.Node { return Eye(g, graph.Float64, -2) },
			"Eye", []string{"size -2 is negative"}},
		{"Eye of int32", func(g *graph.Graph) *graph.Node { return Eye(g, graph.Int32, 2) },
			"Eye", []string{"dtype int32 is not supported (float32 or float64)"}},
		{"Eye too large", func(g *graph.Graph) *graph.Node { return Eye(g, graph.Float64, 1<<32) },
			"Eye", []string{"(4294967296,4294967296) has more elements than an int can count"}},
		{"Eye over the memory limit", func(g *graph.Graph) *graph.Node { return Eye(g, graph.Float64, 1<<20) },
			"Eye", []string{"float64(1048576,1048576) needs 8796093022208 bytes (8 TiB), over the memory limit"}},
	})
}

// TestMatrixHelpersIdentity: triangles differing in side or offset are
// different ops (they must never merge under CSE); equal ones are one.
func TestMatrixHelpersIdentity(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3, 3)
	key := func(n *graph.Node) any { return graph.OpKey(n.Op()) }
	if key(Tril(x, 1)) != key(Tril(x, 1)) {
		t.Errorf("Tril(x, 1) twice: got different ops, want equal")
	}
	for _, other := range []*graph.Node{Tril(x, 0), Triu(x, 1), Tril(x, -1)} {
		if key(other) == key(Tril(x, 1)) {
			t.Errorf("%v and Tril(x, 1): got equal ops, want different", other)
		}
	}
}

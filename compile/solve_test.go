package compile

import (
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestSolve(t *testing.T) {
	g := graph.New()
	a := g.Input("a", graph.Float64, 3, 3)
	b := g.Input("b", graph.Float64, 3, 2)
	c := g.Input("c", graph.Float64, 2, 3)
	ab := g.Input("ab", graph.Float64, 4, 3, 3)
	bb := g.Input("bb", graph.Float64, 4, 3, 2)
	inv := ops.Inverse(a)
	cases := []struct {
		name    string
		outputs []*graph.Node
		want    []string
	}{
		{"inverse times b", []*graph.Node{ops.MatMul(inv, b)},
			[]string{"%0 = Solve a b", "return %0"}},
		{"transposed inverse times b", []*graph.Node{ops.MatMulT(inv, b, true, false)},
			[]string{"%0 = Solve a b", "return %0"}},
		{"two products, one inverse", []*graph.Node{ops.MatMul(inv, b), ops.MatMul(inv, ops.Exp(b))},
			[]string{"%0 = Solve a b", "%1 = Exp b", "%2 = Solve a %1", "return %0 %2"}},
		{"batched", []*graph.Node{ops.MatMul(ops.Inverse(ab), bb)},
			[]string{"%0 = Solve ab bb", "return %0"}},
		{"the inverse is read again", []*graph.Node{ops.MatMul(inv, b), inv},
			[]string{"%0 = Inverse a", "%1 = MatMul %0 b", "return %1 %0"}},
		{"b times the inverse", []*graph.Node{ops.MatMul(c, inv)},
			[]string{"%0 = Solve a c", "return %0"}},
		{"b times the transposed inverse", []*graph.Node{ops.MatMulT(c, inv, false, true)},
			[]string{"%0 = Solve a c", "return %0"}},
		{"the inverse on both sides", []*graph.Node{ops.MatMul(inv, b), ops.MatMul(c, inv)},
			[]string{"%0 = Solve a b", "%1 = Solve a c", "return %0 %1"}},
		{"the inverse times itself", []*graph.Node{ops.MatMul(inv, inv)},
			[]string{"%0 = Inverse a", "%1 = MatMul %0 %0", "return %1"}},
		{"b transposed", []*graph.Node{ops.MatMulT(inv, c, false, true)},
			[]string{"%0 = Inverse a", "%1 = MatMul %0 c", "return %1"}},
		{"b transposed on the right", []*graph.Node{ops.MatMulT(b, inv, true, false)},
			[]string{"%0 = Inverse a", "%1 = MatMul b %0", "return %1"}},
		{"one inverse over a batch", []*graph.Node{ops.MatMul(inv, bb)},
			[]string{"%0 = Inverse a", "%1 = MatMul %0 bb", "return %1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := &testGraph{g: g}
			tg.expect(t, tc.outputs, only("cse", "solve", "memory"), tc.want...)
		})
	}
}

// Equal inverses are merged before their products are counted: the
// inverse two products read becomes two solves.
func TestSolveAfterCSE(t *testing.T) {
	g := graph.New()
	a := g.Input("a", graph.Float64, 3, 3)
	b := g.Input("b", graph.Float64, 3, 2)
	outs := []*graph.Node{ops.MatMul(ops.Inverse(a), b), ops.Neg(ops.MatMul(ops.Inverse(a), b))}
	tg := &testGraph{g: g}
	tg.expect(t, outs, only("cse", "solve", "memory"), "%0 = Solve a b", "%1 = Neg %0", "return %0 %1")
}

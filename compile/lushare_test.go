package compile

import (
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestLUShare(t *testing.T) {
	g := graph.New()
	a := g.Input("a", graph.Float64, 3, 3)
	a2 := g.Input("a2", graph.Float64, 3, 3)
	b := g.Input("b", graph.Float64, 3, 2)
	sign, logAbs := ops.SlogDet(a)
	cases := []struct {
		name    string
		outputs []*graph.Node
		want    []string
	}{
		{"two solves", []*graph.Node{ops.Solve(a, b), ops.Solve(a, ops.Exp(b))},
			[]string{"%0 = LUFactors a", "%1 = Solve %0 b", "%2 = Exp b", "%3 = Solve %0 %2", "return %1 %3"}},
		{"solve, inverse and determinant", []*graph.Node{ops.Det(a), ops.Inverse(a), ops.Solve(a, b)},
			[]string{"%0 = LUFactors a", "%1 = Det %0", "%2 = Inverse %0", "%3 = Solve %0 b", "return %1 %2 %3"}},
		{"both parts of a log-determinant", []*graph.Node{sign, logAbs},
			[]string{"%0 = LUFactors a", "%1 = SlogDetSign %0", "%2 = SlogDetLogAbs %0", "return %1 %2"}},
		{"one reader", []*graph.Node{ops.Solve(a, b)},
			[]string{"%0 = Solve a b", "return %0"}},
		{"different matrices", []*graph.Node{ops.Solve(a, b), ops.Solve(a2, b)},
			[]string{"%0 = Solve a b", "%1 = Solve a2 b", "return %0 %1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := &testGraph{g: g}
			tg.expect(t, tc.outputs, only("lushare", "memory"), tc.want...)
		})
	}
}

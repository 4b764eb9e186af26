package compile

import (
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestMatMulAdd(t *testing.T) {
	tg := newTestGraph()
	x, y, v := tg.x, tg.y, tg.v // (2,3), (2,3), (3)
	w := tg.g.Input("w", graph.Float64, 3, 3)
	xw := ops.MatMul(x, w)
	cases := []struct {
		name    string
		outputs []*graph.Node
		want    []string
	}{
		{"sum after the product", []*graph.Node{ops.Add(xw, y)},
			[]string{"%0 = MatMulAdd x w y", "return %0"}},
		{"sum before the product", []*graph.Node{ops.Add(y, xw)},
			[]string{"%0 = MatMulAdd x w y", "return %0"}},
		{"broadcast bias", []*graph.Node{ops.Add(ops.MatMulT(y, w, false, true), v)},
			[]string{"%0 = MatMulAdd y w v", "return %0"}},
		{"in place over a dying addend", []*graph.Node{ops.Add(xw, ops.Exp(y))},
			[]string{"%0 = Exp y", "%0 = MatMulAdd x w %0", "return %0"}},
		{"the product is read again", []*graph.Node{ops.Add(xw, y), xw},
			[]string{"%0 = MatMul x w", "%1 = Add %0 y", "return %1 %0"}},
		{"the addend is an operand", []*graph.Node{ops.Add(ops.MatMul(x, w), x)},
			[]string{"%0 = MatMul x w", "%0 = Add %0 x", "return %0"}},
		{"the product broadcasts", []*graph.Node{ops.Add(ops.MatMul(ops.Reshape(v, 1, 3), w), y)},
			[]string{"%0 = Reshape v", "%1 = MatMul %0 w", "%2 = Add %1 y", "return %2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg.expect(t, c.outputs, only("matmuladd", "memory"), c.want...)
		})
	}
}

package compile

import (
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestFuse(t *testing.T) {
	tg := newTestGraph()
	x, y, v, s := tg.x, tg.y, tg.v, tg.s // (2,3), (2,3), (3), ()
	tx := ops.Tanh(x)
	ex := ops.Exp(x)
	cases := []struct {
		name    string
		outputs []*graph.Node
		want    []string
	}{
		{"tanh chain", []*graph.Node{ops.Tanh(ops.Tanh(ops.Tanh(x)))},
			[]string{"%0 = Fused(Tanh,Tanh,Tanh) x", "return %0"}},
		{"one op is left alone", []*graph.Node{ops.Tanh(x)},
			[]string{"%0 = Tanh x", "return %0"}},
		{"a tree, leaves once each", []*graph.Node{ops.Mul(ops.Add(x, y), ops.Sub(x, s))},
			[]string{"%0 = Fused(Add,Sub,Mul) x y s", "return %0"}},
		{"an output read inside is an output too", []*graph.Node{tx, ops.Sin(tx)},
			[]string{"%0, %1 = Fused(Tanh,Sin) x", "return %0 %1"}},
		{"a value read twice inside", []*graph.Node{ops.Mul(ops.Sin(ex), ops.Cos(ex))},
			[]string{"%0 = Fused(Exp,Sin,Cos,Mul) x", "return %0"}},
		// The sum reads Exp and Add reads the sum: Add cannot join the
		// group of Exp, Neg and Tanh, which runs before the sum.
		{"a group closes once read outside", []*graph.Node{ops.Add(ops.Sum(ex, 0), ops.Tanh(ops.Neg(ex)))},
			[]string{"%0, %1 = Fused(Exp,Neg,Tanh) x", "%2 = Sum %0", "%0 = Add %2 %1", "return %0"}},
		// Sunk to the end, the sum no longer splits the group.
		{"opaque ops run late", []*graph.Node{ops.Sum(tx, 0, 1), ops.Mul(ops.Sin(tx), x)},
			[]string{"%0, %1 = Fused(Tanh,Sin,Mul) x", "%2 = Sum %0", "return %2 %1"}},
		{"a smaller value is a leaf", []*graph.Node{ops.Mul(ops.Sin(ops.Cos(v)), ops.Exp(y))},
			[]string{"%0 = Fused(Cos,Sin) v", "%1 = Fused(Exp,Mul) y %0", "return %1"}},
		{"broadcast leaves", []*graph.Node{ops.Sigmoid(ops.Add(ops.Scale(x, 2), v))},
			[]string{"%0 = Fused(Scale,Add,Sigmoid) x v", "return %0"}},
		{"a smaller operand is a leaf", []*graph.Node{ops.Mul(x, ops.Exp(ops.Neg(v)))},
			[]string{"%0 = Fused(Neg,Exp) v", "%1 = Mul x %0", "return %1"}},
		{"where and comparisons", []*graph.Node{ops.Where(ops.Greater(x, y), ops.Square(x), ops.Neg(y))},
			[]string{"%0 = Fused(Greater,Square,Neg,Where) x y", "return %0"}},
		{"in place over a dying leaf", []*graph.Node{ops.Add(ops.Sin(ops.Sum(x, 0)), ops.Cos(v))},
			[]string{"%0 = Sum x", "%0 = Fused(Sin,Cos,Add) %0 v", "return %0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg.expect(t, c.outputs, only("fuse", "memory"), c.want...)
		})
	}
}

// Switched off, fuse leaves every op its instruction.
func TestFuseSwitchedOff(t *testing.T) {
	tg := newTestGraph()
	y := ops.Tanh(ops.Tanh(tg.x))
	tg.expect(t, []*graph.Node{y}, []Option{WithoutPass("fuse")}, "%0 = Tanh x", "%0 = Tanh %0", "return %0")
	tg.expect(t, []*graph.Node{y}, nil, "%0 = Fused(Tanh,Tanh) x", "return %0")
}

// A parameter's update may be the root of a fused tree; the values it
// reads are the parameter's old value.
func TestFuseUpdate(t *testing.T) {
	tg := newTestGraph()
	w := tg.g.Param("w", graph.NewDense(graph.Float64, 2, 3))
	p := tg.expect(t, nil, []Option{WithUpdates(map[*graph.Node]*graph.Node{w: ops.Sub(w, ops.Scale(ops.Mul(w, tg.x), 0.1))})},
		"w = Fused(Mul,Scale,Sub) w x", "w ← (in place)")
	if got := len(p.Instructions()[0].Absorbed()); got != 3 {
		t.Errorf("absorbed nodes: got %d, want 3", got)
	}
}

// A training step's updates run as soon as their gradients are known,
// each after the product computing its gradient and the other readers of
// its parameter, in place: w2's before w1's gradient is computed, so that
// the layers' values die as the backward pass leaves them, not at the end.
func TestFuseHoistsUpdates(t *testing.T) {
	tg := newTestGraph()
	w1 := tg.g.Param("w1", graph.NewDense(graph.Float64, 3, 3))
	w2 := tg.g.Param("w2", graph.NewDense(graph.Float64, 3, 3))
	h := ops.Tanh(ops.MatMul(ops.Tanh(ops.MatMul(tg.x, w1)), w2))
	loss := ops.Sum(ops.Square(h))
	grads, err := Grad(loss, w1, w2)
	if err != nil {
		t.Fatal(err)
	}
	updates := map[*graph.Node]*graph.Node{w1: ops.Sub(w1, ops.Scale(grads[0], 0.1)), w2: ops.Sub(w2, ops.Scale(grads[1], 0.1))}
	tg.expect(t, []*graph.Node{loss}, []Option{WithUpdates(updates)},
		"%0 = MatMul x w1",
		"%0 = Tanh %0",
		"%1 = MatMul %0 w2",
		"%2, %3 = Fused(Tanh,Square,Scale,Sub,Mul) %1 1",
		"%4 = MatMul %0 %3", // w2's gradient
		"%1 = MatMul %3 w2", // the last reader of w2
		"w2 = Fused(Scale,Sub) %4 w2",
		"%1 = Fused(Square,Sub,Mul) %1 %0 1",
		"%4 = MatMul x %1",
		"w1 = Fused(Scale,Sub) %4 w1",
		"%5 = Sum %2",
		"return %5",
		"w1 ← (in place)",
		"w2 ← (in place)")
}

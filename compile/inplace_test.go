package compile

import (
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// TestInPlace: an update is computed in its parameter's slot where its
// instruction is the last to read the parameter and may write over what
// it reads, and is copied after the run otherwise.
func TestInPlace(t *testing.T) {
	tg := newTestGraph()
	x := tg.x
	w := tg.g.Param("w", graph.NewDense(graph.Float64, 2, 3))
	w2 := tg.g.Param("w2", graph.NewDense(graph.Float64, 2, 3))
	sq := tg.g.Param("sq", graph.NewDense(graph.Float64, 2, 2))
	step := ops.Sub(w, ops.Scale(x, 0.1))
	scaled := ops.Scale(w, 2)
	readLater := ops.Neg(w) // built after scaled: runs after it
	a := ops.Neg(x)
	readA := ops.Exp(a)
	type ups = map[*graph.Node]*graph.Node
	cases := []struct {
		name    string
		outputs []*graph.Node
		updates ups
		want    []string
	}{
		{"by the last reader", nil, ups{w: step},
			[]string{"%0 = Scale(0.1) x", "w = Sub w %0", "w ← (in place)"}},
		{"by an op that does not read it", nil, ups{w: a},
			[]string{"w = Neg x", "w ← (in place)"}},
		{"not while a later instruction reads it", []*graph.Node{readLater}, ups{w: scaled},
			[]string{"%0 = Scale(2) w", "%1 = Neg w", "return %1", "w ← %0"}},
		{"not over an argument the op cannot overwrite", nil, ups{sq: ops.MatMul(sq, sq)},
			[]string{"%0 = MatMul sq sq", "sq ← %0"}},
		{"not when another update reads it", nil, ups{w: a, w2: w},
			[]string{"%0 = Neg x", "w ← %0", "w2 ← w"}},
		{"not when it is an output", []*graph.Node{w}, ups{w: a},
			[]string{"%0 = Neg x", "return w", "w ← %0"}},
		{"one of two parameters given one value", nil, ups{w: a, w2: a},
			[]string{"w = Neg x", "w ← (in place)", "w2 ← w"}},
		{"later readers of the new value read the parameter", []*graph.Node{readA}, ups{w: a},
			[]string{"w = Neg x", "%0 = Exp w", "return %0", "w ← (in place)"}},
	}
	late := tg.g.Param("late", graph.NewDense(graph.Float64, 2, 3)) // made after a
	cases = append(cases, struct {
		name    string
		outputs []*graph.Node
		updates ups
		want    []string
	}{"not into a parameter made after the value", nil, ups{late: a}, []string{"%0 = Neg x", "late ← %0"}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg.expect(t, c.outputs, append(only("memory", "inplace"), WithUpdates(c.updates)), c.want...)
		})
	}
}

// TestInPlaceFused: each output of a fused instruction may overwrite an
// input that no later step of the expression reads.
func TestInPlaceFused(t *testing.T) {
	tg := newTestGraph()
	p := tg.g.Param("p", graph.NewDense(graph.Float64, 2, 3))
	mom := tg.g.Param("mom", graph.NewDense(graph.Float64, 2, 3))
	m1 := ops.Add(ops.Scale(mom, 0.9), tg.x)
	// Both moments' reads come before m1 is written: both in place.
	tg.expect(t, nil, append(only("fuse", "memory", "inplace"), WithUpdates(map[*graph.Node]*graph.Node{p: ops.Sub(p, m1), mom: m1})),
		"mom, p = Fused(Scale,Add,Sub) mom x p", "p ← (in place)", "mom ← (in place)")
	// A step after m1 reads the old moment: m1 needs a slot of its own.
	p1 := ops.Sub(p, ops.Mul(m1, ops.Sqrt(mom)))
	tg.expect(t, nil, append(only("fuse", "memory", "inplace"), WithUpdates(map[*graph.Node]*graph.Node{p: p1, mom: m1})),
		"%0, p = Fused(Scale,Add,Sqrt,Mul,Sub) mom x p", "p ← (in place)", "mom ← %0")
}

// Switched off, inplace leaves every update to be copied after the run.
func TestInPlaceSwitchedOff(t *testing.T) {
	tg := newTestGraph()
	w := tg.g.Param("w", graph.NewDense(graph.Float64, 2, 3))
	tg.expect(t, nil, []Option{WithoutPass("inplace"), WithUpdates(map[*graph.Node]*graph.Node{w: ops.Neg(w)})},
		"%0 = Neg w", "w ← %0")
}

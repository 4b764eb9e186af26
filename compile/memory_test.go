package compile

import (
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestMemory(t *testing.T) {
	tg := newTestGraph()
	x, y := tg.x, tg.y
	w := tg.g.Param("w", graph.NewDense(graph.Float64, 2, 3))
	x32 := tg.g.Input("x32", graph.Float32, 2, 3)
	a := ops.Exp(x)
	pair := graph.ApplyMulti(pairOp{1}, a)
	tr := ops.Transpose(a)
	cases := []struct {
		name    string
		outputs []*graph.Node
		updates map[*graph.Node]*graph.Node
		want    []string
	}{
		{"in place along a chain", []*graph.Node{ops.Exp(ops.Neg(ops.Tanh(x)))},
			nil, []string{"%0 = Tanh x", "%0 = Neg %0", "%0 = Exp %0", "return %0"}},
		{"not over a value read later", []*graph.Node{ops.Mul(a, ops.Neg(a))},
			nil, []string{"%0 = Exp x", "%1 = Neg %0", "%0 = Mul %0 %1", "return %0"}},
		{"x·x in place", []*graph.Node{ops.Mul(a, a)},
			nil, []string{"%0 = Exp x", "%0 = Mul %0 %0", "return %0"}},
		{"only over the first input", []*graph.Node{ops.Mul(y, ops.Exp(x))},
			nil, []string{"%0 = Exp x", "%1 = Mul y %0", "return %1"}},
		{"only over an input of the output's shape", []*graph.Node{ops.Add(ops.Exp(tg.v), x)},
			nil, []string{"%0 = Exp v", "%1 = Add %0 x", "return %1"}},
		{"never over inputs, params or constants", []*graph.Node{ops.Add(ops.Add(ops.Neg(x), w), ops.Neg(tg.fill(2, 2, 3)))},
			nil, []string{"%0 = Neg x", "%0 = Add %0 w", "%1 = Neg const(2,3)", "%0 = Add %0 %1", "return %0"}},
		{"reuse across shapes", []*graph.Node{ops.Mul(tr, ops.Neg(tr))},
			nil, []string{"%0 = Exp x", "%1 = Transpose %0", "%0 = Neg %1", "%1 = Mul %1 %0", "return %1"}},
		{"a Reshape in its argument's slot", []*graph.Node{ops.Neg(ops.Reshape(ops.Reshape(ops.Exp(x), 6), 3, 2))},
			nil, []string{"%0 = Exp x", "%0 = Reshape %0", "%0 = Reshape %0", "%0 = Neg %0", "return %0"}},
		{"a Reshape not over a value read later", []*graph.Node{ops.Add(ops.Reshape(a, 6), ops.Reshape(ops.Neg(a), 6))},
			nil, []string{"%0 = Exp x", "%1 = Reshape %0", "%0 = Neg %0", "%0 = Reshape %0", "%1 = Add %1 %0", "return %1"}},
		{"not across dtypes", []*graph.Node{ops.Exp(ops.Transpose(ops.Exp(x))), ops.Exp(ops.Exp(x32))},
			nil, []string{"%0 = Exp x", "%1 = Transpose %0", "%1 = Exp %1", "%2 = Exp x32", "%2 = Exp %2", "return %1 %2"}},
		{"outputs are kept", []*graph.Node{a, ops.Neg(a), ops.Sin(ops.Cos(a))},
			nil, []string{"%0 = Exp x", "%1 = Neg %0", "%2 = Cos %0", "%2 = Sin %2", "return %0 %1 %2"}},
		{"what updates read is kept", []*graph.Node{ops.Neg(a)},
			map[*graph.Node]*graph.Node{w: a}, []string{"%0 = Exp x", "%1 = Neg %0", "return %1", "w ← %0"}},
		{"multi-output", []*graph.Node{ops.Neg(pair[1])},
			nil, []string{"%0 = Exp x", "%1, %2 = Pair %0", "%2 = Neg %2", "return %2"}},
		{"an unread output frees its slot", []*graph.Node{ops.Add(ops.Neg(pair[1]), ops.Exp(y))},
			nil, []string{"%0 = Exp x", "%1, %2 = Pair %0", "%2 = Neg %2", "%1 = Exp y", "%2 = Add %2 %1", "return %2"}},
		// The (2,3) and (3,2) values share three slots, taking the last
		// freed first; the (2,2) products cannot use them.
		{"dead slots are reused by size, last freed first", []*graph.Node{ops.Add(
			ops.MatMul(ops.Exp(x), ops.Transpose(ops.Exp(y))),
			ops.MatMul(ops.Sin(x), ops.Transpose(ops.Sin(y))))},
			nil, []string{"%0 = Exp x", "%1 = Exp y", "%2 = Transpose %1", "%3 = MatMul %0 %2",
				"%2 = Sin x", "%0 = Sin y", "%1 = Transpose %0", "%4 = MatMul %2 %1", "%3 = Add %3 %4", "return %3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg.expect(t, tc.outputs, append(only("memory"), WithUpdates(tc.updates)), tc.want...)
		})
	}
}

// TestCheckerCatchesBadSlots: the invariant checker refuses memory plans
// that lose a value.
func TestCheckerCatchesBadSlots(t *testing.T) {
	tg := newTestGraph()
	x32 := tg.g.Input("x32", graph.Float32, 2, 3)
	a := ops.Exp(tg.x)
	b := ops.Neg(a)
	cases := []struct {
		name    string
		outputs []*graph.Node
		slots   []int // for the values in creation order
		want    string
	}{
		{"in place", []*graph.Node{b}, []int{0, 1, 1}, ""},
		{"over a live value", []*graph.Node{ops.Mul(a, b)}, []int{0, 1, 1, 2}, "overwrites slot 1 while Exp"},
		{"over an input", []*graph.Node{b}, []int{0, 0, 1}, "shares slot 0 with a input"},
		{"not an in-place op", []*graph.Node{ops.Transpose(a, 0, 1)}, []int{0, 1, 1}, "overwrites slot 1"},
		{"other size", []*graph.Node{ops.Sum(a)}, []int{0, 1, 1}, "of type float64() shares slot 1 with a value of type float64(2,3)"},
		{"other dtype", []*graph.Node{ops.Neg(ops.Exp(x32)), ops.Sin(tg.x)}, []int{0, 1, 2, 3, 2},
			"of type float64(2,3) shares slot 2 with a value of type float32(2,3)"},
		{"unplaced", []*graph.Node{b}, []int{0, 1, -1}, "1 of 3 values have no slot"},
	}
	for _, tc := range cases {
		f := newFunction(tc.outputs, nil)
		if err := deadcode(f); err != nil {
			t.Fatal(err)
		}
		for i, v := range f.values {
			v.slot = tc.slots[i]
		}
		err := checkFunction(f)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("case %v: got %v, want no error", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("case %v: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// TestSlotNodes: a slot lists the nodes it holds in turn, then requested
// outputs merged into them.
func TestSlotNodes(t *testing.T) {
	tg := newTestGraph()
	a := ops.Exp(tg.x)
	b := ops.Neg(a)
	c := ops.Sin(b)
	same := ops.Mul(c, tg.c(1)) // c itself
	p := tg.expect(t, []*graph.Node{c, same, same}, []Option{WithoutPass("fuse")}, "%0 = Exp x", "%0 = Neg %0", "%0 = Sin %0", "return %0 %0 %0")
	s, _ := p.SlotOf(same)
	if got, want := p.SlotNodes(s), []*graph.Node{a, b, c, same}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := p.SlotNodes(len(p.Slots())); got != nil {
		t.Errorf("slot out of range: got %v, want nil", got)
	}
}

package compile

import (
	"slices"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestSimplify(t *testing.T) {
	tg := newTestGraph()
	x, v, c := tg.x, tg.v, tg.c
	cases := []struct {
		name string
		y    *graph.Node
		want []string
	}{
		{"x*1", ops.Mul(x, c(1)), []string{"return x"}},
		{"1*x", ops.Mul(c(1), x), []string{"return x"}},
		{"x*ones", ops.Mul(x, tg.fill(1, 2, 3)), []string{"return x"}},
		{"x*2 is a Scale", ops.Mul(x, c(2)), []string{"%0 = Scale(2) x", "return %0"}},
		{"2*x is a Scale", ops.Mul(tg.fill(2, 3), x), []string{"%0 = Scale(2) x", "return %0"}},
		{"x*c, c not uniform", ops.Mul(x, tg.g.Const(must(graph.FromFloat64s(graph.Float64, []float64{1, 1, 2}, 3)))),
			[]string{"%0 = Mul x const(3)", "return %0"}},
		{"v*ones broadcasts", ops.Mul(v, tg.fill(1, 2, 3)), []string{"%0 = Mul v const(2,3)", "return %0"}},
		{"x+0 stays: -0+0 is +0", ops.Add(x, c(0)), []string{"%0 = Add x 0", "return %0"}},
		{"0+x stays", ops.Add(c(0), x), []string{"%0 = Add 0 x", "return %0"}},
		{"x+(-0)", ops.Add(x, c(negZero)), []string{"return x"}},
		{"(-0)+x", ops.Add(c(negZero), x), []string{"return x"}},
		{"x+[-0,0] stays", ops.Add(x, tg.g.Const(must(graph.FromFloat64s(graph.Float64, []float64{negZero, negZero, 0}, 3)))),
			[]string{"%0 = Add x const(3)", "return %0"}},
		{"x*[0,-0] is no Scale", ops.Mul(x, tg.g.Const(must(graph.FromFloat64s(graph.Float64, []float64{0, negZero, 0}, 3)))),
			[]string{"%0 = Mul x const(3)", "return %0"}},
		{"v+zeros broadcasts", ops.Add(v, tg.fill(0, 2, 3)), []string{"%0 = Add v const(2,3)", "return %0"}},
		{"x+1", ops.Add(x, c(1)), []string{"%0 = Add x 1", "return %0"}},
		{"x-0", ops.Sub(x, c(0)), []string{"return x"}},
		{"x-(-0) stays: -0-(-0) is +0", ops.Sub(x, c(negZero)), []string{"%0 = Sub x -0", "return %0"}},
		{"0-x", ops.Sub(c(0), x), []string{"%0 = Sub 0 x", "return %0"}},
		{"x/1", ops.Div(x, c(1)), []string{"return x"}},
		{"1/x", ops.Div(c(1), x), []string{"%0 = Div 1 x", "return %0"}},
		{"x*0 stays", ops.Mul(x, c(0)), []string{"%0 = Scale(0) x", "return %0"}},
		{"Scale(x,1)", ops.Scale(x, 1), []string{"return x"}},
		{"Scale(Scale(x,2),3) rounds twice", ops.Scale(ops.Scale(x, 2), 3), []string{"%0 = Scale(2) x", "%1 = Scale(3) %0", "return %1"}},
		{"Scale(Scale(x,2),0.5) overflows at the largest x", ops.Scale(ops.Scale(x, 2), 0.5), []string{"%0 = Scale(2) x", "%1 = Scale(0.5) %0", "return %1"}},
		{"Scale(Scale(x,1e300),1e-300)", ops.Scale(ops.Scale(x, 1e300), 1e-300), []string{"%0 = Scale(1e+300) x", "%1 = Scale(1e-300) %0", "return %1"}},
		{"Scale(Scale(x,3),-1)", ops.Scale(ops.Scale(x, 3), -1), []string{"%0 = Scale(-3) x", "return %0"}},
		{"Scale(Scale(x,-1),3)", ops.Scale(ops.Scale(x, -1), 3), []string{"%0 = Scale(-3) x", "return %0"}},
		{"Scale(Scale(x,1e200),1e200) would overflow", ops.Scale(ops.Scale(x, 1e200), 1e200), []string{"%0 = Scale(1e+200) x", "%1 = Scale(1e+200) %0", "return %1"}},
		{"Scale(Scale(x,1e-200),1e-200) would underflow", ops.Scale(ops.Scale(x, 1e-200), 1e-200), []string{"%0 = Scale(1e-200) x", "%1 = Scale(1e-200) %0", "return %1"}},
		{"-(-x)", ops.Neg(ops.Neg(x)), []string{"return x"}},
		{"-(-(-x))", ops.Neg(ops.Neg(ops.Neg(x))), []string{"%0 = Neg x", "return %0"}},
		{"-Scale(x,2)", ops.Neg(ops.Scale(x, 2)), []string{"%0 = Scale(-2) x", "return %0"}},
		{"Scale(-x,2)", ops.Scale(ops.Neg(x), 2), []string{"%0 = Scale(-2) x", "return %0"}},
		{"-(x·(-1))", ops.Neg(ops.Mul(x, c(-1))), []string{"return x"}},
		{"Identity", ops.Identity(x), []string{"return x"}},
		{"StopGradient", ops.StopGradient(x), []string{"return x"}},
		{"Reshape to x's shape", ops.Reshape(x, 2, 3), []string{"return x"}},
		{"Reshape", ops.Reshape(x, 3, 2), []string{"%0 = Reshape x", "return %0"}},
		{"Reshape of Reshape", ops.Reshape(ops.Reshape(x, 6), 3, -1), []string{"%0 = Reshape x", "return %0"}},
		{"Reshape back", ops.Reshape(ops.Reshape(x, 6), 2, 3), []string{"return x"}},
		{"SumTo x's shape adds to 0", ops.SumTo(x, 2, 3), []string{"%0 = SumTo x", "return %0"}},
		{"SumTo", ops.SumTo(x, 3), []string{"%0 = SumTo x", "return %0"}},
		{"BroadcastTo x's shape", ops.BroadcastTo(x, 2, 3), []string{"return x"}},
		{"BroadcastTo", ops.BroadcastTo(v, 2, 3), []string{"%0 = BroadcastTo v", "return %0"}},
		{"identity Transpose", ops.Transpose(x, 0, 1), []string{"return x"}},
		{"Transpose of Transpose", ops.Transpose(ops.Transpose(x)), []string{"return x"}},
		{"nested", ops.Add(ops.Mul(ops.Reshape(ops.Scale(x, 1), 2, 3), c(1)), ops.Identity(ops.Neg(ops.Neg(tg.y)))),
			[]string{"%0 = Add x y", "return %0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg.expect(t, []*graph.Node{tc.y}, only("simplify"), tc.want...)
		})
	}
}

// TestSimplifyTransposes: two transposes compose into one, whose
// permutation maps output axes to the input's.
func TestSimplifyTransposes(t *testing.T) {
	tg := newTestGraph()
	x := tg.g.Input("t", graph.Float64, 2, 3, 4)
	y := ops.Transpose(ops.Transpose(x, 1, 2, 0), 1, 2, 0) // (3,4,2), then (4,2,3)
	p := tg.expect(t, []*graph.Node{y}, only("simplify"), "%0 = Transpose t", "return %0")
	// Output axis i is the inner output's axis q[i], x's axis p[q[i]]:
	// (1,2,0)∘(1,2,0) = (2,0,1).
	perm, ok := ops.IsTranspose(p.Instructions()[0].Op)
	if want := []int{2, 0, 1}; !ok || !slices.Equal(perm, want) {
		t.Errorf("got permutation %v, want %v", perm, want)
	}
}

// TestSimplifyKeepsOutputsOffUpdatedParams: an output equal to a parameter
// that an update writes is still computed, since after the run the
// parameter's slot holds the new value.
func TestSimplifyKeepsOutputsOffUpdatedParams(t *testing.T) {
	tg := newTestGraph()
	w := tg.g.Param("w", graph.NewDense(graph.Float64, 3))
	u := tg.g.Param("u", graph.NewDense(graph.Float64, 3))
	seen := ops.Mul(w, tg.c(1))
	plain := ops.Mul(u, tg.c(1)) // u is not updated: the output is u itself
	tg.expect(t, []*graph.Node{seen, plain}, append(only("simplify"), WithUpdates(map[*graph.Node]*graph.Node{w: tg.v})),
		"%0 = Scale(1) w", "return %0 u", "w ← v")
}

package compile

import (
	"math"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestCSE(t *testing.T) {
	tg := newTestGraph()
	x, y := tg.x, tg.y
	x2 := tg.g.Input("x", graph.Float64, 2, 3) // x's twin: same name and type
	w := tg.g.Param("w", graph.NewDense(graph.Float64, 3))
	w2 := tg.g.Param("w", graph.NewDense(graph.Float64, 3))
	pair := func(n *graph.Node, shift float64) []*graph.Node { return graph.ApplyMulti(pairOp{shift}, n) }
	keyed := func(n *graph.Node, shift float64) *graph.Node {
		return graph.Apply(keyedOp{[]float64{shift}}, n)
	}
	opaque := graph.Apply(opaqueOp{func() float64 { return 1 }}, x)
	cases := []struct {
		name string
		y    *graph.Node
		want []string
	}{
		{"same op, same args", ops.Mul(ops.Exp(x), ops.Exp(x)),
			[]string{"%0 = Exp x", "%1 = Mul %0 %0", "return %1"}},
		{"chains merge whole", ops.Add(ops.Sin(ops.Exp(x)), ops.Sin(ops.Exp(x))),
			[]string{"%0 = Exp x", "%1 = Sin %0", "%2 = Add %1 %1", "return %2"}},
		{"other parameter", ops.Add(ops.Scale(x, 2), ops.Scale(x, 3)),
			[]string{"%0 = Scale(2) x", "%1 = Scale(3) x", "%2 = Add %0 %1", "return %2"}},
		{"-0 is not 0", ops.Add(ops.Add(x, tg.c(0)), ops.Add(x, tg.c(math.Copysign(0, -1)))),
			[]string{"%0 = Add x 0", "%1 = Add x -0", "%2 = Add %0 %1", "return %2"}},
		{"other argument order", ops.Mul(ops.Sub(x, y), ops.Sub(y, x)),
			[]string{"%0 = Sub x y", "%1 = Sub y x", "%2 = Mul %0 %1", "return %2"}},
		{"equal scalar constants", ops.Mul(ops.Add(x, tg.c(2)), ops.Add(x, tg.c(2))),
			[]string{"%0 = Add x 2", "%1 = Mul %0 %0", "return %1"}},
		{"equal tensor constants", ops.Mul(ops.Add(x, tg.fill(2, 3)), ops.Add(x, tg.fill(2, 3))),
			[]string{"%0 = Add x const(3)", "%1 = Mul %0 %0", "return %1"}},
		{"tensor constants with other bits stay apart", ops.Mul(ops.Add(x, tg.fill(0, 3)), ops.Add(x, tg.fill(math.Copysign(0, -1), 3))),
			[]string{"%0 = Add x const(3)", "%1 = Add x const(3)", "%2 = Mul %0 %1", "return %2"}},
		{"tensor constants with other shapes stay apart", ops.Mul(ops.Add(x, tg.fill(2, 3)), ops.Add(x, ops.Reshape(tg.fill(2, 1, 3), 3))),
			[]string{"%0 = Add x const(3)", "%1 = Reshape const(1,3)", "%2 = Add x %1", "%3 = Mul %0 %2", "return %3"}},
		{"inputs never merge", ops.Mul(ops.Exp(x), ops.Exp(x2)),
			[]string{"%0 = Exp x", "%1 = Exp x", "%2 = Mul %0 %1", "return %2"}},
		{"params never merge", ops.Add(ops.Exp(w), ops.Exp(w2)),
			[]string{"%0 = Exp w", "%1 = Exp w", "%2 = Add %0 %1", "return %2"}},
		{"multi-output groups", ops.Mul(ops.Add(pair(x, 1)[0], pair(x, 1)[0]), ops.Add(pair(x, 1)[1], pair(x, 2)[1])),
			[]string{"%0, %1 = Pair x", "%2 = Add %0 %0", "%3, %4 = Pair x", "%5 = Add %1 %4", "%6 = Mul %2 %5", "return %6"}},
		{"keyed ops", ops.Add(ops.Add(keyed(x, 1), keyed(x, 1)), keyed(x, 2)),
			[]string{"%0 = Keyed x", "%1 = Add %0 %0", "%2 = Keyed x", "%3 = Add %1 %2", "return %3"}},
		{"opaque ops never merge", ops.Add(opaque, graph.Apply(opaqueOp{func() float64 { return 1 }}, x)),
			[]string{"%0 = Opaque x", "%1 = Opaque x", "%2 = Add %0 %1", "return %2"}},
		{"unhashable parameters are left alone", ops.Add(graph.Apply(boxedOp{[]int{1}}, x), graph.Apply(boxedOp{[]int{1}}, x)),
			[]string{"%0 = Boxed x", "%1 = Boxed x", "%2 = Add %0 %1", "return %2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg.expect(t, []*graph.Node{tc.y}, only("cse"), tc.want...)
		})
	}
}

// TestCSEOutputs: outputs that merge share one value; scalar constants
// merge only with the same dtype.
func TestCSEOutputs(t *testing.T) {
	tg := newTestGraph()
	a, b := ops.Exp(tg.x), ops.Exp(tg.x)
	c64, c32 := tg.c(2), tg.g.Scalar(2, graph.Float32)
	f := newFunction([]*graph.Node{a, b, c64, tg.c(2), c32}, nil)
	if err := cse(f); err != nil {
		t.Fatal(err)
	}
	if err := checkFunction(f); err != nil {
		t.Fatal(err)
	}
	o := f.outputs
	if o[0] != o[1] || o[2] != o[3] || o[2] == o[4] {
		t.Errorf("got outputs %v, want Exp merged, float64 2s merged, float32 2 apart", o)
	}
}

// LogDet is built from Cholesky's factor, so a log-determinant and a
// solve through the same matrix's factor share one factorisation (a
// Gaussian's log-likelihood reads both).
func TestCSESharesFactorisation(t *testing.T) {
	g := graph.New()
	a := g.Input("a", graph.Float64, 3, 3)
	b := g.Input("b", graph.Float64, 3, 2)
	outs := []*graph.Node{ops.LogDet(a), ops.CholeskySolve(ops.Cholesky(a), b)}
	(&testGraph{g: g}).expect(t, outs, only("cse", "memory"),
		"%0 = Cholesky a",
		"%1 = Diagonal %0",
		"%1 = Log %1",
		"%2 = Sum %1",
		"%2 = Scale(2) %2",
		"%3 = TriangularSolve %0 b",
		"%4 = TriangularSolve %0 %3",
		"return %2 %4")
}

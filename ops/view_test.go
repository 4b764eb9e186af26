package ops_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TestViewThrough checks the views layout ops make, against strides and
// offsets worked out by hand, and the Reshapes that make none.
func TestViewThrough(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 6)
	type step struct {
		n    *graph.Node
		ok   bool
		view string // shape, strides, offset
	}
	tx := ops.Transpose(x, 1, 0)      // (6, 4): strides (1, 6)
	sx := ops.Slice(tx, 1, 1, 3)      // (6, 2): strides (1, 6), offset 6
	split := ops.Reshape(sx, 3, 2, 2) // the first axis split: (3, 2, 2), strides (2, 1, 6)
	merged := ops.Reshape(tx, 24)     // a transpose's axes merged: no view
	ones := ops.Reshape(sx, 6, 1, 2)  // an axis of 1 added: stride 0
	row := ops.Slice(x, 0, 1, 3)      // rows 1 and 2: (2, 6), strides (6, 1), offset 6
	flat := ops.Reshape(row, 12)      // contiguous rows merge: (12), stride 1, offset 6
	for _, c := range []struct {
		from *graph.Node
		step
	}{
		{x, step{tx, true, "[6 4] [1 6] 0"}},
		{tx, step{sx, true, "[6 2] [1 6] 6"}},
		{sx, step{split, true, "[3 2 2] [2 1 6] 6"}},
		{tx, step{merged, false, ""}},
		{sx, step{ones, true, "[6 1 2] [1 0 6] 6"}},
		{x, step{row, true, "[2 6] [6 1] 6"}},
		{row, step{flat, true, "[12] [1] 6"}},
	} {
		v, ok := viewOf(t, x, c.n)
		if ok != c.ok || ok && v != c.view {
			t.Errorf("%v: view %q (%v), want %q (%v)", c.n, v, ok, c.view, c.ok)
		}
	}
}

// viewOf is the view of x that the chain of layout ops from x to n makes,
// as "shape strides offset".
func viewOf(t *testing.T, x, n *graph.Node) (string, bool) {
	t.Helper()
	var chain []*graph.Node
	for p := n; p != x; p = p.Inputs()[0] {
		chain = append(chain, p)
	}
	slices.Reverse(chain)
	v, ok := ops.ContiguousView(x.Shape())
	for _, p := range chain {
		if v, ok = v.Through(p.Op(), p.Type()); !ok {
			return "", false
		}
	}
	return v.String(), true
}

// TestReadThroughHasNoGradient checks that differentiating an op made by
// ops.ReadThrough reports that it has none.
func TestReadThroughHasNoGradient(t *testing.T) {
	g := graph.New()
	x := g.Param("x", graph.NewDenseOf(graph.TypeOf(graph.Float64, 3, 2)))
	tx := ops.Transpose(x, 1, 0)
	v, _ := ops.ContiguousView(x.Shape())
	v, ok := v.Through(tx.Op(), tx.Type())
	if !ok {
		t.Fatal("no view of a transpose")
	}
	sum := ops.Sum(tx, 1)
	op, ok := ops.ReadThrough(sum.Op(), []graph.Type{x.Type()}, 0, v)
	if !ok {
		t.Fatal("Sum does not read through a transpose")
	}
	_, err := compile.Grad(ops.Sum(graph.Apply(op, x)), x)
	if err == nil || !strings.Contains(err.Error(), "Sum(Transpose) is made by the compiler after differentiation and has no gradient") {
		t.Fatalf("Grad: %v, want Sum(Transpose)'s error", err)
	}
}

// TestReadThroughElementwiseOperandShapes: an elementwise op made by
// ops.ReadThrough reads its other operand element by element, so applied
// by hand to one of another shape than the view's it is a build error;
// such an operand broadcast ((1,2)), or larger ((3,4,2)), made a kernel
// that panicked or read past the view. On operands of the view's shape,
// it is the op of the slice: x[:, :2] + y.
func TestReadThroughElementwiseOperandShapes(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 3)
	sx := ops.Slice(x, 1, 0, 2) // (4, 2): strides (3, 1)
	v, _ := ops.ContiguousView(x.Shape())
	v, ok := v.Through(sx.Op(), sx.Type())
	if !ok {
		t.Fatal("no view of a slice")
	}
	add := ops.Add(sx, sx)
	op, ok := ops.ReadThrough(add.Op(), []graph.Type{x.Type(), sx.Type()}, 0, v)
	if !ok {
		t.Fatal("Add does not read through a slice")
	}
	for _, shape := range [][]int{{1, 2}, {3, 4, 2}, {8}, {2, 4}} {
		g := graph.New()
		graph.Apply(op, g.Input("x", graph.Float64, 4, 3), g.Input("y", graph.Float64, shape...))
		want := "Add(Slice): input 1 has shape " + graph.ShapeString(shape) + ", want the view's (4,2): the op reads its operands element by element, without broadcasting"
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "view_test.go:") {
			t.Errorf("operand %v: got %v, want an error containing %q", shape, err, want)
		}
	}
	xs := make([]float64, 12)
	ys := make([]float64, 8)
	for i := range xs {
		xs[i] = float64(i * i)
	}
	for i := range ys {
		ys[i] = 0.5 * float64(i)
	}
	xv, _ := graph.FromFloat64s(graph.Float64, xs, 4, 3)
	yv, _ := graph.FromFloat64s(graph.Float64, ys, 4, 2)
	y := g.Input("y", graph.Float64, 4, 2)
	out := graph.Apply(op, x, y)
	m := machine(t, out)
	if err := m.Run(vm.Feeds{x: xv, y: yv}); err != nil {
		t.Fatal(err)
	}
	got, _ := m.Value(out)
	for i := range 4 {
		for j := range 2 {
			if want := xs[3*i+j] + ys[2*i+j]; graph.Float64s(got)[2*i+j] != want {
				t.Errorf("element (%d,%d): got %v, want %v", i, j, graph.Float64s(got)[2*i+j], want)
			}
		}
	}
}

// TestThroughRefusesLayoutsOfOtherShapes: a layout op whose output from
// the view's shape is not the type given makes no view: a Slice of
// columns 5 to 8 of another tensor, through the view of a (4,6) one,
// would read past its end (it made ops whose kernels panicked), and a
// Transpose or a Reshape of another shape's tensor is refused. A Reshape
// of another tensor of 24 elements to (2,12) is also one of (4,6).
func TestThroughRefusesLayoutsOfOtherShapes(t *testing.T) {
	g := graph.New()
	v, _ := ops.ContiguousView([]int{4, 6})
	for _, c := range []struct {
		n  *graph.Node
		ok bool
	}{
		{ops.Slice(g.Input("o", graph.Float64, 4, 8), 1, 5, 8), false},
		{ops.Transpose(g.Input("t", graph.Float64, 6, 3), 1, 0), false},
		{ops.Reshape(g.Input("r", graph.Float64, 5, 5), 25), false},
		{ops.Reshape(g.Input("s", graph.Float64, 3, 8), 2, 12), true},
	} {
		if _, ok := v.Through(c.n.Op(), c.n.Type()); ok != c.ok {
			t.Errorf("%v through a view of (4,6): ok %v, want %v", c.n, ok, c.ok)
		}
	}
	if _, ok := v.Through(nil, graph.TypeOf(graph.Float64, 4, 6)); ok {
		t.Error("a nil layout made a view")
	}
	if _, ok := v.Through(ops.Neg(g.Input("x", graph.Float64, 4, 6)).Op(), graph.TypeOf(graph.Float64, 4, 6)); ok {
		t.Error("Neg made a view")
	}
}

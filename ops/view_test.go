package ops_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
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

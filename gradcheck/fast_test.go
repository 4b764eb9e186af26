package gradcheck_test

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// TestFastAgreesWithFull runs the whole table and every wrong op in both
// modes: they must agree on pass or fail, and a failure must read the same
// (fast mode diagnoses with the full Jacobian; kernel checks, which come
// first, are the same in both modes).
func TestFastAgreesWithFull(t *testing.T) {
	for _, c := range builtinTable() {
		agree(t, c.Name(), checkCase(c, false), checkCase(c, true))
	}
	for _, w := range wrongOps() {
		full := gradcheck.CheckOp(w.op, w.inputs, gradcheck.Options{})
		fast := gradcheck.CheckOp(w.op, w.inputs, gradcheck.Options{Fast: true})
		agree(t, w.name, full, fast)
	}
	x := newValues(12).Signed(2, 3)
	inFunction := func(in []*graph.Node) *graph.Node { return ops.Sum(ops.Tanh(graph.Apply(doubled, in[0])), 0) }
	for _, check := range []func(func([]*graph.Node) *graph.Node, []*tensor.Dense, gradcheck.Options) error{gradcheck.Check, gradcheck.GradGradCheck} {
		agree(t, "doubled in a function", check(inFunction, []*tensor.Dense{x}, gradcheck.Options{}),
			check(inFunction, []*tensor.Dense{x}, gradcheck.Options{Fast: true}))
	}
}

func agree(t *testing.T, name string, full, fast error) {
	t.Helper()
	switch {
	case (full == nil) != (fast == nil):
		t.Errorf("case %v: full mode says %v, fast mode says %v", name, full, fast)
	case full == nil:
	case asCheckError(t, full).Problem != asCheckError(t, fast).Problem:
		t.Errorf("case %v: full mode says\n%v\nfast mode says\n%v", name, full, fast)
	case asCheckError(t, full).Problem >= gradcheck.FirstDerivative && full.Error() != fast.Error():
		t.Errorf("case %v: full mode says\n%v\nfast mode says\n%v", name, full, fast)
	}
}

// TestFastRunsFewerKernels counts the forward kernel's calls: full mode
// runs it twice per input element, fast mode twice per input.
func TestFastRunsFewerKernels(t *testing.T) {
	calls := 0
	counting := &testOp{name: "CountingSquare",
		forward: func(out []float64, in [][]float64) {
			calls++
			squareForward(out, in)
		},
		backward: func(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
			return []*graph.Node{ops.Mul(g, ops.Scale(ctx.Input(0), 2))}
		}}
	x := newValues(13).Signed(4, 4)
	run := func(fast bool) int {
		calls = 0
		err := gradcheck.Check(func(in []*graph.Node) *graph.Node { return graph.Apply(counting, in[0]) }, []*tensor.Dense{x}, gradcheck.Options{Fast: fast})
		if err != nil {
			t.Fatalf("fast %v: %v", fast, err)
		}
		return calls
	}
	// Full: one run at the inputs and 2·16 at the finite-difference
	// points; fast: one and 2.
	full, fast := run(false), run(true)
	if full != 33 || fast != 3 {
		t.Errorf("got %d kernel calls in full mode and %d in fast mode, want 33 and 3", full, fast)
	}
}

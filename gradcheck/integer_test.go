package gradcheck_test

import (
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// TestIntegerInputsAreHeld: integer inputs are held still by default, and
// naming one among the checked inputs is an error.
func TestIntegerInputsAreHeld(t *testing.T) {
	gather := func(in []*graph.Node) *graph.Node { return ops.Gather(in[0], in[1]) }
	inputs := []*tensor.Dense{newValues(2).Signed(3, 2), intsOf(graph.Int64, []int{2}, 2, 0)}
	if err := gradcheck.Check(gather, inputs, gradcheck.Options{}); err != nil {
		t.Fatalf("case default inputs: %v", err)
	}
	if err := gradcheck.GradGradCheck(gather, inputs, gradcheck.Options{}); err != nil {
		t.Fatalf("case default inputs, second order: %v", err)
	}
	err := gradcheck.Check(gather, inputs, gradcheck.Options{Inputs: []int{0, 1}})
	want := "Options.Inputs names input 1, which is int64: integers have no derivative to check"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("case integer input named: got %v, want %q", err, want)
	}
	// A wrong gradient is still caught with an integer input beside.
	wrong := func(in []*graph.Node) *graph.Node { return ops.Gather(ops.StopGradient(in[0]), in[1]) }
	if err := gradcheck.Check(wrong, inputs, gradcheck.Options{}); err == nil {
		t.Fatalf("case StopGradient: got no error, want a mismatch")
	}
}

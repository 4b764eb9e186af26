package gradcheck_test

import (
	"slices"
	"testing"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/internal/testkit/optable"
)

// condRows are branches through ops.Cond (optable.CondTable) and loops
// through ops.While (optable.WhileTable) and Scan with ops.Until
// (optable.UntilTable), checked like the built-in ops'
// rows: first and second derivatives (Check, GradGradCheck) and third
// (GradGradCheck of the gradient), every input but the predicate or bound
// differentiated, each branch taken in some row, loops of none, one, some
// and MaxSteps steps, loops stopping at the first step, early and never.
func condRows() []opCase {
	return slices.Concat(optable.CondTable(), optable.WhileTable(), optable.UntilTable())
}

func TestCondRows(t *testing.T) {
	for _, c := range condRows() {
		t.Run(c.Variant, func(t *testing.T) {
			opts := gradcheck.Options{Inputs: c.Checked}
			if err := gradcheck.Check(c.Build, c.Inputs, opts); err != nil {
				t.Fatalf("first order: %v", err)
			}
			if err := gradcheck.GradGradCheck(c.Build, c.Inputs, opts); err != nil {
				t.Fatalf("second order: %v", err)
			}
			if err := gradcheck.GradGradCheck(thirdOrder(c), c.Inputs, opts); err != nil {
				t.Fatalf("third order: %v", err)
			}
		})
	}
}

package gradcheck_test

import (
	"slices"
	"testing"

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
	checkToThirdOrder(t, condRows())
}

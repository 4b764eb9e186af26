package ops_test

import (
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// geluDeriv, the op of GELU's derivative, has derivatives that match
// finite differences to third order and a forward rule that gives its
// Jacobian (CheckOp), at points either side of 0 and in the tails.
func TestGELUDerivDerivatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	checkToThirdOrder(t, rng, -4, 4, [][]int{{7}, {2, 3}}, []string{"x"},
		func(x []*graph.Node) *graph.Node { return ops.GELUDeriv(x[0]) })
}

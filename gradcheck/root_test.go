package gradcheck_test

import (
	"testing"

	"github.com/nabla-go/nabla/internal/testkit/optable"
)

// Solutions through ops.Root and ops.FixedPoint (optable.RootTable),
// differentiated by the implicit function theorem, are checked like the
// built-in ops' rows: first, second and third derivatives against finite
// differences of the solves.
func TestRootRows(t *testing.T) { checkToThirdOrder(t, optable.RootTable()) }

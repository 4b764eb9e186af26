package gradcheck_test

import (
	"testing"

	"github.com/nabla-go/nabla/internal/testkit/optable"
)

// Computations through ops.Checkpoint (optable.CheckpointTable), whose
// gradients compute them again, are checked like the built-in ops' rows:
// first, second and third derivatives against finite differences.
func TestCheckpointRows(t *testing.T) {
	checkToThirdOrder(t, optable.CheckpointTable())
}

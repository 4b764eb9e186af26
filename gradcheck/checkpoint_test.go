package gradcheck_test

import (
	"testing"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/internal/testkit/optable"
)

// Computations through ops.Checkpoint (optable.CheckpointTable), whose
// gradients compute them again, are checked like the built-in ops' rows:
// first, second and third derivatives against finite differences.
func TestCheckpointRows(t *testing.T) {
	for _, c := range optable.CheckpointTable() {
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

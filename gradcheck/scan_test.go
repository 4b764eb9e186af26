package gradcheck_test

import (
	"testing"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/internal/testkit/optable"
)

// scanRows are loops through ops.Scan (optable.ScanTable), checked like
// the built-in ops' rows: first and second derivatives (Check,
// GradGradCheck) and third (GradGradCheck of the gradient), every input
// differentiated.
func scanRows() []opCase { return optable.ScanTable() }

func TestScanRows(t *testing.T) {
	for _, c := range scanRows() {
		t.Run(c.Variant, func(t *testing.T) {
			if err := gradcheck.Check(c.Build, c.Inputs, gradcheck.Options{}); err != nil {
				t.Fatalf("first order: %v", err)
			}
			if err := gradcheck.GradGradCheck(c.Build, c.Inputs, gradcheck.Options{}); err != nil {
				t.Fatalf("second order: %v", err)
			}
			if err := gradcheck.GradGradCheck(thirdOrder(c), c.Inputs, gradcheck.Options{}); err != nil {
				t.Fatalf("third order: %v", err)
			}
		})
	}
}

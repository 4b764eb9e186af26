package cuda

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/optable"
)

// TestConformance checks every row of the built-in op table with CheckOp
// on each test device, in float64 and float32: the op's output and the
// gradients of a weighted sum of it with respect to every float input,
// against the CPU's. It logs the ops that ran on the host for want of a
// GPU kernel (Scan and Cond, which While is made of, so far).
func TestConformance(t *testing.T) {
	devs := testDevices(t)
	onHost := map[string]int{}
	rows := 0
	var skipped []string
	// Scan, Cond and While rows run on the host (a loop's body and a
	// branch are programs of their own, run by the machine's body
	// machines), between device instructions; so do Root's and
	// FixedPoint's solves and their pass-through.
	for _, c := range slices.Concat(optable.Table(), optable.ScanTable(), optable.CondTable(), optable.WhileTable(), optable.RootTable()) {
		for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
			name := fmt.Sprintf("%s/%v", c.Name(), dtype)
			inputs := make([]*tensor.Dense, len(c.Inputs))
			for i, x := range c.Inputs {
				inputs[i] = optable.Convert(x, dtype)
			}
			rows++
			for _, dev := range devs {
				t.Run(name, func(t *testing.T) {
					ops, err := CheckOp(dev, c.Build, inputs...)
					var build *graph.Error
					if err != nil && dtype != graph.Float64 && errors.As(err, &build) {
						// A row about dtypes (Cast) is built for its own.
						skipped = append(skipped, name)
						return
					}
					if err != nil {
						t.Fatalf("%v: %v", dev, err)
					}
					for _, op := range ops {
						onHost[op]++
					}
				})
			}
		}
	}
	if rows < 300 {
		t.Fatalf("only %d rows: the table is not the op table", rows)
	}
	if len(skipped) > 10 {
		t.Errorf("%d rows do not build in float32: %v", len(skipped), skipped)
	}
	t.Logf("%d programs (not built in float32: %v); instructions run on the host, by op: %v", rows, skipped, onHost)
}

package cuda

import (
	"fmt"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/optable"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TestConformance runs every row of the built-in op table on each test
// device and on the CPU, in float64 and float32: the op's output and the
// gradients of a weighted sum of it with respect to every float input,
// compared to 1e-12 and 1e-5 relative. It logs the ops that ran on the
// host for want of a GPU kernel.
func TestConformance(t *testing.T) {
	devs := testDevices(t)
	onHost := map[string]int{}
	rows := 0
	var skipped []string
	for _, c := range optable.Table() {
		for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
			name := fmt.Sprintf("%s/%v", c.Name(), dtype)
			prog, feeds, err := conformanceProgram(c, dtype)
			if err != nil && dtype != graph.Float64 {
				// A row about dtypes (Cast) is built for its own.
				skipped = append(skipped, name)
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			rows++
			for _, dev := range devs {
				t.Run(name, func(t *testing.T) {
					m := compareRuns(t, dev, prog, []vm.Feeds{feeds}, tolerance(dtype))
					for i, in := range prog.Instructions() {
						if m.OnHost(i) {
							onHost[in.Name()]++
						}
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

// conformanceProgram compiles a table row in dtype: its output and the
// gradients of ⟨w, output⟩, w fixed, with respect to its float inputs.
func conformanceProgram(c optable.Case, dtype tensor.Dtype) (*compile.Program, vm.Feeds, error) {
	g := graph.New()
	feeds := vm.Feeds{}
	var ins, wrt []*graph.Node
	for i, x := range c.Inputs {
		x = optable.Convert(x, dtype)
		n := g.Input(fmt.Sprintf("x%d", i), x.Dtype(), x.Shape()...)
		ins, feeds[n] = append(ins, n), x
		if graph.IsFloat(x.Dtype()) {
			wrt = append(wrt, n)
		}
	}
	y := c.Build(ins)
	outs := []*graph.Node{y}
	if graph.IsFloat(y.DType()) && len(wrt) > 0 {
		w := optable.Convert(optable.NewValues(7).Signed(y.Shape()...), y.DType())
		grads, err := compile.GradWith(ops.Sum(ops.Mul(y, g.Const(w))), wrt, compile.ZerosIfDisconnected())
		if err != nil {
			return nil, nil, err
		}
		outs = append(outs, grads...)
	}
	prog, err := compile.Compile(outs)
	return prog, feeds, err
}

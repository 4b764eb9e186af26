package onnx_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Reshapes and SumTos to shapes with a zero dimension (empty values)
// export at every opset and import back to the same types: ONNX's Reshape
// reads a 0 as "the input's dimension there", which was (1) for SumTo of
// (1,0) to (0), and Import refused the model (found by FuzzExport).
func TestExportReshapesToEmptyShapes(t *testing.T) {
	for _, opset := range []int64{13, 14, 17, 21} {
		g := graph.New()
		x := g.Input("x", graph.Float32, 1, 0)
		y := g.Input("y", graph.Float64, 2, 0, 3)
		outs := []*graph.Node{
			ops.SumTo(ops.Abs(x), 0),
			ops.Reshape(y, 3, 0),
			ops.Reshape(y, 0, 2, 3),
			ops.Reshape(ops.Neg(y), 2, 3, 0, 1),
			ops.SumTo(y, 1, 0, 1),
		}
		m := reimport(t, fmt.Sprintf("opset %d: ", opset), outs, onnx.ExportOptions{Opset: opset})
		feeds := vm.Feeds{}
		for i, n := range m.Inputs {
			feeds[n] = graph.NewDenseOf(n.Type())
			if want := map[string]graph.Type{"x": x.Type(), "y": y.Type()}[m.InputNames[i]]; !n.Type().Equal(want) {
				t.Errorf("opset %d: input %q is %v, want %v", opset, m.InputNames[i], n.Type(), want)
			}
		}
		got := run(t, feeds, m.Outputs...)
		for i, o := range outs {
			if got[i].Dtype() != o.DType() || !slices.Equal(got[i].Shape(), o.Shape()) {
				t.Errorf("opset %d: output %d is %v%v, want %v", opset, i, got[i].Dtype(), got[i].Shape(), o.Type())
			}
		}
	}
}

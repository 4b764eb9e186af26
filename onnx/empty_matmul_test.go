package onnx_test

import (
	"slices"
	"testing"

	"github.com/nabla-go/nabla/graph"
)

// A MatMul of a batch of matrices by one matrix, with empty inner or
// batch axes, imports: it made the batch's rows by a Reshape to (-1, k),
// which k = 0 leaves ambiguous (found by FuzzExport). With k = 0 the
// products are sums of nothing: zeros.
func TestImportMatMulOfEmptyBatches(t *testing.T) {
	for _, c := range [][2][]int{
		{{0, 3, 0}, {0, 2}},
		{{2, 3, 0}, {0, 2}},
		{{2, 0, 4}, {4, 3}},
		{{2, 1, 3, 0}, {0, 5}},
	} {
		a, b := graph.NewDense(graph.Float64, c[0]...), graph.NewDense(graph.Float64, c[1]...)
		got := importRun(t, oneNodeModel("MatMul", 17, nil, []operand{{shape: c[0]}, {shape: c[1]}}), a, b)
		want := make([]float64, graph.ShapeSize(c[0][:len(c[0])-1])*c[1][1])
		if !slices.Equal(got, want) {
			t.Errorf("MatMul of %v and %v: got %v, want %d zeros", c[0], c[1], got, len(want))
		}
	}
}

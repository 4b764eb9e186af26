package ops

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// MatMulAdd with an empty output has nothing to copy or add (it panicked
// taking the address of an empty buffer's first element).
func TestMatMulAddEmpty(t *testing.T) {
	for _, c := range []struct{ a, b, c, out []int }{
		{[]int{2, 3}, []int{3, 0}, []int{2, 0}, []int{2, 0}},
		{[]int{0, 3}, []int{3, 2}, []int{2}, []int{0, 2}},
	} {
		in := []*tensor.Dense{graph.NewDense(graph.Float32, c.a...), graph.NewDense(graph.Float32, c.b...), graph.NewDense(graph.Float32, c.c...)}
		out := graph.NewDense(graph.Float32, c.out...)
		if err := (MatMulAddOp{}).Forward(out, in); err != nil {
			t.Errorf("case %v: %v", c, err)
		}
	}
}

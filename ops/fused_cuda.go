package ops

import (
	"fmt"
	"strings"

	"github.com/nabla-go/nabla/graph"
)

// CUDA is the fused expression's GPU kernel (graph.CUDAKernel): one work
// item per output element, each step a C expression (ElementwiseC), an
// input broadcast to the outputs' shape read through its strides.
func (op *FusedOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if len(in) != op.NumInputs() {
		return nil, fmt.Errorf("%d input types for a fused op of %d inputs", len(in), op.NumInputs())
	}
	if len(out) == 0 || !graph.IsFloat(out[0].DType) {
		return nil, fmt.Errorf("%s: no float output", op.name)
	}
	f32 := out[0].DType == graph.Float32
	// The shape every element is indexed in: the widest rank among the
	// inputs and outputs (the same elements, with leading 1s).
	var shape []int
	size := out[0].Size()
	for _, t := range append(append([]graph.Type{}, out...), in...) {
		if t.Size() == size && len(t.Shape) > len(shape) {
			shape = t.Shape
		}
	}
	var b strings.Builder
	for i, t := range in {
		fmt.Fprintf(&b, "const T x%d = in%d[%s];\n", i, i, broadcastIndex(t, shape, size))
	}
	operand := func(a int) string {
		if a < len(in) {
			return fmt.Sprintf("x%d", a)
		}
		return fmt.Sprintf("s%d", a-len(in))
	}
	for j, s := range op.steps {
		args := make([]string, len(s.Args))
		for k, a := range s.Args {
			args[k] = operand(a)
		}
		e, err := ElementwiseC(s.Op, args, f32)
		if err != nil {
			return nil, fmt.Errorf("step %d: %v", j, err)
		}
		fmt.Fprintf(&b, "const T s%d = %s;\n", j, e)
	}
	for k, j := range op.outputs {
		fmt.Fprintf(&b, "out%d[i] = s%d;\n", k, j)
	}
	return []graph.CUDASource{{N: int64(size), Body: b.String()}}, nil
}

// CUDA is FusedOp.CUDA.
func (m FusedMulti) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) { return m.op.CUDA(in, out) }

// BroadcastIndexC is the C expression of the element of a value of type t
// that element i of a value of shape shape reads, t broadcasting to it; it
// is "" when t does not broadcast to shape.
func BroadcastIndexC(t graph.Type, shape []int) string {
	if broadcastsTo(t.Shape, shape) != nil {
		return ""
	}
	return broadcastIndex(t, shape, graph.ShapeSize(shape))
}

// broadcastIndex is the C expression of the element of a value of type t
// that element i of a value of the given shape (of size elements) reads,
// t broadcasting to shape: i itself, 0 for one element, or a sum over the
// axes it is not broadcast along.
func broadcastIndex(t graph.Type, shape []int, size int) string {
	switch t.Size() {
	case size:
		return "i"
	case 1:
		return "0"
	}
	outStride := make([]int, len(shape))
	s := 1
	for a := len(shape) - 1; a >= 0; a-- {
		outStride[a] = s
		s *= shape[a]
	}
	var terms []string
	stride, off := 1, len(shape)-len(t.Shape)
	for a := len(t.Shape) - 1; a >= 0; a-- {
		if n := t.Shape[a]; n != 1 {
			o := a + off
			terms = append(terms, fmt.Sprintf("(i / %d %% %d) * %d", outStride[o], shape[o], stride))
		}
		stride *= t.Shape[a]
	}
	return strings.Join(terms, " + ")
}

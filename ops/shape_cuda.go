package ops

import (
	"fmt"
	"strings"

	"github.com/nabla-go/nabla/graph"
)

// The GPU kernels of the shape ops (graph.CUDAKernel): one work item per
// output element, reading the input element it copies through index
// arithmetic whose sizes and strides are literals. They only move
// elements, so they are the same C whatever the dtype.

// checkKernelTypes checks that op, given inputs of types in, has the one
// output of type out (which the kernels are built for) and returns it.
func checkKernelTypes(op graph.Op, in, out []graph.Type) (graph.Type, error) {
	if len(out) != 1 {
		return graph.Type{}, fmt.Errorf("%s: %d output types for one output", op.Name(), len(out))
	}
	want, err := op.Type(in)
	if err != nil {
		return graph.Type{}, fmt.Errorf("%s: %v", op.Name(), err)
	}
	if !want.Equal(out[0]) {
		return graph.Type{}, fmt.Errorf("%s: output type %v, want %v", op.Name(), out[0], want)
	}
	return want, nil
}

// copyKernel is the one kernel of an op writing each output element i of
// t from the C expression read (of i and the inputs).
func copyKernel(t graph.Type, read string) []graph.CUDASource {
	return []graph.CUDASource{{N: int64(t.Size()), Body: "out0[i] = " + read + ";\n"}}
}

// rowMajorStrides returns the strides of a row-major value of the given
// shape, in elements.
func rowMajorStrides(shape []int) []int {
	strides := make([]int, len(shape))
	s := 1
	for a := len(shape) - 1; a >= 0; a-- {
		strides[a] = s
		s *= shape[a]
	}
	return strides
}

// stridedIndexC is the C expression (long long) of Σ coordinate a of
// element i of a row-major value of the given shape × strides[a]: the
// offset of that element in a value laid out with those strides. Axes of
// size 1 or stride 0 add nothing.
func stridedIndexC(shape, strides []int) string {
	own := rowMajorStrides(shape)
	var terms []string
	for a, d := range shape {
		if d == 1 || strides[a] == 0 {
			continue
		}
		coord := fmt.Sprintf("i / %dLL %% %dLL", own[a], d)
		if a == 0 {
			coord = fmt.Sprintf("i / %dLL", own[a])
		}
		terms = append(terms, fmt.Sprintf("(%s) * %dLL", coord, strides[a]))
	}
	if len(terms) == 0 {
		return "0"
	}
	return strings.Join(terms, " + ")
}

// axisSplitC declares, for element i of a value whose axis holds dim
// elements each followed by inner, the C long longs o (the index over the
// axes before it), c (the index along it) and r (the offset within
// inner).
func axisSplitC(dim, inner int) string {
	return fmt.Sprintf("const long long o = i / %dLL, c = i / %dLL %% %dLL, r = i %% %dLL;\n",
		dim*inner, inner, dim, inner)
}

// axisReadC is the C expression of the element an (o, c, r) of axisSplitC
// reads from input in: the element at index c+shift along an axis of dim
// elements each followed by inner.
func axisReadC(in, dim, inner, shift int) string {
	sign := "+"
	if shift < 0 {
		sign, shift = "-", -shift
	}
	return fmt.Sprintf("in%d[o * %dLL + (c %s %dLL) * %dLL + r]", in, dim*inner, sign, shift, inner)
}

// CUDA is BroadcastTo's GPU kernel: each output element reads the input
// element it repeats. (A broadcast that adds no elements runs as a copy.)
func (op broadcastToOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil {
		return nil, err
	}
	return copyKernel(t, "in0["+BroadcastIndexC(in[0], t.Shape)+"]"), nil
}

// CUDA is Transpose's GPU kernel: output axis a steps through the input
// with the stride of input axis perm[a].
func (op transposeOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil {
		return nil, err
	}
	inStrides := rowMajorStrides(in[0].Shape)
	strides := make([]int, t.Rank())
	for a, p := range op.perm.dims[:op.perm.rank] {
		strides[a] = inStrides[p]
	}
	return copyKernel(t, "in0["+stridedIndexC(t.Shape, strides)+"]"), nil
}

// CUDA is Slice's GPU kernel: output index c along the axis reads the
// input's index start + c.
func (op sliceOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil {
		return nil, err
	}
	axis, _ := graph.NormalizeAxis(op.axis, t.Rank()) // valid: Type took it
	_, dim, inner := axisSpan(in[0].Shape, axis)
	src := copyKernel(t, axisReadC(0, dim, inner, op.start))
	src[0].Body = axisSplitC(op.end-op.start, inner) + src[0].Body
	return src, nil
}

// CUDA is Pad's GPU kernel: output index c along the axis reads the
// input's index c - before, or is zero outside the input.
func (op padOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil {
		return nil, err
	}
	axis, _ := graph.NormalizeAxis(op.axis, t.Rank()) // valid: Type took it
	_, dim, inner := axisSpan(in[0].Shape, axis)
	if dim == 0 {
		return copyKernel(t, "0"), nil
	}
	read := fmt.Sprintf("c >= %dLL && c < %dLL ? %s : 0", op.before, op.before+dim, axisReadC(0, dim, inner, -op.before))
	src := copyKernel(t, read)
	src[0].Body = axisSplitC(op.before+dim+op.after, inner) + src[0].Body
	return src, nil
}

// CUDA is Concat's GPU kernel: output index c along the axis reads the
// input whose span of the axis holds it.
func (op concatOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil {
		return nil, err
	}
	axis, _ := graph.NormalizeAxis(op.axis, t.Rank()) // valid: Type took it
	_, total, inner := axisSpan(t.Shape, axis)
	var b strings.Builder
	b.WriteString(axisSplitC(total, inner))
	at := 0
	for k, x := range in {
		dim := x.Shape[axis]
		if dim == 0 {
			continue
		}
		if at+dim < total {
			fmt.Fprintf(&b, "if (c < %dLL) ", at+dim)
		}
		fmt.Fprintf(&b, "{ out0[i] = %s; }", axisReadC(k, dim, inner, -at))
		at += dim
		if at < total {
			b.WriteString(" else ")
		} else {
			b.WriteString("\n")
		}
	}
	return []graph.CUDASource{{N: int64(t.Size()), Body: b.String()}}, nil
}

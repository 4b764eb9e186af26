package cuda

import (
	"fmt"
	"strings"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// FusedSource returns the CUDA C source of a kernel named name computing
// the fused op op (a compiler's elementwise fusion group) on inputs of the
// types in, in dtype (float32 or float64). The kernel takes the inputs'
// device pointers, then the outputs', then the number of elements n, and
// computes one element per thread in a grid-stride loop; an input
// broadcast to the outputs' shape is read through its strides.
//
// The source is self-contained: a prelude of helpers (ops.
// ElementwiseCPrelude) and the kernel. Defining NABLA_HOST before it turns
// the kernel into a plain C loop over the elements, for host compilers.
func FusedSource(name string, op *ops.FusedOp, in []graph.Type) (string, error) {
	if op == nil || len(in) != op.NumInputs() {
		return "", fmt.Errorf("cuda: FusedSource: %d input types for a fused op of %d inputs", len(in), op.NumInputs())
	}
	outs, err := op.Types(in)
	if err != nil {
		return "", fmt.Errorf("cuda: FusedSource: %v", err)
	}
	dtype := outs[0].DType
	if !graph.IsFloat(dtype) {
		return "", fmt.Errorf("cuda: FusedSource: %v outputs", dtype)
	}
	f32 := dtype == graph.Float32
	steps := op.Steps()
	// The shape every element is indexed in: the widest rank among the
	// inputs and outputs (the same elements, with leading 1s).
	var shape []int
	for _, t := range outs {
		if len(t.Shape) > len(shape) {
			shape = t.Shape
		}
	}
	for _, t := range in {
		if t.Size() == outs[0].Size() && len(t.Shape) > len(shape) {
			shape = t.Shape
		}
	}
	var b strings.Builder
	ctype := "double"
	if f32 {
		ctype = "float"
	}
	fmt.Fprintf(&b, "// %s: %s, %s, %d elements.\n", name, op.Name(), dtype, outs[0].Size())
	b.WriteString("#ifdef NABLA_HOST\n#include <math.h>\n#define DEVICE\n#define KERNEL\n#define FIRST 0\n#define STRIDE 1\n#else\n")
	b.WriteString("#define DEVICE __device__\n#define KERNEL extern \"C\" __global__\n")
	b.WriteString("#define FIRST ((long)blockIdx.x * blockDim.x + threadIdx.x)\n#define STRIDE ((long)gridDim.x * blockDim.x)\n#endif\n")
	fmt.Fprintf(&b, "typedef %s T;\n", ctype)
	b.WriteString(ops.ElementwiseCPrelude(f32))
	fmt.Fprintf(&b, "KERNEL void %s(", name)
	var params []string
	for i := range in {
		params = append(params, fmt.Sprintf("const T *__restrict__ in%d", i))
	}
	for k := range outs {
		params = append(params, fmt.Sprintf("T *__restrict__ out%d", k))
	}
	params = append(params, "long n")
	b.WriteString(strings.Join(params, ", ") + ") {\n")
	b.WriteString("\tfor (long i = FIRST; i < n; i += STRIDE) {\n")
	size := outs[0].Size()
	for i, t := range in {
		fmt.Fprintf(&b, "\t\tconst T x%d = in%d[%s];\n", i, i, index(t, shape, size))
	}
	operand := func(a int) string {
		if a < len(in) {
			return fmt.Sprintf("x%d", a)
		}
		return fmt.Sprintf("s%d", a-len(in))
	}
	for j, s := range steps {
		args := make([]string, len(s.Args))
		for k, a := range s.Args {
			args[k] = operand(a)
		}
		e, err := ops.ElementwiseC(s.Op, args, f32)
		if err != nil {
			return "", fmt.Errorf("cuda: FusedSource: step %d: %v", j, err)
		}
		fmt.Fprintf(&b, "\t\tconst T s%d = %s;\n", j, e)
	}
	for k, j := range op.Outputs() {
		fmt.Fprintf(&b, "\t\tout%d[i] = s%d;\n", k, j)
	}
	b.WriteString("\t}\n}\n")
	return b.String(), nil
}

// index is the C expression of the element of an input of type t that
// output element i reads: i itself, 0 for one element, or a sum over the
// axes it is not broadcast along.
func index(t graph.Type, shape []int, size int) string {
	switch t.Size() {
	case size:
		return "i"
	case 1:
		return "0"
	}
	var terms []string
	stride, off := 1, len(shape)-len(t.Shape)
	outStride := make([]int, len(shape))
	s := 1
	for a := len(shape) - 1; a >= 0; a-- {
		outStride[a] = s
		s *= shape[a]
	}
	for a := len(t.Shape) - 1; a >= 0; a-- {
		if n := t.Shape[a]; n != 1 {
			o := a + off
			terms = append(terms, fmt.Sprintf("(i / %d %% %d) * %d", outStride[o], shape[o], stride))
		}
		stride *= t.Shape[a]
	}
	return strings.Join(terms, " + ")
}

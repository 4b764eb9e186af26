package ops

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// CUDA is Cast's GPU kernel, one C conversion per element, for the casts
// that cannot fail: to a float dtype (rounding to nearest, even on ties,
// as Go converts; beyond float32's range to an infinity; NaN stays NaN),
// and int32 to int64. A cast to an integer dtype that does not hold every
// value of the input's (a float to an integer, int64 to int32) fails the
// CPU's run on a value out of range, which a kernel cannot do: it has no
// kernel and runs on the host.
func (op castOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil {
		return nil, err
	}
	from := in[0].DType
	if graph.IsInteger(op.to) && from != op.to && !(from == graph.Int32 && op.to == graph.Int64) {
		return nil, fmt.Errorf("Cast from %v to %v checks each value's range on the host", from, op.to)
	}
	return copyKernel(t, fmt.Sprintf("(%s)in0[i]", CType(op.to))), nil
}

// CType is the C type of a GPU kernel's elements of dtype: float, double,
// i32 or i64 (typedefs of the kernels' prelude in package cuda).
func CType(dtype tensor.Dtype) string {
	switch dtype {
	case graph.Float32:
		return "float"
	case graph.Int32:
		return "i32"
	case graph.Int64:
		return "i64"
	}
	return "double"
}

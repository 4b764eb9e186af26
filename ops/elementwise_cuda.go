package ops

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// elementwiseCUDA is the GPU kernel of one elementwise op: the kernel of
// the fused expression of that op alone.
func elementwiseCUDA(op graph.Op, in, out []graph.Type) ([]graph.CUDASource, error) {
	args := make([]int, len(in))
	for i := range args {
		args[i] = i
	}
	f, err := NewFused(in, []FusedStep{{Op: op, Args: args}})
	if err != nil {
		return nil, err
	}
	return f.CUDA(in, out)
}

// CUDA is the op's GPU kernel (graph.CUDAKernel), for float dtypes.
func (op unary) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	return elementwiseCUDA(op, in, out)
}

// CUDA is the op's GPU kernel (graph.CUDAKernel), for float dtypes, the
// inputs broadcasting.
func (op binary) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	return elementwiseCUDA(op, in, out)
}

// CUDA is the op's GPU kernel (graph.CUDAKernel), the inputs
// broadcasting: a fused expression's for float dtypes, a selection of its
// own for integers (whose cond may have another dtype).
func (op whereOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil || graph.IsFloat(t.DType) {
		return elementwiseCUDA(op, in, out)
	}
	read := func(k int) string { return fmt.Sprintf("in%d[%s]", k, BroadcastIndexC(in[k], t.Shape)) }
	return copyKernel(t, fmt.Sprintf("%s != 0 ? %s : %s", read(0), read(1), read(2))), nil
}

// CUDA is GradGate's GPU kernel: a copy of its value (the flags gate
// derivatives only, which are other ops).
func (op gradGateOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil {
		return nil, err
	}
	return copyKernel(t, "in0[i]"), nil
}

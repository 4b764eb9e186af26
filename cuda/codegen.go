package cuda

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// FusedSource returns the CUDA C source of a kernel named name computing
// the fused op op (a compiler's elementwise fusion group) on inputs of the
// types in, in dtype (float32 or float64). The kernel takes the inputs'
// device pointers, then the outputs', then the fault word and the site it
// would write there (see graph.CUDASource's FAULT), then the number of
// elements n, and
// computes one element per thread in a grid-stride loop; an input
// broadcast to the outputs' shape is read through its strides.
//
// The source is self-contained: the module prelude (the helpers of
// ops.ElementwiseCPrelude among them) and the kernel. Defining NABLA_HOST
// before it turns the kernel into a plain C loop over the elements, for
// host compilers.
func FusedSource(name string, op *ops.FusedOp, in []graph.Type) (string, error) {
	if op == nil || len(in) != op.NumInputs() {
		return "", fmt.Errorf("cuda: FusedSource: %d input types for a fused op of %d inputs", len(in), op.NumInputs())
	}
	outs, err := op.Types(in)
	if err != nil {
		return "", fmt.Errorf("cuda: FusedSource: %v", err)
	}
	srcs, err := op.CUDA(in, outs)
	if err != nil {
		return "", fmt.Errorf("cuda: FusedSource: %v", err)
	}
	k := newKernelDef(name, srcs[0], in, outs, true)
	return moduleSource(outs[0].DType == graph.Float32, []kernelDef{k}), nil
}

package ops

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// CUDA is the one-hot encoding's GPU kernel (graph.CUDAKernel): one work
// item per output element, 1 where its column is its row's label and 0
// elsewhere. A label that is not a class index, which makes Forward fail,
// gives its row NaN and marks the run as failed (FAULT).
func (op oneHotOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if err := checkFloatCUDA("OneHot output", out[0]); err != nil {
		return nil, err
	}
	body := fmt.Sprintf("const long long c = %s;\nif (c < 0) FAULT();\nout0[i] = c < 0 ? nb_red_nan() : (c == i %% %dLL ? (T)1 : (T)0);\n",
		classIndexC(in[0], fmt.Sprintf("in0[i / %dLL]", op.classes), op.classes), op.classes)
	return []graph.CUDASource{{N: int64(out[0].Size()), Body: body, Helpers: reduceHelpersC}}, nil
}

package ops

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// The GPU kernels of Gather and ScatterAdd: one work item per element of
// the gathered side (Gather's output, ScatterAdd's updates), which moves
// that element between its row there and the table's row its index
// names.
//
// A kernel cannot stop a run, as the CPU does on an index that is not a
// row index in [0,rows): there, Gather writes NaN for every element of the
// row it would have read, and ScatterAdd adds NaN to table row 0 for each
// element of the row it would have written, rather than read or write
// outside the table, and both mark the run as failed (FAULT), which the
// machine reports as an error naming the op.

// rowIndexC declares, for the index of flat row k (a C expression) of
// indices of type t into a table of rows rows, the C long long row (the
// row, 0 when invalid) and the int ok (whether the index is valid, as
// indexData.at decides: an integer in [0,rows), floats included).
func rowIndexC(t graph.Type, k string, rows int) string {
	if graph.IsInteger(t.DType) {
		return fmt.Sprintf("const long long idx = in1[%s];\nconst int ok = idx >= 0 && idx < %dLL;\nif (!ok) FAULT();\nconst long long row = ok ? idx : 0;\n", k, rows)
	}
	return fmt.Sprintf("const double idx = in1[%s];\nconst int ok = idx >= 0 && idx < %d.0 && idx == floor(idx);\nif (!ok) FAULT();\nconst long long row = ok ? (long long)idx : 0;\n", k, rows)
}

// rowMoveC declares, for work item i over the gathered side (the
// indices' shape followed by rows of rowLen elements), j (its place in
// its row) and, by rowIndexC, the table row it moves from or to.
func rowMoveC(indices graph.Type, rowLen, rows int) string {
	rowLen = max(rowLen, 1) // an empty row has no work items
	return fmt.Sprintf("const long long j = i %% %dLL;\n", rowLen) + rowIndexC(indices, fmt.Sprintf("i / %dLL", rowLen), rows)
}

// CUDA is Gather's GPU kernel: each output element copies the element of
// the table row its index names (NaN for an invalid index).
func (op gatherOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil {
		return nil, err
	}
	rowLen := graph.ShapeSize(in[0].Shape[1:])
	body := rowMoveC(in[1], rowLen, in[0].Shape[0]) +
		fmt.Sprintf("out0[i] = ok ? in0[row * %dLL + j] : (T)nan(\"\");\n", rowLen)
	return []graph.CUDASource{{N: int64(t.Size()), Body: body}}, nil
}

// CUDA is ScatterAdd's GPU kernels: the first zeroes the output, the
// second adds each update atomically into the row its index names (NaN
// into row 0 for an invalid index).
func (op scatterAddOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil {
		return nil, err
	}
	rowLen := graph.ShapeSize(t.Shape[1:])
	add := rowMoveC(in[1], rowLen, op.rows) +
		fmt.Sprintf("ATOMIC_ADD(&out0[row * %dLL + j], ok ? in0[i] : (T)nan(\"\"));\n", rowLen)
	return []graph.CUDASource{
		{N: int64(t.Size()), Body: "out0[i] = 0;\n"},
		{N: int64(in[0].Size()), Body: add},
	}, nil
}

package ops

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// The GPU kernels of the matrix helpers (graph.CUDAKernel): one work item
// per output element, its row and column found by index arithmetic with
// literal sizes. They only move elements, so they are the same C whatever
// the dtype. The factorisations and solves (Cholesky, TriangularSolve,
// Solve, Inverse, Det, SlogDet, QR, Eigh, SVD) and MatrixExp have none: a
// device path for them is cuSOLVER's (potrfBatched, getrfBatched,
// getrsBatched, geqrf and orgqr, syevjBatched, gesvdjBatched) and
// cuBLAS's trsmBatched and batched products, which the backend does not
// load yet, so a machine on a GPU runs them on the host, between device
// instructions, as it runs any op without a kernel.

// CUDA is Tril's and Triu's kernel: element (r, c) of each matrix is
// copied where the triangle keeps it and zeroed elsewhere.
func (op triangleOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil {
		return nil, err
	}
	_, rows, cols := matrices(t.Shape)
	rows, cols = max(rows, 1), max(cols, 1) // no element to write otherwise: no division by zero
	cmp := "<="
	if op.upper {
		cmp = ">="
	}
	keep := fmt.Sprintf("i %% %dLL - i / %dLL %% %dLL %s %dLL", cols, cols, rows, cmp, op.k)
	return copyKernel(t, "("+keep+") ? in0[i] : (T)0"), nil
}

// CUDA is Diagonal's kernel: element j of matrix b reads (b, j, j).
func (op diagonalOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil {
		return nil, err
	}
	_, rows, cols := matrices(in[0].Shape)
	d := max(min(rows, cols), 1)
	return copyKernel(t, fmt.Sprintf("in0[i / %dLL * %dLL + i %% %dLL * %dLL]", d, rows*cols, d, cols+1)), nil
}

// CUDA is DiagEmbed's kernel: element (b, r, c) is v's (b, r) on the
// diagonal and zero off it.
func (op diagEmbedOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(op, in, out)
	if err != nil {
		return nil, err
	}
	n := max(t.Shape[t.Rank()-1], 1)
	return copyKernel(t, fmt.Sprintf("i / %dLL %% %dLL == i %% %dLL ? in0[i / %dLL * %dLL + i %% %dLL] : (T)0", n, n, n, n*n, n, n)), nil
}

//go:build !openblas

package ops

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/gemm"
)

// The default matrix-product kernel is nabla's own (internal/kernel/gemm):
// packed blocks, assembly micro-kernels where the CPU has them, and e's
// threads. Building with -tags openblas replaces it with OpenBLAS's gemm
// (linalg_openblas.go).

// run computes the product with gemm.Mul on the operands as stored.
func (p *product[T]) run(e *graph.Exec) {
	lda, ldb := p.k, p.n
	if p.transA {
		lda = p.m
	}
	if p.transB {
		ldb = p.k
	}
	gemm.Mul(e.Kernel(), gemm.Product{
		TransA: p.transA, TransB: p.transB, Acc: p.acc,
		M: p.m, N: p.n, K: p.k, Lda: lda, Ldb: ldb, Ldc: p.n,
	}, p.a, p.b, p.c)
}

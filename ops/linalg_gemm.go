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
	gemm.Mul(e.Kernel(), p.gemmProduct(), p.a, p.b, p.c)
}

// runBatch computes batch products like p, product i on p.a[i·strideA:],
// p.b[i·strideB:] and p.c[i·m·n:], in one call of gemm.MulBatch: the
// bits of calling run on each.
func (p *product[T]) runBatch(e *graph.Exec, batch, strideA, strideB int) {
	gemm.MulBatch(e.Kernel(), p.gemmProduct(), batch, strideA, strideB, p.m*p.n, p.a, p.b, p.c)
}

// gemmProduct describes p for gemm: its operands as stored, rows packed.
func (p *product[T]) gemmProduct() gemm.Product {
	lda, ldb := p.k, p.n
	if p.transA {
		lda = p.m
	}
	if p.transB {
		ldb = p.k
	}
	return gemm.Product{
		TransA: p.transA, TransB: p.transB, Acc: p.acc,
		M: p.m, N: p.n, K: p.k, Lda: lda, Ldb: ldb, Ldc: p.n,
	}
}

// sharedProducts accumulates each of the first rows rows of a times b
// (k×n) onto the same row of c, reading b once (gemm.MulRows): each row
// gets the bits of its own one-row product.
func sharedProducts[T float](rows, k, n int, a *[gemm.MaxRows][]T, b []T, c *[gemm.MaxRows][]T) {
	gemm.MulRows(rows, n, k, a, b, n, c, true)
}

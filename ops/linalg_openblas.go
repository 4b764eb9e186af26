//go:build openblas

package ops

// With -tags openblas, matrix products call OpenBLAS through cgo (Debian:
// apt-get install libopenblas-dev): cblas_sgemm and cblas_dgemm, and their
// gemv for a product with one row or one column, on the machine's threads
// (vm.WithThreads).

/*
#cgo LDFLAGS: -lopenblas
#cgo noescape cblas_sgemm
#cgo nocallback cblas_sgemm
#cgo noescape cblas_dgemm
#cgo nocallback cblas_dgemm
#cgo noescape cblas_sgemv
#cgo nocallback cblas_sgemv
#cgo noescape cblas_dgemv
#cgo nocallback cblas_dgemv
#cgo noescape openblas_set_num_threads
#cgo nocallback openblas_set_num_threads
#cgo noescape openblas_get_num_threads
#cgo nocallback openblas_get_num_threads
#include <cblas.h>
*/
import "C"

import (
	"unsafe"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/gemm"
)

// run computes C with one OpenBLAS call on the operands as stored
// (row-major, leading dimension = stored row length). Empty products never
// reach OpenBLAS: a zero inner dimension leaves C zero (or as it was, when
// accumulating), and an empty slice has no element to point at.
//
// A product with one row or one column of C goes to gemv: this OpenBLAS's
// gemm packs the whole of the other operand first, which made a 1×64 by
// 64×64 product take 2 µs, slower than nabla's own (internal/kernel/gemm).
func (p *product[T]) run(e *graph.Exec) {
	if p.m == 0 || p.n == 0 || p.k == 0 {
		if !p.acc {
			clear(p.c)
		}
		return
	}
	useThreads(e.Threads())
	var beta C.float // 1 to accumulate onto C, 0 to overwrite it
	if p.acc {
		beta = 1
	}
	switch {
	case p.m == 1: // c = op(B)ᵀ·a, B stored k×n (n×k if transB)
		if p.transB {
			gemv(false, p.n, p.k, p.b, p.a, beta, p.c)
		} else {
			gemv(true, p.k, p.n, p.b, p.a, beta, p.c)
		}
	case p.n == 1: // c = op(A)·b, A stored m×k (k×m if transA)
		if p.transA {
			gemv(true, p.k, p.m, p.a, p.b, beta, p.c)
		} else {
			gemv(false, p.m, p.k, p.a, p.b, beta, p.c)
		}
	default:
		lda, ldb := p.k, p.n
		if p.transA {
			lda = p.m
		}
		if p.transB {
			ldb = p.k
		}
		m, n, k := C.blasint(p.m), C.blasint(p.n), C.blasint(p.k)
		ta, tb := cblasTrans(p.transA), cblasTrans(p.transB)
		a, b, c := unsafe.Pointer(&p.a[0]), unsafe.Pointer(&p.b[0]), unsafe.Pointer(&p.c[0])
		if unsafe.Sizeof(p.a[0]) == 4 {
			C.cblas_sgemm(C.CblasRowMajor, ta, tb, m, n, k,
				1, (*C.float)(a), C.blasint(lda), (*C.float)(b), C.blasint(ldb), beta, (*C.float)(c), n)
			return
		}
		C.cblas_dgemm(C.CblasRowMajor, ta, tb, m, n, k,
			1, (*C.double)(a), C.blasint(lda), (*C.double)(b), C.blasint(ldb), C.double(beta), (*C.double)(c), n)
	}
}

// runBatch computes batch products like p, product i on p.a[i·strideA:],
// p.b[i·strideB:] and p.c[i·m·n:], one call of run each.
func (p *product[T]) runBatch(e *graph.Exec, batch, strideA, strideB int) {
	for i := range batch {
		q := *p
		q.a = p.a[i*strideA : i*strideA+p.m*p.k]
		q.b = p.b[i*strideB : i*strideB+p.k*p.n]
		q.c = p.c[i*p.m*p.n : (i+1)*p.m*p.n]
		q.run(e)
	}
}

// useThreads has OpenBLAS run the next call on n threads, the machine's
// (vm.WithThreads; 1 with no Exec), where its own pool would use
// OPENBLAS_NUM_THREADS or one per core. OpenBLAS's count belongs to the
// process (openblas_set_num_threads), so it is set where it differs, and
// machines of different counts whose products run at the same moment
// share one of their counts: their values do not depend on it.
func useThreads(n int) {
	n = max(n, 1)
	if int(C.openblas_get_num_threads()) != n {
		C.openblas_set_num_threads(C.int(n))
	}
}

// gemv computes y = A·x + beta·y, or Aᵀ·x + beta·y when trans, for a
// rows×cols row-major A and contiguous x and y.
func gemv[T float](trans bool, rows, cols int, a, x []T, beta C.float, y []T) {
	t, r, c := cblasTrans(trans), C.blasint(rows), C.blasint(cols)
	pa, px, py := unsafe.Pointer(&a[0]), unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0])
	if unsafe.Sizeof(a[0]) == 4 {
		C.cblas_sgemv(C.CblasRowMajor, t, r, c, 1, (*C.float)(pa), c, (*C.float)(px), 1, beta, (*C.float)(py), 1)
		return
	}
	C.cblas_dgemv(C.CblasRowMajor, t, r, c, 1, (*C.double)(pa), c, (*C.double)(px), 1, C.double(beta), (*C.double)(py), 1)
}

func cblasTrans(trans bool) C.enum_CBLAS_TRANSPOSE {
	if trans {
		return C.CblasTrans
	}
	return C.CblasNoTrans
}

// sharedProducts accumulates each of the first rows rows of a times b
// (k×n) onto the same row of c, each as MatMul runs a one-row product
// here (OpenBLAS's gemv), so that each keeps that product's bits.
func sharedProducts[T float](rows, k, n int, a *[gemm.MaxRows][]T, b []T, c *[gemm.MaxRows][]T) {
	for i := range rows {
		p := product[T]{acc: true, m: 1, n: n, k: k, a: a[i], b: b, c: c[i]}
		p.run(nil)
	}
}

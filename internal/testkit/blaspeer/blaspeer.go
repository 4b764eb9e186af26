//go:build openblas

// Package blaspeer calls OpenBLAS, the peer nabla's matrix product is
// measured against (build with -tags openblas; Debian: apt-get install
// libopenblas-dev). Nothing outside benchmarks and tests uses it.
package blaspeer

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import "unsafe"

// Gemm computes C = A·B with cblas_sgemm or cblas_dgemm: row-major, no
// transposes, contiguous operands (A m×k, B k×n, C m×n).
func Gemm[E float32 | float64](m, n, k int, a, b, c []E) {
	pa, pb, pc := unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&c[0])
	M, N, K := C.blasint(m), C.blasint(n), C.blasint(k)
	var z E
	if unsafe.Sizeof(z) == 4 {
		C.cblas_sgemm(C.CblasRowMajor, C.CblasNoTrans, C.CblasNoTrans, M, N, K,
			1, (*C.float)(pa), K, (*C.float)(pb), N, 0, (*C.float)(pc), N)
		return
	}
	C.cblas_dgemm(C.CblasRowMajor, C.CblasNoTrans, C.CblasNoTrans, M, N, K,
		1, (*C.double)(pa), K, (*C.double)(pb), N, 0, (*C.double)(pc), N)
}

// GemmT computes C = op(A)·op(B), or adds it to C when acc, with
// cblas_sgemm or cblas_dgemm on row-major operands as stored: op
// transposes A (stored k×m) when transA and B (stored n×k) when transB;
// lda, ldb and ldc are the stored rows' lengths.
func GemmT[E float32 | float64](transA, transB, acc bool, m, n, k int, a []E, lda int, b []E, ldb int, c []E, ldc int) {
	pa, pb, pc := unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&c[0])
	M, N, K := C.blasint(m), C.blasint(n), C.blasint(k)
	ta, tb := trans(transA), trans(transB)
	var beta C.float
	if acc {
		beta = 1
	}
	var z E
	if unsafe.Sizeof(z) == 4 {
		C.cblas_sgemm(C.CblasRowMajor, ta, tb, M, N, K,
			1, (*C.float)(pa), C.blasint(lda), (*C.float)(pb), C.blasint(ldb), beta, (*C.float)(pc), C.blasint(ldc))
		return
	}
	C.cblas_dgemm(C.CblasRowMajor, ta, tb, M, N, K,
		1, (*C.double)(pa), C.blasint(lda), (*C.double)(pb), C.blasint(ldb), C.double(beta), (*C.double)(pc), C.blasint(ldc))
}

func trans(t bool) C.enum_CBLAS_TRANSPOSE {
	if t {
		return C.CblasTrans
	}
	return C.CblasNoTrans
}

// Gemv computes y = A·x (A m×n row-major) with cblas_sgemv or
// cblas_dgemv, or y = Aᵀ·x when transposed.
func Gemv[E float32 | float64](transposed bool, m, n int, a, x, y []E) {
	pa, px, py := unsafe.Pointer(&a[0]), unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0])
	t := trans(transposed)
	var z E
	if unsafe.Sizeof(z) == 4 {
		C.cblas_sgemv(C.CblasRowMajor, t, C.blasint(m), C.blasint(n), 1, (*C.float)(pa), C.blasint(n), (*C.float)(px), 1, 0, (*C.float)(py), 1)
		return
	}
	C.cblas_dgemv(C.CblasRowMajor, t, C.blasint(m), C.blasint(n), 1, (*C.double)(pa), C.blasint(n), (*C.double)(px), 1, 0, (*C.double)(py), 1)
}

// Threads returns how many threads OpenBLAS's calls use
// (openblas_get_num_threads): OPENBLAS_NUM_THREADS, or one per core.
func Threads() int { return int(C.openblas_get_num_threads()) }

// SetThreads sets how many threads OpenBLAS's calls use, in this process
// and in nabla's openblas build (openblas_set_num_threads).
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

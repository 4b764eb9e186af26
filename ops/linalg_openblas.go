//go:build openblas

package ops

// With -tags openblas, matrix products call OpenBLAS's cblas_sgemm and
// cblas_dgemm through cgo (Debian: apt-get install libopenblas-dev).

/*
#cgo LDFLAGS: -lopenblas
#cgo noescape cblas_sgemm
#cgo nocallback cblas_sgemm
#cgo noescape cblas_dgemm
#cgo nocallback cblas_dgemm
#include <cblas.h>
*/
import "C"

import "unsafe"

// run computes C with one call of OpenBLAS's row-major gemm, with the
// leading dimensions of the operands as stored. Empty products never reach
// OpenBLAS: a zero inner dimension leaves C zero, and an empty slice has
// no element to point at.
func (p *gemm[T]) run() {
	if p.m == 0 || p.n == 0 || p.k == 0 {
		clear(p.c)
		return
	}
	transA, lda := C.enum_CBLAS_TRANSPOSE(C.CblasNoTrans), p.k
	if p.transA {
		transA, lda = C.CblasTrans, p.m
	}
	transB, ldb := C.enum_CBLAS_TRANSPOSE(C.CblasNoTrans), p.n
	if p.transB {
		transB, ldb = C.CblasTrans, p.k
	}
	m, n, k := C.blasint(p.m), C.blasint(p.n), C.blasint(p.k)
	a, b, c := unsafe.Pointer(&p.a[0]), unsafe.Pointer(&p.b[0]), unsafe.Pointer(&p.c[0])
	var z T
	if unsafe.Sizeof(z) == 4 {
		C.cblas_sgemm(C.CblasRowMajor, transA, transB, m, n, k,
			1, (*C.float)(a), C.blasint(lda), (*C.float)(b), C.blasint(ldb), 0, (*C.float)(c), n)
		return
	}
	C.cblas_dgemm(C.CblasRowMajor, transA, transB, m, n, k,
		1, (*C.double)(a), C.blasint(lda), (*C.double)(b), C.blasint(ldb), 0, (*C.double)(c), n)
}

//go:build openblas && cgo

package main

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
void openblas_set_num_threads(int num_threads);
*/
import "C"

func unavailable() string { return "" }

// setThreads sets the number of threads OpenBLAS uses.
func setThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// newProduct returns a call computing C = A·B for fresh n×n operands.
func newProduct(dtype string, n int) func() {
	if dtype == "f32" {
		a, b, c := operand[float32](n, 1), operand[float32](n, 2), make([]float32, n*n)
		return func() { sgemm(n, a, b, c) }
	}
	a, b, c := operand[float64](n, 1), operand[float64](n, 2), make([]float64, n*n)
	return func() { dgemm(n, a, b, c) }
}

// sgemm sets c = a·b for n×n row-major float32 matrices.
func sgemm(n int, a, b, c []float32) {
	C.cblas_sgemm(C.CblasRowMajor, C.CblasNoTrans, C.CblasNoTrans, C.blasint(n), C.blasint(n), C.blasint(n),
		1, (*C.float)(&a[0]), C.blasint(n), (*C.float)(&b[0]), C.blasint(n), 0, (*C.float)(&c[0]), C.blasint(n))
}

// dgemm sets c = a·b for n×n row-major float64 matrices.
func dgemm(n int, a, b, c []float64) {
	C.cblas_dgemm(C.CblasRowMajor, C.CblasNoTrans, C.CblasNoTrans, C.blasint(n), C.blasint(n), C.blasint(n),
		1, (*C.double)(&a[0]), C.blasint(n), (*C.double)(&b[0]), C.blasint(n), 0, (*C.double)(&c[0]), C.blasint(n))
}

//go:build openblas && cgo

package main

import (
	"math"
	"testing"
)

// The measured calls compute A·B: checked against a naive triple loop.
func TestProducts(t *testing.T) {
	for _, n := range []int{1, 5, 17, 64} {
		a, b := operand[float64](n, 1), operand[float64](n, 2)
		c := make([]float64, n*n)
		dgemm(n, a, b, c)
		a32, b32 := operand[float32](n, 1), operand[float32](n, 2)
		c32 := make([]float32, n*n)
		sgemm(n, a32, b32, c32)
		for i := range n {
			for j := range n {
				want := 0.0
				for k := range n {
					want += a[i*n+k] * b[k*n+j]
				}
				if got := c[i*n+j]; math.Abs(got-want) > 1e-12*float64(n) {
					t.Errorf("n=%d: dgemm C[%d][%d] = %v, want %v", n, i, j, got, want)
				}
				if got := float64(c32[i*n+j]); math.Abs(got-want) > 1e-5*float64(n) {
					t.Errorf("n=%d: sgemm C[%d][%d] = %v, want %v", n, i, j, got, want)
				}
			}
		}
	}
}

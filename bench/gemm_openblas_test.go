//go:build openblas

package bench

// exactProducts: OpenBLAS's gemv (a one-row product) and gemm sum in
// different orders, so a row computed alone and inside a batch differ in
// the last places.
const exactProducts = false

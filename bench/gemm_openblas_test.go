//go:build openblas

package bench

import "github.com/nabla-go/nabla/internal/testkit/blaspeer"

// exactProducts: OpenBLAS's gemv (a one-row product) and gemm sum in
// different orders, so a row computed alone and inside a batch differ in
// the last places.
const exactProducts = false

// peerThreads sets how many threads OpenBLAS's products use and returns
// the number it replaces: a benchmark on n threads gives OpenBLAS n, so
// that its threads=1 is one thread, as nabla's is.
func peerThreads(n int) int {
	prev := blaspeer.Threads()
	blaspeer.SetThreads(n)
	return prev
}

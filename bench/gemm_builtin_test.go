//go:build !openblas

package bench

// exactProducts says that a one-row product and the same row inside a
// larger product round alike: true of nabla's own GEMM, not of OpenBLAS
// (-tags openblas), whose gemv and gemm sum in different orders.
const exactProducts = true

// peerThreads does nothing in the default build, whose products are
// nabla's own, on the machine's threads; it returns n.
func peerThreads(n int) int { return n }

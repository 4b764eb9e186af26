// Package ops holds nabla's built-in ops: for each, a builder function
// (ops.MatMul, ops.Tanh, ...), shape and dtype inference, float32 and float64
// kernels that work on the tensors' backing slices, and a symbolic Backward
// written with other ops, so every built-in op can be differentiated to any
// order.
//
// Files group ops by family: elementwise binary and unary ops, linear
// algebra, shape ops, reductions, neural-network ops, convolutions,
// pooling and activations.
//
// Matrix products (MatMul and the products inside the convolutions) run
// nabla's own GEMM, package internal/kernel/gemm: packed blocks, micro-kernels in
// assembly generated with avo (AVX-512, or AVX2 with FMA, chosen at start-up
// from what the CPU offers) and a portable Go kernel elsewhere or with the
// purego build tag, on the machine's threads. Built with -tags openblas
// (cgo and Debian's libopenblas-dev), MatMul and its fused forms call
// OpenBLAS's gemm and gemv instead, on OPENBLAS_NUM_THREADS threads; the
// convolutions keep nabla's GEMM.
package ops

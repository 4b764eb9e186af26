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
// Matrix products run a pure-Go kernel over gonum's BLAS by default. Built
// with -tags openblas (cgo and Debian's libopenblas-dev), they call
// OpenBLAS's gemm and gemv instead; OPENBLAS_NUM_THREADS sets its threads.
package ops

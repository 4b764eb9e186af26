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
// OpenBLAS's gemm and gemv instead, on the machine's threads
// (vm.WithThreads, which OpenBLAS is given before each product where it
// changed); the convolutions keep nabla's GEMM.
//
// Random ops (RandomUniform, RandomNormal, RandomBernoulli, RandomInt,
// RandomCategorical, RandomGamma, RandomPermutation) draw from
// Philox-4x32-10 streams, the counter-based generator of cuRAND and
// PyTorch's CUDA generator: every element is a pure function of (seed,
// stream id, step, element index), so a draw is the same on any number of
// threads, and the GPU backend's kernels repeat it bit for bit (every
// random op; the float64 ones through fixed procedures for log, exp, sine
// and cosine, see normalPair64). A Generator owns the
// randomness of a graph: its step is a parameter that the program's
// updates advance by one each run (so two runs never repeat their draws;
// compile.Compile refuses a program that draws without them, unless
// compile.WithFixedDraws asks to repeat, and likewise a loop body that
// draws at a step none of its carries changes, or two ops drawing one
// stream at one step), and each sampling node it builds gets a stream of
// its own when it is built (so two nodes never share their bits). Random ops have no gradient; reparameterised samples
// (μ + σ·ε) carry gradients through the ops applied to the draw.
package ops

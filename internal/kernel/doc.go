// Package kernel is the ground floor of nabla: its subpackages hold the
// numerical kernels that the ops run (the matrix product, the direct
// convolution of few channels, vectorised elementwise arithmetic and
// transcendental functions, the fused instructions' kernel) and the worker pool that spreads them over the
// cores. They know nothing of the IR: no package below this one imports
// graph or any other package of nabla outside internal/kernel, and a test
// here keeps it so.
package kernel

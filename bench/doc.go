// Package bench measures nabla's performance workloads (W1, a training
// step; W2, elementwise ops; W3, second derivatives; GEMM) and compares
// nabla with Gorgonia on the same work, checking that both compute the same
// first-order gradients. It holds tests and benchmarks only; its commands
// measure the peers and the machine (bench/blas: OpenBLAS's gemm;
// bench/peak: the FMA peak; bench/summary: the table of ratios), the
// PyTorch scripts are in bench/torch, and bench/run runs everything. See
// README.md for the figures. Gorgonia is imported here and nowhere else in
// the module.
package bench

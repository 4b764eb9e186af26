// Package cuda is nabla's GPU backend: machines run compiled programs on an
// NVIDIA GPU with vm.New(prog, vm.OnDevice(dev)), dev from Open.
//
// It needs no cgo and no CUDA headers: the driver (libcuda.so.1), NVRTC
// and cuBLAS are loaded at run time through purego, and a missing one is
// an error from Open naming it. Of nabla's packages only this one and
// dist (which loads MPI) import purego, so every program that imports
// neither stays a static binary.
//
// A program is lowered to a plan (plan.go): each elementwise fusion group
// and each op implementing graph.CUDAKernel becomes a CUDA C kernel
// (kernel.go), compiled once per program by NVRTC and cached on disk by
// source, architecture and NVRTC version; matrix products become cuBLAS
// calls, row-major mapped by swapping operands (matmul.go), and so do most
// convolutions, around kernels unfolding or folding the images (conv.go);
// a long sum with few outputs (a channel's statistics, a bias gradient)
// is split into partial sums over chunks, many work items at once, and a
// sum of the partials, in a scratch buffer the plan's kernels share;
// reshapes become copies; an op implementing graph.Decomposer runs as its decomposition;
// anything else runs on the host, with its inputs and outputs copied.
// Parameters and every value live in device memory, allocated once; a run
// with no host step is, after the first, one replay of a CUDA graph.
//
// The backend interface (backend.go) has two implementations: the GPU
// (gpu*.go, driver.go, nvrtc.go, cublas.go) and a host stand-in
// (host.go, OpenHost) that compiles the very kernel sources with the C
// compiler and runs them one work item after another, so that plans,
// kernels and the machine contract are tested on machines without a GPU.
// It compiles each module once, keeping the library on disk beside
// NVRTC's images (hostcache.go): a second test run compiles nothing.
// CheckOp compares any op on a device with the CPU; the conformance test
// runs it over every built-in op.
package cuda

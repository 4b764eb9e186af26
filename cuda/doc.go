// Package cuda is the beginning of nabla's GPU backend: it writes the CUDA C
// kernels that a GPU machine will compile with NVRTC. So far it generates
// one kernel per elementwise fusion group of a compiled program
// (FusedSource); a host-compiled copy of each kernel is checked against the
// CPU kernels element for element, so the generator is tested on machines
// without a GPU. Available loads the NVIDIA driver at run time through
// purego (no cgo); this is the only package of nabla that imports purego.
// Device memory, cuBLAS and the GPU machine are not built yet.
package cuda

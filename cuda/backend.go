package cuda

import (
	"unsafe"

	"github.com/nabla-go/nabla/graph"
)

// ptr is an address in a backend's memory: a device pointer on the GPU.
type ptr uint64

// backend is where a loaded program's memory lives and its steps run: the
// GPU, through the driver, NVRTC and cuBLAS (gpuBackend), or the host,
// through the C compiler (hostBackend), which runs the very kernels the
// GPU would, one thread after another, so that everything above the
// backend is tested on machines without a GPU.
//
// Work is queued in order: launch, gemm and copy return before the work
// is done; download and sync wait for everything queued before them
// (watched, where it holds a watched library call: see watch.go).
type backend interface {
	String() string
	// alloc returns bytes of device memory, aligned to 256 bytes.
	alloc(bytes int64) (ptr, error)
	free(p ptr) error
	// upload copies bytes from host memory at src to dst. src may be
	// reused once upload returns.
	upload(dst ptr, src unsafe.Pointer, bytes int64) error
	// download copies bytes from src to host memory at dst, after all
	// queued work.
	download(dst unsafe.Pointer, src ptr, bytes int64) error
	// copy copies bytes from src to dst on the device (queued).
	copy(dst, src ptr, bytes int64) error
	// compile compiles a CUDA C source (see kernelPrelude) holding
	// kernels declared with KERNEL.
	compile(source string) (module, error)
	// launch queues kernel f on threads threads (FIRST..n by STRIDE in
	// the kernel); args are the kernel's parameters in order, each a
	// pointer or a 64-bit integer (C long long).
	launch(f function, threads int64, args []uint64) error
	// gemm queues a matrix product (see gemmCall).
	gemm(g *gemmCall) error
	// mapped returns bytes of host memory that kernels can write (at
	// dev) and the host can read (at host) once the work is synced; it
	// is zeroed, and freed by close.
	mapped(bytes int64) (dev ptr, host unsafe.Pointer, err error)
	// sync waits for all queued work and reports its first error.
	sync() error
	// record returns a function that queues the work run queues, faster
	// where the backend can: run is called at most once, during record,
	// and what it queues then may be captured rather than done (a CUDA
	// graph); replay does it. The host backend returns run itself.
	record(run func() error) (replay func() error, err error)
	// libraries describes the device to the ops that run as library
	// calls (graph.LibraryOp).
	libraries() *libraries
	// callLibrary queues a library call on the buffers a gives (see
	// graph.LibraryCall).
	callLibrary(c *graph.LibraryCall, a libraryArgs) error
	// watch makes the waits for the work queued so far watch a library
	// call's work (watch.go), until one is done.
	watch(w *watch)
	close() error
}

// module is a compiled source's kernels.
type module interface {
	function(name string) (function, error)
}

// function is a compiled kernel, as its backend knows it.
type function any

// gemmCall is a (batched) matrix product with cuBLAS's column-major
// conventions: C = op(A)·op(B) + beta·C for each of batch matrices, where
// op(A) is m×k, op(B) is k×n and C m×n; A, B and C are column-major with
// leading dimensions lda, ldb, ldc, and matrix j of each starts stride*j
// elements after the first. beta is 0 or 1. Row-major products are mapped
// onto it by swapping operands (see plan's matmul).
type gemmCall struct {
	f32                       bool
	transA, transB            bool
	m, n, k                   int
	a, b, c                   ptr
	lda, ldb, ldc             int
	strideA, strideB, strideC int64
	batch                     int
	beta                      float64
}

package graph

// CUDAKernel is the optional interface of an op with a GPU kernel written
// in CUDA C: a machine on a GPU (package cuda) compiles it with NVRTC and
// runs it there, instead of copying the op's inputs to the host and
// running Forward. Built-in ops and users' custom ops implement it alike;
// the cuda package's conformance test checks any op's kernel against its
// Forward.
//
// An op implementing MultiOp returns the kernels computing all of its
// outputs; out then has one type per output.
type CUDAKernel interface {
	// CUDA returns the kernels computing the outputs, of types out, from
	// inputs of types in, run one after another; or an error when these
	// types have no kernel (the op then runs on the host).
	CUDA(in []Type, out []Type) ([]CUDASource, error)
}

// CUDASource is one kernel of a CUDAKernel: C statements run once for
// each work item i in [0, N), in parallel and in no particular order.
//
// The statements see the inputs as in0, in1, … (const pointers to their
// elements, row-major and contiguous), the outputs as out0, out1, …, the
// work item as i and the number of items as n (both long long). T is the
// op's floating-point type (float or double; the outputs' first float
// dtype, else the inputs', else double); i32 and i64 are the integer
// dtypes' element types. An output may share its memory with an input
// that InPlacer names. The math functions of CUDA (exp, expf, …) and the
// helpers of ops.ElementwiseCPrelude (nb_max, nb_sigmoid, …) may be
// called; ATOMIC_ADD(p, v) adds v to *p atomically. FAULT() reports
// inputs Forward would refuse (an index or label out of range): the run
// fails with an error naming the op, on the device's next synchronisation
// at the latest (Run with WithNaNCheck, Value, Get); the kernel must
// still write its outputs and stay inside its buffers. The same source runs
// on the host, one item after another, when the cuda package tests it
// without a GPU: it must not rely on CUDA's thread indices or shared
// memory.
//
// A long reduction with few outputs runs as several kernels: partial
// sums over chunks of the terms, many items at once, written to a
// scratch buffer, then a kernel adding each output's partial sums. The
// scratch is Scratch doubles, seen by every kernel of the op as
// scratch (a double pointer); an op's kernels run in order, so one
// kernel reads what the one before wrote there. Its contents are
// undefined when the op's first kernel starts.
type CUDASource struct {
	N    int64  // work items
	Body string // C statements for item i
	// Scratch is the number of doubles of scratch memory the kernel
	// uses (0 for none).
	Scratch int64
	// Work is the most loop iterations one item runs, those of the
	// helpers it calls included and nested loops multiplied: the serial
	// work of a GPU thread, which plans show. A kernel without a loop
	// leaves it 0.
	Work int64
	// Helpers are C definitions the body calls, placed before the
	// kernel; mark functions DEVICE and give them names of the op's own.
	Helpers string
}

// Decomposer is the optional interface of an op whose output other ops
// compute: a machine on a device that has no kernel for the op runs the
// decomposition instead (nn.LinearFunction is a matrix product and a sum,
// run on the GPU as cuBLAS's product).
type Decomposer interface {
	// Decompose builds, from the op's inputs (nodes of a graph of their
	// own, typed as the op's inputs are), nodes computing its outputs.
	Decompose(in []*Node) ([]*Node, error)
}

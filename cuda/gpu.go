package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// gpuBackend is the backend on an NVIDIA GPU: the driver API for memory,
// kernels and CUDA graphs, NVRTC to compile kernels, cuBLAS for matrix
// products, all loaded at run time through purego.
//
// Threading: a CUDA context is current per OS thread, and a goroutine may
// move between threads, so every method locks its goroutine to its thread
// and makes the device's primary context current on it
// (runtime.LockOSThread, cuCtxSetCurrent: about 0.2 µs together) and
// unlocks it on return; the methods may so be called from any goroutine,
// though not from two at once (the backend is one queue: calls must be
// serialized by the caller). record keeps its thread locked while run
// runs, as capturing requires.
//
// All work is queued on one stream of the backend's own, which does not
// synchronize with the legacy default stream; cuBLAS is bound to it, and
// to a workspace of the backend's, so that its calls can be captured.
type gpuBackend struct {
	d     *driver
	nv    *nvrtc
	blas  *cublas
	label string

	dev     int32
	ordinal int     // the index Open was given
	ctx     uintptr // the device's primary context, retained
	stream  uintptr
	handle  uintptr // cuBLAS's
	sms     int     // streaming multiprocessors
	cc      int     // compute capability, 90 for 9.0
	arch    string  // what NVRTC compiles for: sm_90 (CUBIN) or compute_XY (PTX)
	cubin   bool

	workspace ptr // cuBLAS's workspace

	// stage is pinned host memory that uploads and downloads go through:
	// uploads are written at stageOff onward, and queued copies read it
	// until the stream passes them (see upload).
	stage    unsafe.Pointer
	stageCap int64
	stageOff int64

	// params is pinned host memory holding launch's kernel arguments:
	// paramCap values, then paramCap pointers, one to each value (the
	// driver copies the values when the launch is queued).
	params   unsafe.Pointer
	paramCap int
	// scalars is pinned host memory holding gemm's alpha and beta: the
	// doubles 1 and 0, then the floats 1 and 0 (see scalar).
	scalars unsafe.Pointer
	// calls makes the calls a run makes, allocating nothing.
	calls cCall
	// mappedHost is the pinned memory mapped gave out, freed by close.
	mappedHost []unsafe.Pointer

	images    *imageCache // compiled kernels
	modules   map[string]*gpuModule
	graphs    []uintptr // instantiated CUDA graphs, destroyed by close
	capturing bool
	// captureErr is why the last record could not capture a graph (its
	// replay runs run again), or nil.
	captureErr error
	closed     bool
	watcher    // the watched library calls queued (watch.go)
}

const (
	// workspaceBytes is cuBLAS's workspace: 32 MiB, what cuBLAS asks for
	// on Hopper.
	workspaceBytes = 32 << 20
	// minStage and maxStage bound the staging buffer: it grows to hold
	// the largest transfer up to maxStage; larger ones go through it in
	// parts.
	minStage = 4 << 20
	maxStage = 64 << 20
)

// errCapturing is the error of a method that cannot be captured into a
// graph (allocating, freeing, transfers to or from the host, waiting),
// called while record captures: record then replays by running again.
var errCapturing = errors.New("cuda: not allowed while record captures a CUDA graph (alloc, free, upload, download and sync are not captured)")

// errClosed is the error of a method called after close.
var errClosed = errors.New("cuda: the GPU backend is closed")

// newGPUBackend opens the GPU of index ordinal (0 for the first): it
// retains the device's primary context (the one the CUDA runtime, and so
// cuBLAS, uses), creates a non-blocking stream, a cuBLAS handle on that
// stream in host pointer mode with a 32 MiB workspace, and pinned host
// buffers for transfers and launch arguments. It loads the driver, NVRTC
// and cuBLAS (see libraryDirs for where they are looked for) and fails
// with an error naming what is missing.
func newGPUBackend(ordinal int) (*gpuBackend, error) {
	d, err := load()
	if err != nil {
		return nil, err
	}
	nv, err := loadNVRTC()
	if err != nil {
		return nil, err
	}
	blas, err := loadCuBLAS()
	if err != nil {
		return nil, err
	}
	return openGPU(d, nv, blas, images, ordinal)
}

// openGPU is newGPUBackend with the libraries loaded, and the cache of
// compiled kernels.
func openGPU(d *driver, nv *nvrtc, blas *cublas, cache *imageCache, ordinal int) (_ *gpuBackend, err error) {
	if len(d.missing) > 0 {
		return nil, fmt.Errorf("cuda: %s has no %s: the driver is too old for the GPU backend", driverLibrary, strings.Join(d.missing, ", "))
	}
	var count int32
	if err := d.check("cuDeviceGetCount", "", d.cuDeviceGetCount(&count)); err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= int(count) {
		return nil, fmt.Errorf("cuda: no GPU %d: the driver sees %d", ordinal, count)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g := &gpuBackend{d: d, nv: nv, blas: blas, images: cache, modules: map[string]*gpuModule{}}
	defer func() {
		if err != nil {
			g.release()
		}
	}()
	if err := g.open(ordinal); err != nil {
		return nil, err
	}
	return g, nil
}

// open makes b's context, stream, buffers and cuBLAS handle, with its
// thread locked.
func (b *gpuBackend) open(ordinal int) error {
	d := b.d
	if err := d.check("cuDeviceGet", fmt.Sprint(ordinal), d.cuDeviceGet(&b.dev, int32(ordinal))); err != nil {
		return err
	}
	b.ordinal = ordinal
	var attrs [3]int32
	for i, a := range []int32{cuDeviceAttributeComputeCapabilityMajor, cuDeviceAttributeComputeCapabilityMinor, cuDeviceAttributeMultiprocessorCount} {
		if err := d.check("cuDeviceGetAttribute", fmt.Sprint(a), d.cuDeviceGetAttribute(&attrs[i], a, b.dev)); err != nil {
			return err
		}
	}
	b.cc, b.sms = int(10*attrs[0]+attrs[1]), int(attrs[2])
	var ok bool
	if b.arch, b.cubin, ok = compileTarget(b.cc, b.nv.supportedArchs()); !ok {
		return fmt.Errorf("cuda: %s (NVRTC %s) compiles for no architecture as old as the GPU's, sm_%d", b.nv.path, b.nv.version, b.cc)
	}
	var name [256]byte
	if d.cuDeviceGetName(&name[0], int32(len(name)), b.dev) != 0 {
		name[0] = 0
	}
	b.label = fmt.Sprintf("cuda:%d (%s, sm_%d, %d SMs)", ordinal, goString(unsafe.Pointer(&name[0])), b.cc, b.sms)

	if err := d.check("cuDevicePrimaryCtxRetain", "", d.cuDevicePrimaryCtxRetain(&b.ctx, b.dev)); err != nil {
		return err
	}
	if err := d.setCurrent(b.ctx); err != nil {
		return err
	}
	if err := d.check("cuStreamCreate", "non-blocking", d.cuStreamCreate(&b.stream, cuStreamNonBlocking)); err != nil {
		return err
	}
	var err error
	if b.stage, err = b.allocHost(minStage); err != nil {
		return err
	}
	b.stageCap = minStage
	if err := b.growParams(32); err != nil {
		return err
	}
	if b.scalars, err = b.allocHost(64); err != nil {
		return err
	}
	f64 := unsafe.Slice((*float64)(b.scalars), 2)
	f32 := unsafe.Slice((*float32)(unsafe.Add(b.scalars, 16)), 2)
	f64[0], f64[1] = 1, 0
	f32[0], f32[1] = 1, 0
	return b.initCuBLAS()
}

// initCuBLAS creates the cuBLAS handle on the backend's stream and
// workspace, reading alpha and beta from the host.
func (b *gpuBackend) initCuBLAS() error {
	c := b.blas
	var ws uint64
	if err := b.d.check("cuMemAlloc_v2", "cuBLAS workspace", b.d.cuMemAlloc(&ws, workspaceBytes)); err != nil {
		return err
	}
	b.workspace = ptr(ws)
	if err := c.check("cublasCreate_v2", "", c.cublasCreate(&b.handle)); err != nil {
		return err
	}
	if err := c.check("cublasSetStream_v2", "", c.cublasSetStream(b.handle, b.stream)); err != nil {
		return err
	}
	if err := c.check("cublasSetPointerMode_v2", "host", c.cublasSetPointerMode(b.handle, cublasPointerModeHost)); err != nil {
		return err
	}
	return c.check("cublasSetWorkspace_v2", "32 MiB", c.cublasSetWorkspace(b.handle, ws, workspaceBytes))
}

func (b *gpuBackend) String() string { return b.label }

// enter locks the calling goroutine to its thread and makes the backend's
// context current there; the caller must runtime.UnlockOSThread once
// done, if enter succeeds.
func (b *gpuBackend) enter() error {
	runtime.LockOSThread()
	if b.closed {
		runtime.UnlockOSThread()
		return errClosed
	}
	if r := b.calls.call(b.d.cuCtxSetCurrent, b.ctx); r != 0 {
		runtime.UnlockOSThread()
		return b.d.check("cuCtxSetCurrent", "", r)
	}
	return nil
}

// enterUncaptured is enter for the methods that cannot be captured.
func (b *gpuBackend) enterUncaptured() error {
	if b.capturing {
		return errCapturing
	}
	return b.enter()
}

// allocHost allocates bytes of pinned (page-locked) host memory.
func (b *gpuBackend) allocHost(bytes int64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	err := b.d.check("cuMemAllocHost_v2", fmt.Sprintf("%d bytes", bytes), b.d.cuMemAllocHost(&p, uint64(bytes)))
	return p, err
}

// mapped allocates pinned host memory kernels write to (see backend).
func (b *gpuBackend) mapped(bytes int64) (ptr, unsafe.Pointer, error) {
	if err := b.enterUncaptured(); err != nil {
		return 0, nil, err
	}
	defer runtime.UnlockOSThread()
	host, err := b.allocHost(bytes)
	if err != nil {
		return 0, nil, err
	}
	clear(unsafe.Slice((*byte)(host), bytes))
	b.mappedHost = append(b.mappedHost, host)
	dev := uint64(uintptr(host))
	if f := b.d.cuMemHostGetDevicePointer; f != nil {
		if err := b.d.check("cuMemHostGetDevicePointer_v2", "", f(&dev, host, 0)); err != nil {
			return 0, nil, err
		}
	}
	return ptr(dev), host, nil
}

func (b *gpuBackend) alloc(bytes int64) (ptr, error) {
	if bytes < 0 {
		return 0, fmt.Errorf("cuda: alloc of %d bytes", bytes)
	}
	if err := b.enterUncaptured(); err != nil {
		return 0, err
	}
	defer runtime.UnlockOSThread()
	// Zero bytes get a pointer of their own too (the driver refuses 0).
	var p uint64
	err := b.d.check("cuMemAlloc_v2", fmt.Sprintf("%d bytes", bytes), b.d.cuMemAlloc(&p, uint64(max(bytes, 1))))
	return ptr(p), err
}

// free frees p once the work queued before it is done (it waits for the
// stream).
func (b *gpuBackend) free(p ptr) error {
	if p == 0 {
		return nil
	}
	if err := b.enterUncaptured(); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	if err := b.syncStream(); err != nil {
		return err
	}
	return b.d.check("cuMemFree_v2", fmt.Sprintf("%#x", uint64(p)), b.d.cuMemFree(uint64(p)))
}

// syncStream waits for the stream, watched where its work holds watched
// library calls (watch.go); the staging buffer is then free.
func (b *gpuBackend) syncStream() error {
	if len(b.watching) > 0 {
		return b.syncWatched()
	}
	if err := b.d.check("cuStreamSynchronize", "", b.calls.call(b.d.cuStreamSynchronize, b.stream)); err != nil {
		return err
	}
	b.stageOff = 0
	return nil
}

// syncWatched is syncStream's watched wait: where a watch fails, its
// library has ended its work, and the stream drains.
func (b *gpuBackend) syncWatched() error {
	failed, err := b.waitWatched(b)
	if failed != nil {
		err = failed.fail(err)
		if r := b.calls.call(b.d.cuStreamSynchronize, b.stream); r != 0 {
			return fmt.Errorf("%w; then %v", err, b.d.check("cuStreamSynchronize", "", r))
		}
	}
	if err != nil {
		return err
	}
	b.stageOff = 0
	return nil
}

// queryStream polls the stream (streamQuery).
func (b *gpuBackend) queryStream() (bool, error) {
	switch r := b.calls.call(b.d.cuStreamQuery, b.stream); r {
	case 0:
		return true, nil
	case cuErrorNotReady:
		return false, nil
	default:
		return false, b.d.check("cuStreamQuery", "", r)
	}
}

// watch adds w to the calls the next wait watches, unless the work is
// captured rather than queued.
func (b *gpuBackend) watch(w *watch) {
	if !b.capturing {
		b.watcher.watch(w)
	}
}

func (b *gpuBackend) sync() error {
	if err := b.enterUncaptured(); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	return b.syncStream()
}

func (b *gpuBackend) copy(dst, src ptr, bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("cuda: copy of %d bytes", bytes)
	}
	if bytes == 0 {
		return nil
	}
	if err := b.enter(); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	// The error's text is made only on an error: this is a hot path.
	if r := b.calls.call(b.d.cuMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(bytes), b.stream); r != 0 {
		return b.d.check("cuMemcpyDtoDAsync_v2", fmt.Sprintf("%d bytes", bytes), r)
	}
	return nil
}

// close waits for the queued work, then destroys the graphs, modules,
// cuBLAS handle, stream and buffers and releases the primary context. It
// reports the first error, and may be called again.
func (b *gpuBackend) close() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if b.closed {
		return nil
	}
	return b.release()
}

// release frees whatever the backend holds (also a partly built one),
// with its thread locked, and marks it closed.
func (b *gpuBackend) release() error {
	d := b.d
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	if b.ctx != 0 {
		keep(d.setCurrent(b.ctx))
	}
	if b.stream != 0 {
		keep(b.syncStream())
	}
	for _, g := range b.graphs {
		keep(d.check("cuGraphExecDestroy", "", d.cuGraphExecDestroy(g)))
	}
	for _, m := range b.modules {
		keep(d.check("cuModuleUnload", "", d.cuModuleUnload(m.h)))
	}
	if b.handle != 0 {
		keep(b.blas.check("cublasDestroy_v2", "", b.blas.cublasDestroy(b.handle)))
	}
	if b.workspace != 0 {
		keep(d.check("cuMemFree_v2", "cuBLAS workspace", d.cuMemFree(uint64(b.workspace))))
	}
	for _, p := range append([]unsafe.Pointer{b.stage, b.params, b.scalars}, b.mappedHost...) {
		if p != nil {
			keep(d.check("cuMemFreeHost", "", d.cuMemFreeHost(p)))
		}
	}
	if b.stream != 0 {
		keep(d.check("cuStreamDestroy_v2", "", d.cuStreamDestroy(b.stream)))
	}
	if b.ctx != 0 {
		keep(d.check("cuDevicePrimaryCtxRelease_v2", "", d.cuDevicePrimaryCtxRelease(b.dev)))
		keep(d.setCurrent(0))
	}
	b.graphs, b.modules, b.handle, b.workspace = nil, nil, 0, 0
	b.stage, b.params, b.scalars, b.stream, b.ctx, b.mappedHost = nil, nil, nil, 0, 0, nil
	b.closed = true
	return first
}

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// driver is the CUDA driver API as loaded at run time: the functions the
// backend calls, resolved by their versioned names (cuMemAlloc_v2 where
// cuda.h defines cuMemAlloc as cuMemAlloc_v2). Handles (contexts, streams,
// modules, functions, graphs) are uintptrs; device pointers are uint64s.
type driver struct {
	// missing are the backend's functions the library lacks (a driver too
	// old): Available does not need them, newGPUBackend does.
	missing []string

	cuInit             func(flags uint32) int32
	cuDeviceGetCount   func(count *int32) int32
	cuDriverGetVersion func(version *int32) int32
	cuGetErrorName     func(r int32, name *unsafe.Pointer) int32

	cuDeviceGet               func(dev *int32, ordinal int32) int32
	cuDeviceGetAttribute      func(v *int32, attr int32, dev int32) int32
	cuDeviceGetName           func(name *byte, n int32, dev int32) int32
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease func(dev int32) int32
	// cuCtxSetCurrent is called before every method's work: through
	// setCurrent, without reflection.
	cuCtxSetCurrent uintptr

	cuStreamCreate  func(stream *uintptr, flags uint32) int32
	cuStreamDestroy func(stream uintptr) int32
	// The calls a run makes are addresses, called through a cCall.
	cuStreamSynchronize uintptr // (stream)
	// cuStreamQuery polls the stream where a wait is watched (watch.go):
	// 0 where its work is done, cuErrorNotReady where not.
	cuStreamQuery uintptr // (stream)

	cuMemAlloc        func(p *uint64, bytes uint64) int32
	cuMemFree         func(p uint64) int32
	cuMemAllocHost    func(p *unsafe.Pointer, bytes uint64) int32
	cuMemFreeHost     func(p unsafe.Pointer) int32
	cuMemcpyHtoDAsync uintptr // (dst, src, bytes, stream)
	cuMemcpyDtoHAsync uintptr // (dst, src, bytes, stream)
	cuMemcpyDtoDAsync uintptr // (dst, src, bytes, stream)

	cuModuleLoadData    func(module *uintptr, image unsafe.Pointer) int32
	cuModuleUnload      func(module uintptr) int32
	cuModuleGetFunction func(f *uintptr, module uintptr, name string) int32
	// cuFuncGetParamInfo (CUDA 12.4) lets launch check its arguments
	// against the kernel's parameters; nil where the driver lacks it.
	cuFuncGetParamInfo func(f uintptr, index uint64, offset, size *uint64) int32
	// cuMemHostGetDevicePointer_v2 gives pinned host memory's device
	// address; nil where the driver lacks it (with unified addressing,
	// every 64-bit driver's, the address is the host pointer itself).
	cuMemHostGetDevicePointer func(dev *uint64, host unsafe.Pointer, flags uint32) int32
	// cuLaunchKernel is called through purego.SyscallN, without
	// reflection: its arguments are all handles, numbers and memory
	// outside Go's heap.
	cuLaunchKernel uintptr

	cuStreamBeginCapture        func(stream uintptr, mode int32) int32
	cuStreamEndCapture          func(stream uintptr, graph *uintptr) int32
	cuGraphInstantiateWithFlags func(exec *uintptr, graph uintptr, flags uint64) int32
	cuGraphLaunch               uintptr // (exec, stream)
	cuGraphDestroy              func(graph uintptr) int32
	cuGraphExecDestroy          func(exec uintptr) int32
}

// Driver constants (cuda.h).
const (
	cuDeviceAttributeMultiprocessorCount    = 16
	cuDeviceAttributeComputeCapabilityMajor = 75
	cuDeviceAttributeComputeCapabilityMinor = 76
	cuStreamNonBlocking                     = 0x1
	cuStreamCaptureModeRelaxed              = 2
	cuErrorInvalidValue                     = 1
	cuErrorNotReady                         = 600
)

var (
	loadOnce  sync.Once
	loaded    *driver
	loadError error
)

// driverLibrary is the driver's shared library, found through the linker
// cache as any program linked against it would.
const driverLibrary = "libcuda.so.1"

// Available reports whether an NVIDIA GPU can be used: the driver's library
// loads (without cgo, through purego), initialises, and counts at least one
// device. Its error says which of these failed. It never panics, and loads
// the driver once.
func Available() error {
	_, err := load()
	return err
}

// DriverVersion is the CUDA version the driver supports (12040 for 12.4),
// or an error from Available.
func DriverVersion() (int, error) {
	d, err := load()
	if err != nil {
		return 0, err
	}
	var v int32
	if err := d.check("cuDriverGetVersion", "", d.cuDriverGetVersion(&v)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// Devices is the number of GPUs the driver sees, or an error from
// Available.
func Devices() (int, error) {
	d, err := load()
	if err != nil {
		return 0, err
	}
	var n int32
	if err := d.check("cuDeviceGetCount", "", d.cuDeviceGetCount(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

func load() (*driver, error) {
	loadOnce.Do(func() { loaded, loadError = open() })
	return loaded, loadError
}

// resultName is a CUresult's name and code, "CUDA_ERROR_INVALID_VALUE (1)",
// from cuGetErrorName where the driver has it, else from cuResultNames.
func (d *driver) resultName(r int32) string {
	var name string
	if d != nil && d.cuGetErrorName != nil {
		var p unsafe.Pointer
		if d.cuGetErrorName(r, &p) == 0 {
			name = goString(p)
		}
	}
	return statusString(r, name, cuResultNames, "CUresult")
}

// setCurrent makes ctx the calling thread's current context.
func (d *driver) setCurrent(ctx uintptr) error {
	if r, _, _ := purego.SyscallN(d.cuCtxSetCurrent, ctx); int32(r) != 0 {
		return d.check("cuCtxSetCurrent", "", int32(r))
	}
	return nil
}

// check is nil for CUDA_SUCCESS, else the error of driver function fn
// (doing what, which may be empty) returning r.
func (d *driver) check(fn, what string, r int32) error {
	if r == 0 {
		return nil
	}
	return callError(driverLibrary, fn, what, d.resultName(r))
}

// symbols are the driver functions under their exported names; the first
// three are needed by Available, the rest by the GPU backend.
func (d *driver) symbols() (needed, backend []symbol) {
	needed = []symbol{
		{"cuInit", &d.cuInit},
		{"cuDeviceGetCount", &d.cuDeviceGetCount},
		{"cuDriverGetVersion", &d.cuDriverGetVersion},
	}
	backend = []symbol{
		{"cuDeviceGet", &d.cuDeviceGet},
		{"cuDeviceGetAttribute", &d.cuDeviceGetAttribute},
		{"cuDeviceGetName", &d.cuDeviceGetName},
		{"cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain},
		{"cuDevicePrimaryCtxRelease_v2", &d.cuDevicePrimaryCtxRelease},
		{"cuCtxSetCurrent", &d.cuCtxSetCurrent},
		{"cuStreamCreate", &d.cuStreamCreate},
		{"cuStreamDestroy_v2", &d.cuStreamDestroy},
		{"cuStreamSynchronize", &d.cuStreamSynchronize},
		{"cuStreamQuery", &d.cuStreamQuery},
		{"cuMemAlloc_v2", &d.cuMemAlloc},
		{"cuMemFree_v2", &d.cuMemFree},
		{"cuMemAllocHost_v2", &d.cuMemAllocHost},
		{"cuMemFreeHost", &d.cuMemFreeHost},
		{"cuMemcpyHtoDAsync_v2", &d.cuMemcpyHtoDAsync},
		{"cuMemcpyDtoHAsync_v2", &d.cuMemcpyDtoHAsync},
		{"cuMemcpyDtoDAsync_v2", &d.cuMemcpyDtoDAsync},
		{"cuModuleLoadData", &d.cuModuleLoadData},
		{"cuModuleUnload", &d.cuModuleUnload},
		{"cuModuleGetFunction", &d.cuModuleGetFunction},
		{"cuLaunchKernel", &d.cuLaunchKernel},
		{"cuStreamBeginCapture_v2", &d.cuStreamBeginCapture},
		{"cuStreamEndCapture", &d.cuStreamEndCapture},
		{"cuGraphInstantiateWithFlags", &d.cuGraphInstantiateWithFlags},
		{"cuGraphLaunch", &d.cuGraphLaunch},
		{"cuGraphDestroy", &d.cuGraphDestroy},
		{"cuGraphExecDestroy", &d.cuGraphExecDestroy},
	}
	return needed, backend
}

func open() (*driver, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("cuda: the backend loads the NVIDIA driver on Linux only, not on %s", runtime.GOOS)
	}
	return openDriver(driverLibrary)
}

// openDriver loads the driver from path and initialises it.
func openDriver(path string) (d *driver, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("cuda: loading %s panicked: %v", path, r)
		}
	}()
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("cuda: no NVIDIA driver: %s does not load (%v)", path, err)
	}
	d = &driver{}
	needed, backend := d.symbols()
	if missing := bind(lib, needed); len(missing) > 0 {
		return nil, fmt.Errorf("cuda: %s has no %s", path, strings.Join(missing, ", "))
	}
	bind(lib, []symbol{{"cuGetErrorName", &d.cuGetErrorName}, {"cuFuncGetParamInfo", &d.cuFuncGetParamInfo},
		{"cuMemHostGetDevicePointer_v2", &d.cuMemHostGetDevicePointer}})
	d.missing = bind(lib, backend)
	if r := d.cuInit(0); r != 0 {
		return nil, fmt.Errorf("%w (no usable GPU, or the driver does not match the kernel module)", d.check("cuInit", "", r))
	}
	var n int32
	if err := d.check("cuDeviceGetCount", "", d.cuDeviceGetCount(&n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("cuda: the driver loads but sees no GPU")
	}
	return d, nil
}

package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// gpuModule is a compiled source loaded into the backend's context.
type gpuModule struct {
	b     *gpuBackend
	h     uintptr
	funcs map[string]*gpuFunction
}

// gpuFunction is a kernel of a gpuModule, the backend's function.
type gpuFunction struct {
	h    uintptr
	name string
	// params is the number of the kernel's parameters, and wide whether
	// each is 8 bytes, where the driver says (cuFuncGetParamInfo); params
	// is -1 where it does not.
	params int
	wide   bool
}

// blockThreads is the threads of each block launch queues.
const blockThreads = 256

// launchGrid is the grid and block of a launch on threads threads on a
// GPU of sms multiprocessors: blocks of blockThreads, as many as cover
// the threads, up to 32 per multiprocessor (more blocks than run at once
// gain nothing, as the kernels loop over their elements by the grid's
// stride). threads must be positive.
func launchGrid(threads int64, sms int) (grid, block uint32) {
	blocks := (threads + blockThreads - 1) / blockThreads
	return uint32(min(blocks, int64(32*max(sms, 1)))), blockThreads
}

// compile compiles source with NVRTC for the GPU's architecture (or
// takes its image from the cache: see imageCache) and loads it. The same
// source compiled twice is the same module.
func (b *gpuBackend) compile(source string) (module, error) {
	if b.closed {
		return nil, errClosed
	}
	opts := compileOptions(b.arch)
	key := imageKey(source, b.arch, b.nv.version, opts)
	if m := b.modules[key]; m != nil {
		return m, nil
	}
	if image, fromFile := b.images.get(key); image != nil {
		m, err := b.loadModule(key, image)
		switch {
		case err == nil:
			return m, nil
		case !fromFile:
			return nil, err
		}
		b.images.drop(key) // a damaged file: compile afresh
	}
	image, err := b.nv.compile(source, opts, b.cubin)
	if err != nil {
		return nil, err
	}
	m, err := b.loadModule(key, image)
	if err != nil {
		return nil, err
	}
	b.images.put(key, image)
	return m, nil
}

// loadModule loads a CUBIN or PTX image into the context.
func (b *gpuBackend) loadModule(key string, image []byte) (*gpuModule, error) {
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer runtime.UnlockOSThread()
	var h uintptr
	what := fmt.Sprintf("%d-byte image for %s", len(image), b.arch)
	if err := b.d.check("cuModuleLoadData", what, b.d.cuModuleLoadData(&h, unsafe.Pointer(&image[0]))); err != nil {
		return nil, err
	}
	m := &gpuModule{b: b, h: h, funcs: map[string]*gpuFunction{}}
	b.modules[key] = m
	return m, nil
}

func (m *gpuModule) function(name string) (function, error) {
	if f := m.funcs[name]; f != nil {
		return f, nil
	}
	b := m.b
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer runtime.UnlockOSThread()
	var h uintptr
	if err := b.d.check("cuModuleGetFunction", name, b.d.cuModuleGetFunction(&h, m.h, name)); err != nil {
		return nil, err
	}
	f := &gpuFunction{h: h, name: name}
	f.params, f.wide = b.d.paramInfo(h)
	m.funcs[name] = f
	return f, nil
}

// paramInfo is the number of f's parameters and whether each is 8 bytes,
// or -1 where the driver cannot say (no cuFuncGetParamInfo, or it fails
// on the first parameter, as it may for a kernel not loaded yet).
func (d *driver) paramInfo(f uintptr) (n int, wide bool) {
	if d.cuFuncGetParamInfo == nil {
		return -1, false
	}
	wide = true
	for i := 0; i < 4096; i++ {
		var off, size uint64
		switch r := d.cuFuncGetParamInfo(f, uint64(i), &off, &size); {
		case r == 0:
			wide = wide && size == 8
		case r == cuErrorInvalidValue && i > 0:
			return i, wide
		default:
			return -1, false
		}
	}
	return -1, false
}

// launch queues f: its arguments are written to the pinned params block,
// whose pointers cuLaunchKernel reads (the driver copies the values as it
// queues the launch, and a capture records them, so the block is reused
// at once).
func (b *gpuBackend) launch(f function, threads int64, args []uint64) error {
	fn, ok := f.(*gpuFunction)
	if !ok || fn == nil {
		return fmt.Errorf("cuda: launch: %T is not a kernel of the GPU backend", f)
	}
	if threads < 0 {
		return fmt.Errorf("cuda: launch %s on %d threads", fn.name, threads)
	}
	if fn.params >= 0 && len(args) != fn.params {
		return fmt.Errorf("cuda: launch %s: %d arguments for its %d parameters", fn.name, len(args), fn.params)
	}
	if fn.params >= 0 && !fn.wide {
		return fmt.Errorf("cuda: launch %s: a parameter is not 8 bytes (a pointer or a long long)", fn.name)
	}
	if threads == 0 {
		return nil
	}
	if err := b.enter(); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	if len(args) > b.paramCap {
		if b.capturing {
			return errCapturing
		}
		if err := b.growParams(len(args)); err != nil {
			return err
		}
	}
	copy(unsafe.Slice((*uint64)(b.params), len(args)), args)
	grid, block := launchGrid(threads, b.sms)
	if r := launchKernel(&b.calls, b.d.cuLaunchKernel, fn.h, grid, block, b.stream, paramPointers(b.params, b.paramCap)); r != 0 {
		return b.d.check("cuLaunchKernel", fmt.Sprintf("%s, %d blocks of %d threads", fn.name, grid, block), r)
	}
	return nil
}

// launchKernel calls cuLaunchKernel, at addr, through cc, for kernel f
// on a one-dimensional grid of one-dimensional blocks, with no dynamic
// shared memory, on stream, with the kernel parameters' pointers at
// params.
func launchKernel(cc *cCall, addr, f uintptr, grid, block uint32, stream uintptr, params unsafe.Pointer) int32 {
	return cc.call(addr, f, uintptr(grid), 1, 1, uintptr(block), 1, 1, 0, stream, uintptr(params), 0)
}

// A params block of n arguments holds n 8-byte values, then n pointers,
// pointer i to value i: paramPointers is where the pointers start and
// setParamPointers writes them.
func paramPointers(block unsafe.Pointer, n int) unsafe.Pointer { return unsafe.Add(block, 8*n) }

func setParamPointers(block unsafe.Pointer, n int) {
	ptrs := unsafe.Slice((*uintptr)(paramPointers(block, n)), n)
	for i := range ptrs {
		ptrs[i] = uintptr(block) + uintptr(8*i)
	}
}

// growParams makes the params block hold at least n arguments (at least
// 256), freeing the old one.
func (b *gpuBackend) growParams(n int) error {
	n = max(n, 256, 2*b.paramCap)
	p, err := b.allocHost(int64(16 * n))
	if err != nil {
		return err
	}
	setParamPointers(p, n)
	old := b.params
	b.params, b.paramCap = p, n
	if old == nil {
		return nil
	}
	return b.d.check("cuMemFreeHost", "launch arguments", b.d.cuMemFreeHost(old))
}

// gemm queues g through cuBLAS (see gemmArgs), alpha and beta read from
// the pinned scalars: in host pointer mode cuBLAS reads them during the
// call, and a capture records their values.
func (b *gpuBackend) gemm(g *gemmCall) error {
	a, err := gemmArgs(g)
	if err != nil {
		return err
	}
	if a.m == 0 || a.n == 0 {
		return nil
	}
	if err := b.enter(); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	if r := b.blas.call(&b.calls, b.handle, a, b.scalar(a.f32, 1), b.scalar(a.f32, a.beta)); r != 0 {
		return b.blas.check(a.fn, a.String(), r)
	}
	return nil
}

// scalar points to v, 1 or 0, as a float (f32) or a double.
func (b *gpuBackend) scalar(f32 bool, v float64) unsafe.Pointer {
	i := 0
	if v == 0 {
		i = 1
	}
	if f32 {
		return unsafe.Add(b.scalars, 16+4*i)
	}
	return unsafe.Add(b.scalars, 8*i)
}

package cuda

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"
)

// hostBackend runs a loaded program on the CPU, as a stand-in for the GPU:
// device memory is anonymous memory mapped outside Go's heap, kernels are
// the modules' CUDA C compiled by the host's C compiler with NABLA_HOST
// (each kernel a loop over its items) and called through purego, and
// products are a plain loop with cuBLAS's conventions. Everything above
// the backend (plans, products' operand mapping, kernels, copies, updates)
// is thereby tested on machines without a GPU. It is for tests: it is
// slow, and needs a C compiler.
type hostBackend struct {
	cc      string
	ccID    string       // the compiler's path and version, part of each module's key
	images  *imageCache  // compiled modules' libraries: hostImages
	modules *moduleTable // loaded modules: hostModules
	dir     string
	mu      sync.Mutex
	regions []region  // mapped memory, by address
	argv    []uintptr // a launch's one argument, kept: launches allocate nothing
	reverse bool      // run each kernel's items from the last to the first
	watcher           // the watched library calls queued (watch.go)
}

// region is one allocation of host "device" memory.
type region struct {
	base ptr
	mem  []byte
}

// newHostBackend finds a C compiler (gcc or cc) and a folder for the
// compiled modules.
func newHostBackend() (*hostBackend, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("cuda: the host backend runs on Linux only")
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		if cc, err = exec.LookPath("cc"); err != nil {
			return nil, errors.New("cuda: the host backend needs a C compiler (gcc or cc)")
		}
	}
	dir, err := os.MkdirTemp("", "nabla-host-kernels")
	if err != nil {
		return nil, fmt.Errorf("cuda: host backend: %v", err)
	}
	h := &hostBackend{cc: cc, images: hostImages, modules: hostModules, dir: dir, argv: make([]uintptr, 1)}
	var known bool
	if h.ccID, known = compilerID(cc); !known {
		h.images = &imageCache{mem: map[string][]byte{}} // no files of an unknown compiler's output
	}
	return h, nil
}

func (h *hostBackend) String() string {
	if h.reverse {
		return "host (C compiler stand-in for a GPU, items in reverse)"
	}
	return "host (C compiler stand-in for a GPU)"
}

func (h *hostBackend) alloc(bytes int64) (ptr, error) {
	mem, err := syscall.Mmap(-1, 0, int(max(bytes, 1)), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return 0, fmt.Errorf("cuda: host backend: mapping %d bytes: %v", bytes, err)
	}
	mem = mem[:bytes]
	h.mu.Lock()
	defer h.mu.Unlock()
	r := region{ptr(uintptr(unsafe.Pointer(unsafe.SliceData(mem)))), mem}
	i := sort.Search(len(h.regions), func(i int) bool { return h.regions[i].base > r.base })
	h.regions = append(h.regions, region{})
	copy(h.regions[i+1:], h.regions[i:])
	h.regions[i] = r
	return r.base, nil
}

func (h *hostBackend) free(p ptr) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, r := range h.regions {
		if r.base == p {
			h.regions = append(h.regions[:i], h.regions[i+1:]...)
			return syscall.Munmap(r.mem[:cap(r.mem)])
		}
	}
	return fmt.Errorf("cuda: host backend: free of %#x, which was not allocated", p)
}

// bytesAt is the memory from p to the end of its allocation, checked to
// hold n bytes.
func (h *hostBackend) bytesAt(p ptr, n int64) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := sort.Search(len(h.regions), func(i int) bool { return h.regions[i].base > p }) - 1
	if i < 0 {
		return nil, fmt.Errorf("cuda: host backend: address %#x is not allocated", p)
	}
	r := h.regions[i]
	off := int64(p - r.base)
	if off+n > int64(len(r.mem)) {
		return nil, fmt.Errorf("cuda: host backend: %d bytes at %#x overrun an allocation of %d bytes", n, p, len(r.mem))
	}
	return r.mem[off:], nil
}

func (h *hostBackend) upload(dst ptr, src unsafe.Pointer, bytes int64) error {
	d, err := h.bytesAt(dst, bytes)
	if err == nil && bytes > 0 {
		copy(d, unsafe.Slice((*byte)(src), bytes))
	}
	return err
}

func (h *hostBackend) download(dst unsafe.Pointer, src ptr, bytes int64) error {
	if err := h.sync(); err != nil {
		return err
	}
	s, err := h.bytesAt(src, bytes)
	if err == nil && bytes > 0 {
		copy(unsafe.Slice((*byte)(dst), bytes), s)
	}
	return err
}

func (h *hostBackend) copy(dst, src ptr, bytes int64) error {
	d, err := h.bytesAt(dst, bytes)
	if err != nil {
		return err
	}
	s, err := h.bytesAt(src, bytes)
	if err == nil {
		copy(d[:bytes], s[:bytes])
	}
	return err
}

// hostModule is a compiled module's shared library.
type hostModule struct{ lib uintptr }

// hostFunction is a kernel's host entry (name_host), taking its arguments
// as an array.
type hostFunction struct{ sym uintptr }

// compile compiles source with the host's C compiler and loads it, or
// takes the module from h.modules or its shared library from h.images
// (see hostcache.go): a module is compiled once per compiler, flags and
// source, not once per backend and process.
func (h *hostBackend) compile(source string) (module, error) {
	args := []string{"-std=gnu11", "-O1", "-fPIC", "-shared", "-DNABLA_HOST"}
	if h.reverse {
		args = append(args, "-DNABLA_REVERSE")
	}
	key := hostKey(h.ccID, args, source)
	h.mu.Lock()
	defer h.mu.Unlock()
	if m, ok := h.modules.get(key); ok {
		return m, nil
	}
	lib := filepath.Join(h.dir, key+".so")
	if m, ok := h.loadCached(key, lib); ok {
		return m, nil
	}
	src := filepath.Join(h.dir, key+".c")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		return nil, fmt.Errorf("cuda: host backend: %v", err)
	}
	cmd := exec.Command(h.cc, append(args, "-o", lib, src, "-lm")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("cuda: host backend: compiling the kernels: %v\n%s", err, out)
	}
	m, err := h.modules.load(key, lib)
	if err != nil {
		return nil, err
	}
	if so, err := os.ReadFile(lib); err == nil {
		h.images.put(key, sealImage(so))
	}
	return m, nil
}

// loadCached loads the shared library of key from h.images, written to
// lib, reporting whether it could; a damaged entry is dropped, to be
// compiled afresh.
func (h *hostBackend) loadCached(key, lib string) (module, bool) {
	image, _ := h.images.get(key)
	if image == nil {
		return nil, false
	}
	so, ok := openImage(image)
	if ok && os.WriteFile(lib, so, 0o644) == nil {
		if m, err := h.modules.load(key, lib); err == nil {
			return m, true
		}
	}
	h.images.drop(key)
	return nil, false
}

func (m hostModule) function(name string) (function, error) {
	sym, err := purego.Dlsym(m.lib, name+"_host")
	if err != nil {
		return nil, fmt.Errorf("cuda: host backend: no kernel %s: %v", name, err)
	}
	return hostFunction{sym}, nil
}

func (h *hostBackend) launch(f function, threads int64, args []uint64) error {
	fn, ok := f.(hostFunction)
	if !ok {
		return fmt.Errorf("cuda: host backend: launch of a %T", f)
	}
	if len(args) == 0 {
		return errors.New("cuda: host backend: a kernel takes at least its item count")
	}
	h.argv[0] = uintptr(unsafe.Pointer(unsafe.SliceData(args)))
	purego.SyscallN(fn.sym, h.argv...)
	runtime.KeepAlive(args)
	return nil
}

// gemm checks the call as the GPU backend checks it for cuBLAS (sizes,
// leading dimensions, strides), then multiplies.
func (h *hostBackend) gemm(g *gemmCall) error {
	if _, err := gemmArgs(g); err != nil {
		return err
	}
	if g.f32 {
		return hostGemm[float32](h, g)
	}
	return hostGemm[float64](h, g)
}

// hostGemm is gemmCall's product, column-major as cuBLAS's, summed in
// float64.
func hostGemm[E float32 | float64](h *hostBackend, g *gemmCall) error {
	size := int64(unsafe.Sizeof(E(0)))
	view := func(p ptr, rows, cols, ld int, stride int64) ([]E, error) {
		n := int64(0)
		if rows > 0 && cols > 0 {
			n = stride*int64(g.batch-1) + int64(ld)*int64(cols-1) + int64(rows)
		}
		b, err := h.bytesAt(p, n*size)
		if err != nil || n == 0 {
			return nil, err
		}
		return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
	}
	ar, ac := g.m, g.k
	if g.transA {
		ar, ac = ac, ar
	}
	br, bc := g.k, g.n
	if g.transB {
		br, bc = bc, br
	}
	a, err := view(g.a, ar, ac, g.lda, g.strideA)
	if err != nil {
		return err
	}
	b, err := view(g.b, br, bc, g.ldb, g.strideB)
	if err != nil {
		return err
	}
	c, err := view(g.c, g.m, g.n, g.ldc, g.strideC)
	if err != nil {
		return err
	}
	at := func(x []E, ld int, trans bool, r, col int) float64 {
		if trans {
			r, col = col, r
		}
		return float64(x[r+col*ld])
	}
	for p := 0; p < g.batch; p++ {
		ap, bp, cp := a[int64(p)*g.strideA:], b[int64(p)*g.strideB:], c[int64(p)*g.strideC:]
		for j := 0; j < g.n; j++ {
			for i := 0; i < g.m; i++ {
				s := 0.0
				for l := 0; l < g.k; l++ {
					s += at(ap, g.lda, g.transA, i, l) * at(bp, g.ldb, g.transB, l, j)
				}
				if g.beta != 0 {
					s += g.beta * float64(cp[i+j*g.ldc])
				}
				cp[i+j*g.ldc] = E(s)
			}
		}
	}
	return nil
}

// mapped is plain host memory: the host's kernels write it directly.
func (h *hostBackend) mapped(bytes int64) (ptr, unsafe.Pointer, error) {
	p, err := h.alloc(bytes)
	if err != nil {
		return 0, nil, err
	}
	b, err := h.bytesAt(p, bytes)
	if err != nil {
		return 0, nil, err
	}
	return p, unsafe.Pointer(unsafe.SliceData(b)), nil
}

// sync waits for the library calls still in progress (watch.go): the
// rest of the host's work is done when queued.
func (h *hostBackend) sync() error {
	if len(h.watching) == 0 {
		return nil
	}
	failed, err := h.waitWatched(h)
	if failed != nil {
		return failed.fail(err)
	}
	return err
}

// queryStream says that the host's work is done: it is done when queued
// (streamQuery).
func (h *hostBackend) queryStream() (bool, error) { return true, nil }

// record returns run itself: the host has nothing faster to replay.
func (h *hostBackend) record(run func() error) (func() error, error) { return run, nil }

func (h *hostBackend) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.regions {
		syscall.Munmap(r.mem[:cap(r.mem)])
	}
	h.regions = nil
	return os.RemoveAll(h.dir)
}

package cuda

import (
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// newFakeGPU opens the GPU backend on testdata/fakecuda.c, a stand-in
// for the driver, NVRTC and cuBLAS compiled by the host's C compiler (see
// there), with a cache of its own, so that the backend's control flow is
// tested on machines without a GPU.
func newFakeGPU(t *testing.T) (*gpuBackend, func() (launches, syncs, queued int64)) {
	t.Helper()
	b, _, counts := openFakeGPU(t)
	return b, counts
}

// openFakeGPU is newFakeGPU, with the fake's library handle for more of
// its hooks.
func openFakeGPU(t testing.TB) (*gpuBackend, uintptr, func() (launches, syncs, queued int64)) {
	t.Helper()
	lib, d, nv, blas := loadFake(t)
	b, err := openGPU(d, nv, blas, &imageCache{mem: map[string][]byte{}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	h, _, err := openFirst("fake", []string{lib}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var get func(out *int64)
	if missing := bind(h, []symbol{{"fake_counts", &get}}); len(missing) > 0 {
		t.Fatal(missing)
	}
	return b, h, func() (int64, int64, int64) {
		var c [3]int64
		get(&c[0])
		return c[0], c[1], c[2]
	}
}

// loadFake compiles testdata/fakecuda.c and loads it as the three
// libraries.
func loadFake(t testing.TB) (string, *driver, *nvrtc, *cublas) {
	t.Helper()
	src, err := os.ReadFile("testdata/fakecuda.c")
	if err != nil {
		t.Fatal(err)
	}
	lib := buildSharedLibrary(t, string(src))
	d, err := openDriver(lib)
	if err != nil {
		t.Fatal(err)
	}
	nv, err := openNVRTC([]string{lib})
	if err != nil {
		t.Fatal(err)
	}
	blas, err := openCuBLAS([]string{lib})
	if err != nil {
		t.Fatal(err)
	}
	return lib, d, nv, blas
}

// Errors name the driver's codes by cuGetErrorName, else by the table; a
// GPU the driver does not see is an error, as is a closed backend.
func TestFakeErrors(t *testing.T) {
	_, d, nv, blas := loadFake(t)
	if got := d.resultName(201); got != "CUDA_ERROR_INVALID_CONTEXT (201)" {
		t.Errorf("by cuGetErrorName: %q", got)
	}
	if got := d.resultName(700); got != "CUDA_ERROR_ILLEGAL_ADDRESS (700)" {
		t.Errorf("by the table: %q", got)
	}
	if _, err := openGPU(d, nv, blas, &imageCache{mem: map[string][]byte{}}, 1); err == nil || !strings.Contains(err.Error(), "no GPU 1: the driver sees 1") {
		t.Errorf("GPU 1 of 1: %v", err)
	}
	b, err := openGPU(d, nv, blas, &imageCache{mem: map[string][]byte{}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.close(); err != nil {
		t.Fatal(err)
	}
	if err := b.close(); err != nil {
		t.Errorf("a second close: %v", err)
	}
	if _, err := b.alloc(8); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("alloc after close: %v", err)
	}
	if _, err := b.compile(twiceSource); err == nil {
		t.Error("compile after close")
	}
}

func TestFakeKernel(t *testing.T) {
	b, _ := newFakeGPU(t)
	if b.String() != "cuda:0 (Fake GPU, sm_90, 4 SMs)" {
		t.Errorf("String: %q", b)
	}
	testKernel(t, b)
}

func TestFakeTransfers(t *testing.T) {
	b, _ := newFakeGPU(t)
	testTransfers(t, b)
}

func TestFakeGemm(t *testing.T) {
	b, _ := newFakeGPU(t)
	testGemm(t, b)
}

func TestFakeThreads(t *testing.T) {
	b, _ := newFakeGPU(t)
	testThreads(t, b)
}

// Besides testRecord, a replay queues its graph's work without launching
// a kernel itself.
func TestFakeRecord(t *testing.T) {
	b, counts := newFakeGPU(t)
	testRecord(t, b)
	r := newRecordCase(t, b)
	replay, err := b.record(r.run)
	if err != nil || b.captureErr != nil {
		t.Fatal(err, b.captureErr)
	}
	if err := b.sync(); err != nil {
		t.Fatal(err)
	}
	before, _, _ := counts()
	if err := replay(); err != nil {
		t.Fatal(err)
	}
	after, _, queued := counts()
	if after != before || queued != 3 {
		t.Errorf("a replay launched %d kernels itself and queued %d steps, want 0 and 3", after-before, queued)
	}
	if err := b.sync(); err != nil {
		t.Fatal(err)
	}
	if err := b.close(); err != nil {
		t.Fatal(err)
	}
	if err := replay(); err == nil {
		t.Error("a replay after close")
	}
}

// The GPU backend's calls on a machine's path (launch, copy, gemm, upload,
// download, sync and a graph's replay) allocate nothing on Go's heap:
// a run on a GPU allocates nothing.
func TestFakeCallsDoNotAllocate(t *testing.T) {
	b, _ := newFakeGPU(t)
	r := newRecordCase(t, b)
	args := []uint64{uint64(r.a), uint64(r.x), uint64(r.n)}
	call := &gemmCall{m: 10, n: 10, k: r.n / 10, a: r.y, lda: 10, b: r.y, ldb: 10, transB: true, c: r.z, ldc: 10, batch: 1}
	host := make([]byte, 8*r.n)
	src := unsafe.Pointer(&host[0])
	replay, err := b.record(r.run)
	if err != nil {
		t.Fatal(err)
	}
	w := &watch{fn: func(time.Duration) error { return nil }}
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"launch", func() error { return b.launch(r.f, int64(r.n), args) }},
		{"copy", func() error { return b.copy(r.y, r.x, int64(8*r.n)) }},
		{"gemm", func() error { return b.gemm(call) }},
		{"upload", func() error { return b.upload(r.a, src, int64(len(host))) }},
		{"download", func() error { return b.download(src, r.a, int64(len(host))) }},
		{"sync", b.sync},
		{"watched sync", func() error { b.watch(w); return b.sync() }},
		{"replay", replay},
	} {
		if err := c.call(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n := testing.AllocsPerRun(10, func() {
			if err := c.call(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per call", c.name, n)
		}
	}
}

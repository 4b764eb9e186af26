package cuda

import (
	"os"
	"testing"
)

// newFakeGPU opens the GPU backend on testdata/fakecuda.c, a stand-in
// for the driver, NVRTC and cuBLAS compiled by the host's C compiler (see
// there), with a cache of its own, so that the backend's control flow is
// tested on machines without a GPU.
func newFakeGPU(t *testing.T) (*gpuBackend, func() (launches, syncs, queued int64)) {
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
	return b, func() (int64, int64, int64) {
		var c [3]int64
		get(&c[0])
		return c[0], c[1], c[2]
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

package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"
)

// buildSharedLibrary compiles the C source into a shared library with
// the host's C compiler and returns its path; it skips the test where
// there is no compiler or the system is not Linux.
func buildSharedLibrary(t testing.TB, source string) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the backend runs on Linux")
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		if cc, err = exec.LookPath("cc"); err != nil {
			t.Skip("no C compiler (gcc or cc)")
		}
	}
	dir := t.TempDir()
	src, lib := filepath.Join(dir, "lib.c"), filepath.Join(dir, "libnablatest.so")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return lib
}

// fakeLibrary is C with the prototypes of cuBLAS's functions the backend
// binds and of cuLaunchKernel, as their headers declare them, each
// recording its arguments for fake_get.
const fakeLibrary = `#include <stddef.h>
static long long rec[24];
static double scal[2];
static void put(int which, long long *v, int n) { rec[0] = which; for (int i = 0; i < n; i++) rec[1 + i] = v[i]; }
int cublasCreate_v2(void **h) { *h = (void *)0x1234; return 0; }
int cublasDestroy_v2(void *h) { return h == (void *)0x1234 ? 0 : 7; }
int cublasSetStream_v2(void *h, void *s) { return 0; }
int cublasSetWorkspace_v2(void *h, void *w, size_t n) { return 0; }
int cublasSetPointerMode_v2(void *h, int m) { return 0; }
const char *cublasGetStatusName(int s) { return s == 7 ? "CUBLAS_STATUS_INVALID_VALUE" : "CUBLAS_STATUS_FAKE"; }
int cublasDgemm_v2(void *h, int ta, int tb, int m, int n, int k, const double *alpha, const double *A, int lda,
	const double *B, int ldb, const double *beta, double *C, int ldc) {
	long long v[] = {(long long)h, ta, tb, m, n, k, (long long)A, lda, (long long)B, ldb, (long long)C, ldc};
	put(1, v, 12); scal[0] = *alpha; scal[1] = *beta; return 0;
}
int cublasSgemm_v2(void *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *A, int lda,
	const float *B, int ldb, const float *beta, float *C, int ldc) {
	long long v[] = {(long long)h, ta, tb, m, n, k, (long long)A, lda, (long long)B, ldb, (long long)C, ldc};
	put(2, v, 12); scal[0] = *alpha; scal[1] = *beta; return 0;
}
int cublasDgemmStridedBatched(void *h, int ta, int tb, int m, int n, int k, const double *alpha,
	const double *A, int lda, long long sa, const double *B, int ldb, long long sb,
	const double *beta, double *C, int ldc, long long sc, int batch) {
	long long v[] = {(long long)h, ta, tb, m, n, k, (long long)A, lda, (long long)B, ldb, (long long)C, ldc, sa, sb, sc, batch};
	put(3, v, 16); scal[0] = *alpha; scal[1] = *beta; return 0;
}
int cublasSgemmStridedBatched(void *h, int ta, int tb, int m, int n, int k, const float *alpha,
	const float *A, int lda, long long sa, const float *B, int ldb, long long sb,
	const float *beta, float *C, int ldc, long long sc, int batch) {
	long long v[] = {(long long)h, ta, tb, m, n, k, (long long)A, lda, (long long)B, ldb, (long long)C, ldc, sa, sb, sc, batch};
	put(4, v, 16); scal[0] = *alpha; scal[1] = *beta; return 0;
}
int fake_launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
	unsigned shared, void *stream, void **params, void **extra) {
	long long v[] = {(long long)f, gx, gy, gz, bx, by, bz, shared, (long long)stream, (long long)extra,
		*(long long *)params[0], *(long long *)params[1], *(long long *)params[2]};
	put(5, v, 13); return 719;
}
void fake_get(long long *out, double *s) { for (int i = 0; i < 24; i++) out[i] = rec[i]; s[0] = scal[0]; s[1] = scal[1]; }
`

// The Go types the backend calls cuBLAS and cuLaunchKernel through pass
// every argument where C functions of the headers' prototypes find it:
// checked against a library of such functions, compiled by the host's C
// compiler, that records what it receives.
func TestCallingConvention(t *testing.T) {
	lib := buildSharedLibrary(t, fakeLibrary)
	c, err := openCuBLAS([]string{lib})
	if err != nil {
		t.Fatal(err)
	}
	h, _, _ := openFirst("fake", []string{lib}, nil)
	var get func(out *int64, scal *float64)
	var launch uintptr
	if missing := bind(h, []symbol{{"fake_get", &get}, {"fake_launch", &launch}}); len(missing) > 0 {
		t.Fatalf("missing %v", missing)
	}
	record := func() ([24]int64, [2]float64) {
		var out [24]int64
		var s [2]float64
		get(&out[0], &s[0])
		return out, s
	}

	var handle uintptr
	if err := c.check("cublasCreate_v2", "", c.cublasCreate(&handle)); err != nil || handle != 0x1234 {
		t.Fatalf("cublasCreate_v2: handle %#x, %v", handle, err)
	}
	if err := c.check("cublasGemm", "", 7); err == nil || err.Error() != "cuda: "+lib+": cublasGemm failed: CUBLAS_STATUS_INVALID_VALUE (7)" {
		t.Errorf("status name: %v", err)
	}
	alpha64, beta64 := 1.0, 0.0
	alpha32, beta32 := float32(1), float32(1)
	for which, f32 := range []bool{false, true, false, true} {
		batched := which >= 2
		g := gemmCall{f32: f32, transA: true, m: 11, n: 12, k: 13, a: 0xA00000001, b: 0xB00000002, c: 0xC00000003,
			lda: 21, ldb: 22, ldc: 23, batch: 1, beta: 0}
		if f32 {
			g.beta = 1
		}
		if batched {
			g.batch, g.strideA, g.strideB, g.strideC = 7, 1<<33+1, 1<<34+2, 1<<35+3
		}
		a, err := gemmArgs(&g)
		if err != nil {
			t.Fatal(err)
		}
		alpha, beta := unsafe.Pointer(&alpha64), unsafe.Pointer(&beta64)
		if f32 {
			alpha, beta = unsafe.Pointer(&alpha32), unsafe.Pointer(&beta32)
		}
		if r := c.call(new(cCall), handle, a, alpha, beta); r != 0 {
			t.Fatalf("%s returned %d", a.fn, r)
		}
		got, s := record()
		want := []int64{int64(which + 1), 0x1234, cublasOpT, cublasOpN, 11, 12, 13, 0xA00000001, 21, 0xB00000002, 22, 0xC00000003, 23}
		if batched {
			want = append(want, 1<<33+1, 1<<34+2, 1<<35+3, 7)
		}
		for i, w := range want {
			if got[i] != w {
				t.Errorf("%s: argument record %d is %#x, want %#x (all: %v)", a.fn, i, got[i], w, got[:len(want)])
			}
		}
		if s[0] != 1 || s[1] != g.beta {
			t.Errorf("%s: alpha %v, beta %v; want 1, %v", a.fn, s[0], s[1], g.beta)
		}
	}

	block := make([]uint64, 2*4)
	var pin runtime.Pinner
	pin.Pin(&block[0])
	defer pin.Unpin()
	setParamPointers(unsafe.Pointer(&block[0]), 4)
	copy(block, []uint64{0xD00000001, 1 << 40, 12345})
	r := launchKernel(new(cCall), launch, 0xF00D, 391, 256, 0x57EA, paramPointers(unsafe.Pointer(&block[0]), 4))
	got, _ := record()
	want := []int64{5, 0xF00D, 391, 1, 1, 256, 1, 1, 0, 0x57EA, 0, 0xD00000001, 1 << 40, 12345}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("cuLaunchKernel: argument record %d is %#x, want %#x (all: %v)", i, got[i], w, got[:len(want)])
		}
	}
	if r != 719 {
		t.Errorf("cuLaunchKernel's result %d, want 719", r)
	}
}

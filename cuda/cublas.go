package cuda

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// cublasVersions are the cuBLAS library versions tried, newest first.
var cublasVersions = []string{".so.13", ".so.12", ".so"}

// cuBLAS constants (cublas_api.h).
const (
	cublasOpN             = 0
	cublasOpT             = 1
	cublasPointerModeHost = 0
)

// cublas is cuBLAS as loaded at run time.
type cublas struct {
	path string

	cublasCreate         func(h *uintptr) int32
	cublasDestroy        func(h uintptr) int32
	cublasSetStream      func(h, stream uintptr) int32
	cublasSetWorkspace   func(h uintptr, workspace uint64, bytes uint64) int32
	cublasSetPointerMode func(h uintptr, mode int32) int32
	// cublasGetStatusName (cuBLAS 11.4); nil where missing.
	cublasGetStatusName func(status int32) string

	// The products, called through a cCall: cublas{S,D}gemm_v2 (handle,
	// transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) and
	// cublas{S,D}gemmStridedBatched (the same with a stride after each
	// matrix's leading dimension, then the batch), alpha and beta pointing
	// to a float or a double by the precision.
	sgemm, dgemm               uintptr
	sgemmBatched, dgemmBatched uintptr
}

var (
	cublasOnce   sync.Once
	cublasLoaded *cublas
	cublasError  error
)

// loadCuBLAS loads cuBLAS once: the first libcublas of
// systemLibraryCandidates that loads, with the libcublasLt of the same
// folder and version loaded first, globally, as libcublas needs it.
func loadCuBLAS() (*cublas, error) {
	cublasOnce.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				cublasLoaded, cublasError = nil, fmt.Errorf("cuda: loading cuBLAS panicked: %v", r)
			}
		}()
		var names []string
		for _, v := range cublasVersions {
			names = append(names, "libcublas"+v)
		}
		cublasLoaded, cublasError = openCuBLAS(systemLibraryCandidates(names))
	})
	return cublasLoaded, cublasError
}

// cublasLtOf is the path of the libcublasLt that the libcublas at path
// needs: the same folder and version.
func cublasLtOf(path string) string {
	return companion(path, strings.Replace(filepath.Base(path), "libcublas", "libcublasLt", 1))
}

func openCuBLAS(paths []string) (*cublas, error) {
	lib, path, err := openFirst("cuBLAS (libcublas.so.13, libcublas.so.12)", paths, func(p string) {
		purego.Dlopen(cublasLtOf(p), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	})
	if err != nil {
		return nil, err
	}
	c := &cublas{path: path}
	if missing := bind(lib, []symbol{
		{"cublasCreate_v2", &c.cublasCreate},
		{"cublasDestroy_v2", &c.cublasDestroy},
		{"cublasSetStream_v2", &c.cublasSetStream},
		{"cublasSetWorkspace_v2", &c.cublasSetWorkspace},
		{"cublasSetPointerMode_v2", &c.cublasSetPointerMode},
		{"cublasSgemm_v2", &c.sgemm},
		{"cublasDgemm_v2", &c.dgemm},
		{"cublasSgemmStridedBatched", &c.sgemmBatched},
		{"cublasDgemmStridedBatched", &c.dgemmBatched},
	}); len(missing) > 0 {
		return nil, fmt.Errorf("cuda: %s has no %s (cuBLAS 11 or later is needed)", path, strings.Join(missing, ", "))
	}
	bind(lib, []symbol{{"cublasGetStatusName", &c.cublasGetStatusName}})
	return c, nil
}

// check is nil for CUBLAS_STATUS_SUCCESS, else the error of fn (doing
// what) returning status.
func (c *cublas) check(fn, what string, status int32) error {
	if status == 0 {
		return nil
	}
	var name string
	if c.cublasGetStatusName != nil {
		if name = c.cublasGetStatusName(status); !strings.HasPrefix(name, "CUBLAS_") {
			name = ""
		}
	}
	return callError(c.path, fn, what, statusString(status, name, cublasStatusNames, "cublasStatus_t"))
}

// cublasGemm is a gemmCall as cuBLAS's arguments (after the handle, and
// with alpha = 1 and beta from the call): fn is the function to call.
type cublasGemm struct {
	fn             string
	f32, batched   bool
	transa, transb int32
	m, n, k        int32
	a, b, c        uint64
	lda, ldb, ldc  int32
	// Strides between the matrices, for the batched functions.
	strideA, strideB, strideC int64
	batch                     int32
	beta                      float64
}

// gemmArgs maps g onto cuBLAS: cublas{S,D}gemm_v2 for one matrix, else
// cublas{S,D}gemmStridedBatched. Its error says which of g's fields cuBLAS
// would refuse (sizes that do not fit in a C int, leading dimensions
// shorter than the columns, beta other than 0 or 1).
func gemmArgs(g *gemmCall) (cublasGemm, error) {
	bad := func(format string, args ...any) (cublasGemm, error) {
		return cublasGemm{}, fmt.Errorf("cuda: gemm %dx%dx%d: %s", g.m, g.n, g.k, fmt.Sprintf(format, args...))
	}
	for _, d := range []int{g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.batch} {
		if d < 0 || d > math.MaxInt32 {
			return bad("size %d out of range", d)
		}
	}
	if g.batch < 1 {
		return bad("batch %d", g.batch)
	}
	rowsA, rowsB := g.m, g.k
	if g.transA {
		rowsA = g.k
	}
	if g.transB {
		rowsB = g.n
	}
	if g.lda < max(1, rowsA) || g.ldb < max(1, rowsB) || g.ldc < max(1, g.m) {
		return bad("leading dimensions %d, %d, %d shorter than the columns (%d, %d, %d rows)",
			g.lda, g.ldb, g.ldc, rowsA, rowsB, g.m)
	}
	if g.beta != 0 && g.beta != 1 {
		return bad("beta %v (0 or 1)", g.beta)
	}
	if g.batch > 1 && (g.strideA < 0 || g.strideB < 0 || g.strideC < 0) {
		return bad("negative stride")
	}
	op := func(t bool) int32 {
		if t {
			return cublasOpT
		}
		return cublasOpN
	}
	a := cublasGemm{
		f32: g.f32, batched: g.batch > 1,
		transa: op(g.transA), transb: op(g.transB),
		m: int32(g.m), n: int32(g.n), k: int32(g.k),
		a: uint64(g.a), b: uint64(g.b), c: uint64(g.c),
		lda: int32(g.lda), ldb: int32(g.ldb), ldc: int32(g.ldc),
		strideA: g.strideA, strideB: g.strideB, strideC: g.strideC,
		batch: int32(g.batch), beta: g.beta,
	}
	// Constant names: a product allocates nothing.
	switch {
	case a.batched && g.f32:
		a.fn = "cublasSgemmStridedBatched"
	case a.batched:
		a.fn = "cublasDgemmStridedBatched"
	case g.f32:
		a.fn = "cublasSgemm_v2"
	default:
		a.fn = "cublasDgemm_v2"
	}
	if !a.batched {
		a.strideA, a.strideB, a.strideC = 0, 0, 0
	}
	return a, nil
}

// call makes the cuBLAS call of a on handle h through cc, with alpha and
// beta read from the host at the addresses given (host pointer mode).
func (c *cublas) call(cc *cCall, h uintptr, a cublasGemm, alpha, beta unsafe.Pointer) int32 {
	ta, tb, m, n, k := uintptr(a.transa), uintptr(a.transb), uintptr(a.m), uintptr(a.n), uintptr(a.k)
	if a.batched {
		f := c.dgemmBatched
		if a.f32 {
			f = c.sgemmBatched
		}
		return cc.call(f, h, ta, tb, m, n, k, uintptr(alpha), uintptr(a.a), uintptr(a.lda), uintptr(a.strideA),
			uintptr(a.b), uintptr(a.ldb), uintptr(a.strideB), uintptr(beta), uintptr(a.c), uintptr(a.ldc), uintptr(a.strideC), uintptr(a.batch))
	}
	f := c.dgemm
	if a.f32 {
		f = c.sgemm
	}
	return cc.call(f, h, ta, tb, m, n, k, uintptr(alpha), uintptr(a.a), uintptr(a.lda), uintptr(a.b), uintptr(a.ldb),
		uintptr(beta), uintptr(a.c), uintptr(a.ldc))
}

// String describes a call for errors: its function and arguments.
func (a cublasGemm) String() string {
	s := fmt.Sprintf("transa=%d transb=%d m=%d n=%d k=%d lda=%d ldb=%d ldc=%d beta=%v",
		a.transa, a.transb, a.m, a.n, a.k, a.lda, a.ldb, a.ldc, a.beta)
	if a.batched {
		s += fmt.Sprintf(" strides=%d,%d,%d batch=%d", a.strideA, a.strideB, a.strideC, a.batch)
	}
	return s
}

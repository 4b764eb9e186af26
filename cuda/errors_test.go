package cuda

import (
	"strings"
	"testing"
)

// Status codes are named as the headers name them, with their numbers.
func TestStatusNames(t *testing.T) {
	var d *driver // no cuGetErrorName: the table
	for _, c := range []struct {
		got, want string
	}{
		{d.resultName(1), "CUDA_ERROR_INVALID_VALUE (1)"},
		{d.resultName(2), "CUDA_ERROR_OUT_OF_MEMORY (2)"},
		{d.resultName(700), "CUDA_ERROR_ILLEGAL_ADDRESS (700)"},
		{d.resultName(901), "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (901)"},
		{d.resultName(908), "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD (908)"},
		{d.resultName(209), "CUDA_ERROR_NO_BINARY_FOR_GPU (209)"},
		{d.resultName(12345), "CUresult 12345"},
		{statusString(6, "", nvrtcResultNames, "nvrtcResult"), "NVRTC_ERROR_COMPILATION (6)"},
		{statusString(5, "", nvrtcResultNames, "nvrtcResult"), "NVRTC_ERROR_INVALID_OPTION (5)"},
		{statusString(7, "", cublasStatusNames, "cublasStatus_t"), "CUBLAS_STATUS_INVALID_VALUE (7)"},
		{statusString(13, "", cublasStatusNames, "cublasStatus_t"), "CUBLAS_STATUS_EXECUTION_FAILED (13)"},
		{statusString(99, "", cublasStatusNames, "cublasStatus_t"), "cublasStatus_t 99"},
		{statusString(3, "FROM_THE_LIBRARY", cublasStatusNames, "cublasStatus_t"), "FROM_THE_LIBRARY (3)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// A failed call's error names the library, the function, what it was
// doing and the status; success is nil.
func TestCallErrors(t *testing.T) {
	var d *driver
	if err := d.check("cuMemAlloc_v2", "", 0); err != nil {
		t.Errorf("success: %v", err)
	}
	n := &nvrtc{path: "/x/libnvrtc.so.13"}
	c := &cublas{path: "libcublas.so.13"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{d.check("cuMemAlloc_v2", "1024 bytes", 2), "cuda: libcuda.so.1: cuMemAlloc_v2 (1024 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (2)"},
		{d.check("cuCtxSetCurrent", "", 201), "cuda: libcuda.so.1: cuCtxSetCurrent failed: CUDA_ERROR_INVALID_CONTEXT (201)"},
		{n.check("nvrtcCompileProgram", "--std=c++17", 6), "cuda: /x/libnvrtc.so.13: nvrtcCompileProgram (--std=c++17) failed: NVRTC_ERROR_COMPILATION (6)"},
		{c.check("cublasDgemm_v2", "m=1", 7), "cuda: libcublas.so.13: cublasDgemm_v2 (m=1) failed: CUBLAS_STATUS_INVALID_VALUE (7)"},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("got %v, want %q", c.err, c.want)
		}
	}
	if n.check("nvrtcVersion", "", 0) != nil || c.check("cublasCreate_v2", "", 0) != nil {
		t.Error("success is an error")
	}
	if got := numberLines("a\nb\n"); !strings.Contains(got, "   1  a\n") || !strings.Contains(got, "   2  b\n") {
		t.Errorf("numberLines: %q", got)
	}
}

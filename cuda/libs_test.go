package cuda

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
)

// touch makes an empty file at path, and its folders.
func touch(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The library search finds NVRTC and cuBLAS in the toolkit's folder, in
// the nvidia wheels of the user's, a virtual environment's and the
// system's site-packages, and first in $NABLA_CUDA_LIB_DIR; then it
// leaves the names to the dynamic linker.
func TestLibrarySearch(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home", "u")
	venv := filepath.Join(root, "venv")
	mine := filepath.Join(root, "mine")
	toolkit := touch(t, filepath.Join(root, "usr/local/cuda/lib64/libnvrtc.so.13"))
	system := filepath.Join(root, "usr/local/lib/python3.12/dist-packages/nvidia")
	systemNVRTC := touch(t, filepath.Join(system, "cu13/lib/libnvrtc.so.13"))
	cublas13 := touch(t, filepath.Join(system, "cu13/lib/libcublas.so.13"))
	touch(t, filepath.Join(system, "cu13/lib/libcublasLt.so.13"))
	cublas12 := touch(t, filepath.Join(system, "cublas/lib/libcublas.so.12"))
	user := touch(t, filepath.Join(home, ".local/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"))
	unversioned := touch(t, filepath.Join(home, ".local/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so"))
	inVenv := touch(t, filepath.Join(venv, "lib/python3.13/site-packages/nvidia/cu13/lib/libnvrtc.so.13"))
	chosen := touch(t, filepath.Join(mine, "libnvrtc.so.12"))
	touch(t, filepath.Join(root, "usr/local/lib/python3.12/dist-packages/nvidia/cu13/lib/unrelated.so"))

	env := map[string]string{"HOME": home}
	getenv := func(k string) string { return env[k] }
	check := func(what string, names, want []string) {
		t.Helper()
		got := libraryCandidates(libraryDirs(root, getenv), names)
		want = append(want, names...)
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", what, got, want)
		}
	}
	check("NVRTC", nvrtcNames, []string{toolkit, user, unversioned, systemNVRTC})
	check("cuBLAS", []string{"libcublas.so.13", "libcublas.so.12"}, []string{cublas13, cublas12})
	env["VIRTUAL_ENV"] = venv
	check("NVRTC with a virtual environment", nvrtcNames, []string{toolkit, inVenv, user, unversioned, systemNVRTC})
	env[libraryDirEnv] = mine
	check("NVRTC in "+libraryDirEnv, nvrtcNames, []string{chosen, toolkit, inVenv, user, unversioned, systemNVRTC})
	env["CUDA_HOME"] = filepath.Join(root, "usr/local/cuda")
	check("NVRTC with CUDA_HOME", nvrtcNames, []string{chosen, toolkit, inVenv, user, unversioned, systemNVRTC})

	if got, want := cublasLtOf(cublas13), filepath.Join(filepath.Dir(cublas13), "libcublasLt.so.13"); got != want {
		t.Errorf("cublasLtOf(%q) = %q, want %q", cublas13, got, want)
	}
	if got := cublasLtOf("libcublas.so.12"); got != "libcublasLt.so.12" {
		t.Errorf("cublasLtOf(libcublas.so.12) = %q", got)
	}
}

// A library that does not load, or lacks the functions, is an error that
// names what was tried and what is missing, never a panic.
func TestLibraryErrors(t *testing.T) {
	dir := t.TempDir()
	fake := touch(t, filepath.Join(dir, "libnvrtc.so.13"))
	_, err := openNVRTC([]string{fake, filepath.Join(dir, "libnvrtc.so.12")})
	if err == nil || !strings.Contains(err.Error(), fake) || !strings.Contains(err.Error(), "libnvrtc.so.12") ||
		!strings.Contains(err.Error(), libraryDirEnv) {
		t.Errorf("openNVRTC of an empty file: %v", err)
	}
	if _, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW); err != nil {
		t.Skipf("no libc.so.6 to stand in for the NVIDIA libraries: %v", err)
	}
	if _, err := openNVRTC([]string{"libc.so.6"}); err == nil || !strings.Contains(err.Error(), "has no nvrtcCompileProgram") {
		t.Errorf("openNVRTC of libc: %v", err)
	}
	if _, err := openCuBLAS([]string{"libc.so.6"}); err == nil || !strings.Contains(err.Error(), "has no cublasCreate_v2") {
		t.Errorf("openCuBLAS of libc: %v", err)
	}
}

// bind binds what a library has, through purego, and lists what it lacks.
func TestBind(t *testing.T) {
	lib, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW)
	if err != nil {
		t.Skipf("no libc.so.6: %v", err)
	}
	var strlen func(s string) uint64
	var missing func() int32
	var abs uintptr
	got := bind(lib, []symbol{{"strlen", &strlen}, {"nabla_no_such_function", &missing}, {"abs", &abs}, {"nabla_nor_this", &abs}})
	if !slices.Equal(got, []string{"nabla_no_such_function", "nabla_nor_this"}) {
		t.Errorf("missing %q", got)
	}
	if missing != nil || strlen == nil || abs == 0 {
		t.Fatalf("bound: strlen %v, missing %v, abs %#x", strlen != nil, missing != nil, abs)
	}
	if n := strlen("nabla"); n != 5 {
		t.Errorf("strlen through purego: %d", n)
	}
	if r, _, _ := purego.SyscallN(abs, uintptr(^uint64(6))); int32(r) != 7 {
		t.Errorf("abs(-7) through SyscallN: %d", int32(r))
	}
}

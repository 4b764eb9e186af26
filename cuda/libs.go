package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/ebitengine/purego"

	"github.com/nabla-go/nabla/internal/libpath"
)

// libraryDirEnv names a folder searched first for NVRTC and cuBLAS (the
// driver, libcuda.so.1, is always found through the linker cache).
const libraryDirEnv = "NABLA_CUDA_LIB_DIR"

// symbol is a function of a loaded library: fn points at a Go func
// variable that RegisterLibFunc fills, or at a uintptr that receives the
// bare address (for purego.SyscallN).
type symbol struct {
	name string
	fn   any
}

// bind resolves syms in the library lib and returns the names it lacks,
// sorted, leaving their variables nil. It checks each with Dlsym first, as
// RegisterLibFunc panics on a missing symbol.
func bind(lib uintptr, syms []symbol) (missing []string) {
	for _, s := range syms {
		addr, err := purego.Dlsym(lib, s.name)
		if err != nil || addr == 0 {
			missing = append(missing, s.name)
			continue
		}
		if p, ok := s.fn.(*uintptr); ok {
			*p = addr
			continue
		}
		purego.RegisterFunc(s.fn, addr)
	}
	slices.Sort(missing)
	return missing
}

// libraryDirs are the folders searched, in order, for the CUDA toolkit's
// libraries: $NABLA_CUDA_LIB_DIR; $CUDA_HOME, $CUDA_PATH and $CUDA_ROOT's
// lib64 and lib; the toolkit's usual place (/usr/local/cuda); and the lib
// folders of the nvidia Python wheels (nvidia/cu13/lib, nvidia/cuda_nvrtc/lib,
// nvidia/cublas/lib, ...) in the virtual environment, conda, the user's and
// the system's site-packages. Only folders that exist are listed. root
// prefixes the system's absolute paths and getenv reads the environment, so
// that tests can search a fake tree.
func libraryDirs(root string, getenv func(string) string) []string {
	var dirs []string
	add := func(d string) {
		if d == "" || slices.Contains(dirs, d) {
			return
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			dirs = append(dirs, d)
		}
	}
	add(getenv(libraryDirEnv))
	for _, v := range []string{"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"} {
		if h := getenv(v); h != "" {
			add(filepath.Join(h, "lib64"))
			add(filepath.Join(h, "lib"))
		}
	}
	target := map[string]string{"amd64": "x86_64-linux", "arm64": "sbsa-linux"}[runtime.GOARCH]
	for _, d := range []string{"/usr/local/cuda/lib64", "/usr/local/cuda/targets/" + target + "/lib"} {
		add(filepath.Join(root, d))
	}
	for _, site := range sitePackages(root, getenv) {
		for _, sub := range []string{"cu13", "cuda_nvrtc", "cublas", "cu12"} {
			add(filepath.Join(site, "nvidia", sub, "lib"))
		}
		more, _ := filepath.Glob(filepath.Join(site, "nvidia", "*", "lib"))
		for _, d := range more {
			add(d)
		}
	}
	return dirs
}

// sitePackages are the Python package folders that may hold NVIDIA's
// wheels, most specific first (libpath.SitePackages).
func sitePackages(root string, getenv func(string) string) []string {
	return libpath.SitePackages(root, getenv)
}

// libraryCandidates are the files to try to load, in order: each of the
// folders dirs holding one of names (names in the order of preference,
// within each folder), then names themselves, for the dynamic linker's own
// search (LD_LIBRARY_PATH and the linker cache).
func libraryCandidates(dirs, names []string) []string {
	var paths []string
	for _, d := range dirs {
		for _, n := range names {
			p := filepath.Join(d, n)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				paths = append(paths, p)
			}
		}
	}
	return append(paths, names...)
}

// systemLibraryCandidates are libraryCandidates in the folders of this
// machine.
func systemLibraryCandidates(names []string) []string {
	return libraryCandidates(libraryDirs("/", os.Getenv), names)
}

// openFirst loads the first of paths that loads, with before (may be nil)
// called first with each path (to load a library it needs from the same
// folder). Its error lists every path tried and why it failed.
func openFirst(what string, paths []string, before func(path string)) (uintptr, string, error) {
	var tried []string
	for _, p := range paths {
		if before != nil {
			before(p)
		}
		h, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			return h, p, nil
		}
		tried = append(tried, fmt.Sprintf("%s (%v)", p, err))
	}
	return 0, "", fmt.Errorf("cuda: no %s loads: tried %s; set %s to the folder holding it",
		what, strings.Join(tried, "; "), libraryDirEnv)
}

// companion is the path of library name in the folder of path, or name
// alone where path is a bare name for the dynamic linker.
func companion(path, name string) string {
	if !strings.Contains(path, "/") {
		return name
	}
	return filepath.Join(filepath.Dir(path), name)
}

package dist

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/nabla-go/nabla/internal/libpath"
)

// ncclEnv names NCCL's shared library to load instead of searching (a
// full path); it wins over the search, and is the only way to give NCCL
// to the cuda package's host stand-in for a GPU (the tests' fake NCCL,
// working on host memory).
const ncclEnv = "NABLA_NCCL"

// ncclName is NCCL's library as the dynamic linker knows it.
const ncclName = "libnccl.so.2"

// NCCL's enums, from nccl.h.
const (
	ncclFloat32 = 7
	ncclFloat64 = 8
	ncclSum     = 0
	ncclMax     = 2
	ncclAvg     = 4 // NCCL 2.10 and later: every NCCL the binding loads

	ncclInProgress = 7 // ncclResult_t: an operation not done yet
)

// ncclIDBytes is the size of an ncclUniqueId.
const ncclIDBytes = 128

// nccl is NCCL as loaded at run time: its C functions, by address,
// called through purego.SyscallN (every argument is a handle, a number,
// or an address).
//
// Communicators are made with ncclCommInitRankScalable (NCCL 2.23 and
// later), which takes the ncclUniqueId by address: ncclCommInitRank takes
// it by value, a 128-byte struct that the x86-64 and Arm ABIs pass in
// the caller's stack frame, 16 words, more than purego passes there (9).
type nccl struct {
	path    string
	version int // ncclGetVersion's (major·10000 + minor·100 + patch): 22803 for 2.28.3

	getVersion, getUniqueID, commInitRankScalable, commDestroy uintptr
	allReduce, broadcast, reduce, allGather, reduceScatter     uintptr
	getErrorString, getLastError                               uintptr
	commGetAsyncError, commAbort                               uintptr

	errorText func(r int32) string      // ncclGetErrorString
	lastError func(comm uintptr) string // ncclGetLastError: "" for none
}

// functions are the C functions nccl needs, each with its field.
func (l *nccl) functions() map[string]*uintptr {
	return map[string]*uintptr{
		"ncclGetVersion": &l.getVersion, "ncclGetUniqueId": &l.getUniqueID,
		"ncclCommInitRankScalable": &l.commInitRankScalable, "ncclCommDestroy": &l.commDestroy,
		"ncclAllReduce": &l.allReduce, "ncclBroadcast": &l.broadcast, "ncclReduce": &l.reduce,
		"ncclAllGather": &l.allGather, "ncclReduceScatter": &l.reduceScatter,
		"ncclGetErrorString": &l.getErrorString, "ncclGetLastError": &l.getLastError,
		"ncclCommGetAsyncError": &l.commGetAsyncError, "ncclCommAbort": &l.commAbort,
	}
}

// ncclCandidates are the files tried for NCCL, in order: $NABLA_NCCL
// alone where it is set; else the dynamic linker's search
// (LD_LIBRARY_PATH, the linker cache), the system's multiarch folder
// (/usr/lib/x86_64-linux-gnu), and the nvidia-nccl Python wheels
// (nvidia/nccl/lib in the site-packages libpath.SitePackages lists).
// root prefixes the system's absolute paths and getenv reads the
// environment, so that tests can search a fake tree.
func ncclCandidates(root string, getenv func(string) string) []string {
	if p := getenv(ncclEnv); p != "" {
		return []string{p}
	}
	paths := []string{ncclName}
	arch := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[runtime.GOARCH]
	dirs := []string{filepath.Join(root, "/usr/lib", arch)}
	for _, site := range libpath.SitePackages(root, getenv) {
		dirs = append(dirs, filepath.Join(site, "nvidia", "nccl", "lib"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, ncclName)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			paths = append(paths, p)
		}
	}
	return paths
}

var (
	ncclOnce   sync.Once
	ncclLoaded *nccl
	ncclErr    error
)

// loadNCCL loads NCCL once per process (ncclCandidates), or says why it
// did not: every file tried, and why it failed.
func loadNCCL() (*nccl, error) {
	ncclOnce.Do(func() { ncclLoaded, ncclErr = openNCCL(ncclCandidates("/", os.Getenv)) })
	return ncclLoaded, ncclErr
}

// openNCCL loads the first of paths that loads and has NCCL's functions.
func openNCCL(paths []string) (*nccl, error) {
	var tried []string
	for _, p := range paths {
		h, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", p, err))
			continue
		}
		l := &nccl{path: p}
		var missing []string
		for name, f := range l.functions() {
			if addr, err := purego.Dlsym(h, name); err == nil && addr != 0 {
				*f = addr
			} else {
				missing = append(missing, name)
			}
		}
		slices.Sort(missing)
		if len(missing) > 0 {
			tried = append(tried, fmt.Sprintf("%s (lacks %s: an NCCL older than 2.23?)", p, strings.Join(missing, ", ")))
			continue
		}
		purego.RegisterFunc(&l.errorText, l.getErrorString)
		purego.RegisterFunc(&l.lastError, l.getLastError)
		var v int32
		if r := call(l.getVersion, uintptr(unsafe.Pointer(&v))); r != 0 {
			tried = append(tried, fmt.Sprintf("%s (ncclGetVersion: %s)", p, l.errorString(r)))
			continue
		}
		l.version = int(v)
		return l, nil
	}
	return nil, fmt.Errorf("dist: no NCCL loads: tried %s; install NCCL (libnccl2, or the nvidia-nccl-cu12 wheel) or set %s to its path",
		strings.Join(tried, "; "), ncclEnv)
}

// String is the library's version and path: "NCCL 2.28.3 at libnccl.so.2".
func (l *nccl) String() string {
	return fmt.Sprintf("NCCL %d.%d.%d at %s", l.version/10000, l.version/100%100, l.version%100, l.path)
}

// errorString is ncclGetErrorString's text for result r.
func (l *nccl) errorString(r int32) string {
	if s := l.errorText(r); s != "" {
		return s
	}
	return fmt.Sprintf("NCCL result %d", r)
}

// error is the error of NCCL call fn, made for what (the op and its
// communicator), returning r: NCCL's text for r and its last error.
func (l *nccl) error(what, fn string, comm uintptr, r int32) error {
	msg := fmt.Sprintf("dist: %s: %s: NCCL error %d: %s", what, fn, r, l.errorString(r))
	if last := l.lastError(comm); last != "" {
		msg += ": " + strings.TrimSpace(last)
	}
	return fmt.Errorf("%s (%v)", msg, l)
}

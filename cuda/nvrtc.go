package cuda

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// nvrtcNames are NVRTC's library names, in order of preference.
var nvrtcNames = []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}

// nvrtc is NVRTC, the runtime CUDA C++ compiler, as loaded at run time.
type nvrtc struct {
	path    string // the library's file
	version string // "13.0"

	nvrtcVersion           func(major, minor *int32) int32
	nvrtcGetErrorString    func(r int32) string
	nvrtcCreateProgram     func(prog *uintptr, src, name string, numHeaders int32, headers, includeNames unsafe.Pointer) int32
	nvrtcDestroyProgram    func(prog *uintptr) int32
	nvrtcCompileProgram    func(prog uintptr, numOptions int32, options unsafe.Pointer) int32
	nvrtcGetProgramLogSize func(prog uintptr, size *uint64) int32
	nvrtcGetProgramLog     func(prog uintptr, log unsafe.Pointer) int32
	nvrtcGetCUBINSize      func(prog uintptr, size *uint64) int32
	nvrtcGetCUBIN          func(prog uintptr, cubin unsafe.Pointer) int32
	nvrtcGetPTXSize        func(prog uintptr, size *uint64) int32
	nvrtcGetPTX            func(prog uintptr, ptx unsafe.Pointer) int32
	// The architectures NVRTC compiles for (CUDA 11.2); nil where missing.
	nvrtcGetNumSupportedArchs func(n *int32) int32
	nvrtcGetSupportedArchs    func(archs *int32) int32
}

var (
	nvrtcOnce   sync.Once
	nvrtcLoaded *nvrtc
	nvrtcError  error
)

// loadNVRTC loads NVRTC once: the first of systemLibraryCandidates that
// loads, then the libnvrtc-builtins library of its folder (NVRTC opens it
// by name at compile time, which fails where its folder is not on the
// linker's path, unless it is loaded already).
func loadNVRTC() (*nvrtc, error) {
	nvrtcOnce.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				nvrtcLoaded, nvrtcError = nil, fmt.Errorf("cuda: loading NVRTC panicked: %v", r)
			}
		}()
		nvrtcLoaded, nvrtcError = openNVRTC(systemLibraryCandidates(nvrtcNames))
	})
	return nvrtcLoaded, nvrtcError
}

func openNVRTC(paths []string) (*nvrtc, error) {
	lib, path, err := openFirst("NVRTC ("+strings.Join(nvrtcNames, ", ")+")", paths, nil)
	if err != nil {
		return nil, err
	}
	preloadBuiltins(path)
	n := &nvrtc{path: path}
	if missing := bind(lib, []symbol{
		{"nvrtcVersion", &n.nvrtcVersion},
		{"nvrtcGetErrorString", &n.nvrtcGetErrorString},
		{"nvrtcCreateProgram", &n.nvrtcCreateProgram},
		{"nvrtcDestroyProgram", &n.nvrtcDestroyProgram},
		{"nvrtcCompileProgram", &n.nvrtcCompileProgram},
		{"nvrtcGetProgramLogSize", &n.nvrtcGetProgramLogSize},
		{"nvrtcGetProgramLog", &n.nvrtcGetProgramLog},
		{"nvrtcGetCUBINSize", &n.nvrtcGetCUBINSize},
		{"nvrtcGetCUBIN", &n.nvrtcGetCUBIN},
		{"nvrtcGetPTXSize", &n.nvrtcGetPTXSize},
		{"nvrtcGetPTX", &n.nvrtcGetPTX},
	}); len(missing) > 0 {
		return nil, fmt.Errorf("cuda: %s has no %s (NVRTC 11.1 or later is needed)", path, strings.Join(missing, ", "))
	}
	bind(lib, []symbol{
		{"nvrtcGetNumSupportedArchs", &n.nvrtcGetNumSupportedArchs},
		{"nvrtcGetSupportedArchs", &n.nvrtcGetSupportedArchs},
	})
	var major, minor int32
	if err := n.check("nvrtcVersion", "", n.nvrtcVersion(&major, &minor)); err != nil {
		return nil, err
	}
	n.version = fmt.Sprintf("%d.%d", major, minor)
	return n, nil
}

// preloadBuiltins loads the libnvrtc-builtins library next to the NVRTC
// at path, if there is one (best effort: NVRTC reports its absence).
func preloadBuiltins(path string) {
	if !strings.Contains(path, "/") {
		return
	}
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "libnvrtc-builtins.so*"))
	slices.Sort(m)
	for _, b := range m {
		if _, err := purego.Dlopen(b, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			return
		}
	}
}

// check is nil for NVRTC_SUCCESS, else the error of fn (doing what)
// returning r.
func (n *nvrtc) check(fn, what string, r int32) error {
	if r == 0 {
		return nil
	}
	var name string
	if n.nvrtcGetErrorString != nil {
		name = n.nvrtcGetErrorString(r)
		if !strings.HasPrefix(name, "NVRTC_") {
			name = ""
		}
	}
	return callError(n.path, fn, what, statusString(r, name, nvrtcResultNames, "nvrtcResult"))
}

// supportedArchs are the sm_XY numbers (90 for sm_90) NVRTC compiles for,
// or nil where it cannot say.
func (n *nvrtc) supportedArchs() []int {
	if n.nvrtcGetNumSupportedArchs == nil || n.nvrtcGetSupportedArchs == nil {
		return nil
	}
	var count int32
	if n.nvrtcGetNumSupportedArchs(&count) != 0 || count <= 0 || count > 1024 {
		return nil
	}
	archs := make([]int32, count)
	if n.nvrtcGetSupportedArchs(&archs[0]) != 0 {
		return nil
	}
	out := make([]int, count)
	for i, a := range archs {
		out[i] = int(a)
	}
	return out
}

// compileTarget is what NVRTC compiles for on a device of compute
// capability cc (90 for 9.0): the device's own architecture, sm_XY, as a
// CUBIN where NVRTC supports it (or cannot say), else PTX for the newest
// virtual architecture NVRTC supports that is older than the device's,
// which the driver compiles when it loads it. ok is false where NVRTC
// supports nothing as old as the device.
func compileTarget(cc int, supported []int) (arch string, cubin, ok bool) {
	if len(supported) == 0 || slices.Contains(supported, cc) {
		return fmt.Sprintf("sm_%d", cc), true, true
	}
	best := -1
	for _, a := range supported {
		if a <= cc && a > best {
			best = a
		}
	}
	if best < 0 {
		return "", false, false
	}
	return fmt.Sprintf("compute_%d", best), false, true
}

// compileOptions are NVRTC's options for arch.
func compileOptions(arch string) []string {
	return []string{"--gpu-architecture=" + arch, "--std=c++17", "-DNDEBUG"}
}

// compile compiles source with options and returns the CUBIN (cubin) or
// the NUL-terminated PTX. A compilation error carries NVRTC's log and the
// source with line numbers.
func (n *nvrtc) compile(source string, options []string, cubin bool) ([]byte, error) {
	var prog uintptr
	if err := n.check("nvrtcCreateProgram", "", n.nvrtcCreateProgram(&prog, source, "nabla.cu", 0, nil, nil)); err != nil {
		return nil, err
	}
	defer n.nvrtcDestroyProgram(&prog)
	// The options as an array of C strings, pinned while NVRTC reads it.
	var pin runtime.Pinner
	defer pin.Unpin()
	cstrs := make([]*byte, len(options))
	for i, o := range options {
		b := append([]byte(o), 0)
		pin.Pin(&b[0])
		cstrs[i] = &b[0]
	}
	pin.Pin(&cstrs[0])
	what := strings.Join(options, " ")
	if r := n.nvrtcCompileProgram(prog, int32(len(cstrs)), unsafe.Pointer(&cstrs[0])); r != 0 {
		err := n.check("nvrtcCompileProgram", what, r)
		return nil, fmt.Errorf("%w\n%s\nsource:\n%s", err, n.log(prog), numberLines(source))
	}
	sizeFn, getFn, name := n.nvrtcGetCUBINSize, n.nvrtcGetCUBIN, "nvrtcGetCUBIN"
	if !cubin {
		sizeFn, getFn, name = n.nvrtcGetPTXSize, n.nvrtcGetPTX, "nvrtcGetPTX"
	}
	var size uint64
	if err := n.check(name+"Size", what, sizeFn(prog, &size)); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fmt.Errorf("cuda: %s: %s returned nothing (%s)", n.path, name, what)
	}
	image := make([]byte, size)
	if err := n.check(name, what, getFn(prog, unsafe.Pointer(&image[0]))); err != nil {
		return nil, err
	}
	return image, nil
}

// log is the compilation log of prog, or why it could not be read.
func (n *nvrtc) log(prog uintptr) string {
	var size uint64
	if err := n.check("nvrtcGetProgramLogSize", "", n.nvrtcGetProgramLogSize(prog, &size)); err != nil {
		return err.Error()
	}
	if size <= 1 {
		return "(empty log)"
	}
	buf := make([]byte, size)
	if err := n.check("nvrtcGetProgramLog", "", n.nvrtcGetProgramLog(prog, unsafe.Pointer(&buf[0]))); err != nil {
		return err.Error()
	}
	return strings.TrimRight(string(buf), "\x00\n")
}

// numberLines prefixes each line of source with its number, as NVRTC's
// log counts them.
func numberLines(source string) string {
	lines := strings.Split(strings.TrimRight(source, "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}

package graph

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Error is a graph-building error: the op that failed, what was wrong and
// where in the user's code the node was built.
type Error struct {
	Op   string // the op's name, or the builder ("Param", "Apply", ...)
	Err  error  // what was wrong
	Site string // the caller's file:line, or "" when unknown
}

// Error formats the error as "nabla: Op: what was wrong at file.go:42".
func (e *Error) Error() string {
	if e == nil {
		return "nabla: <nil error>"
	}
	what := "unknown error"
	if e.Err != nil {
		what = e.Err.Error()
	}
	msg := "nabla: " + e.Op + ": " + what
	if e.Site != "" {
		msg += " at " + e.Site
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// libraryDirs are the folders whose non-test frames are nabla's internals,
// skipped when naming the user's file:line.
var libraryDirs = func() []string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil
	}
	root := filepath.Dir(filepath.Dir(file))
	var dirs []string
	for _, d := range []string{"graph", "ops", "compile", "vm", "nn", "gradcheck", "distributions", "onnx", "optimize"} {
		dirs = append(dirs, root+"/"+d+"/")
	}
	return dirs
}()

func isLibraryFile(file string) bool {
	if strings.HasSuffix(file, "_test.go") {
		return false
	}
	for _, d := range libraryDirs {
		if strings.HasPrefix(file, d) {
			return true
		}
	}
	return false
}

// site records the call stack cheaply; it is resolved to the first frame in
// user code only when asked for (errors, DOT, provenance).
type site struct {
	pcs []uintptr
}

func callers() site {
	var buf [24]uintptr
	n := runtime.Callers(3, buf[:])
	return site{pcs: append([]uintptr(nil), buf[:n]...)}
}

// String is the base name and line of the first frame outside nabla's own
// packages and the functions marked by Helper, e.g. "model.go:42".
func (s site) String() string {
	if len(s.pcs) == 0 {
		return ""
	}
	frames := runtime.CallersFrames(s.pcs)
	for {
		f, more := frames.Next()
		if userFrame(f) {
			return filepath.Base(f.File) + ":" + strconv.Itoa(f.Line)
		}
		if !more {
			return ""
		}
	}
}

// userFrame reports whether f is the user's: outside nabla's packages,
// the functions marked by Helper, and the runtime's, testing's and
// reflect's (a builder called through reflect.Value.Call names the line
// that called it).
func userFrame(f runtime.Frame) bool {
	runtimeFrame := strings.HasPrefix(f.Function, "runtime.") || strings.HasPrefix(f.Function, "testing.") ||
		strings.HasPrefix(f.Function, "reflect.")
	return f.File != "" && !runtimeFrame && !isLibraryFile(f.File) && !isHelper(f.Function)
}

// calledFunction is the name of the function the user called, for an
// error raised deep inside it, and the user's file:line, as CallerSite
// names it. The function is the outermost of nabla's on the stack below
// the user's frame (its caller's caller's, for Poisoned: the first frame
// above graph), or, where there is none (a builder of the user's own
// calling Poisoned), the first frame above graph's.
func calledFunction() (name, site string) {
	var buf [32]uintptr
	n := runtime.Callers(3, buf[:]) // skip runtime.Callers, calledFunction and its caller in graph
	frames := runtime.CallersFrames(buf[:n])
	var first, outer string
	for {
		f, more := frames.Next()
		if first == "" {
			first = f.Function
		}
		if userFrame(f) {
			site = filepath.Base(f.File) + ":" + strconv.Itoa(f.Line)
			break
		}
		if isLibraryFile(f.File) {
			outer = f.Function
		}
		if !more {
			break
		}
	}
	if outer == "" {
		outer = first
	}
	return funcName(outer), site
}

// funcName is a function's name as errors give it, from the runtime's
// ("github.com/nabla-go/nabla/nn.(*Linear).Forward.func1"): its package's
// name and its own, a method's with its type's ("nn.Linear.Forward"),
// without closures' suffixes, and without the package for graph's and
// ops' functions ("LogDet"), as their ops' names are.
func funcName(full string) string {
	name := full[strings.LastIndex(full, "/")+1:]
	if i := strings.Index(name, "["); i >= 0 { // type parameters
		if j := strings.LastIndex(name, "]"); j > i {
			name = name[:i] + name[j+1:]
		}
	}
	name = strings.NewReplacer("(*", "", "(", "", ")", "").Replace(name)
	parts := strings.Split(name, ".")
	for len(parts) > 2 && closure(parts[len(parts)-1]) {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 1 && (parts[0] == "ops" || parts[0] == "graph") {
		parts = parts[1:]
	}
	return strings.Join(parts, ".")
}

// closure reports whether part of a function's runtime name is a
// closure's ("func1", "2", "gowrap1").
func closure(part string) bool {
	return strings.HasPrefix(part, "func") || strings.HasPrefix(part, "gowrap") || strings.Trim(part, "0123456789") == ""
}

// CallerSite returns the file:line of the first caller outside nabla's
// packages and the functions marked by Helper, for errors raised by other
// nabla packages (compile, vm, nn).
func CallerSite() string { return callers().String() }

func newError(op string, s site, format string, args ...any) *Error {
	return &Error{Op: op, Err: fmt.Errorf(format, args...), Site: s.String()}
}

// helperPCs holds the call sites of Helper seen so far, and helperNames the
// functions they mark: Helper finds a site in the first, cheaply, and
// resolves a new one's function name once.
var helperPCs, helperNames sync.Map

// Helper marks the function calling it as a helper, as testing.T's Helper
// does: the file:line that errors, DOT and provenance name for a node
// (Node.Site, CallerSite) skips the helper's frames and names the line
// that called it. Call it first thing in a function that builds nodes for
// its callers (a builder of custom ops, a block of layers), so that a
// mistake in their inputs points at their call. It is safe to call from
// any goroutine and costs a map lookup once the function is known.
func Helper() {
	var pc [1]uintptr
	if runtime.Callers(2, pc[:]) == 0 { // skip runtime.Callers and Helper
		return
	}
	if _, ok := helperPCs.Load(pc[0]); ok {
		return
	}
	f, _ := runtime.CallersFrames(pc[:]).Next()
	helperNames.Store(f.Function, struct{}{})
	helperPCs.Store(pc[0], struct{}{})
}

// isHelper reports whether Helper marked the function of that name.
func isHelper(function string) bool {
	_, ok := helperNames.Load(function)
	return ok
}

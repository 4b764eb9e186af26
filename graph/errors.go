package graph

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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
	msg := "nabla: " + e.Op + ": " + e.Err.Error()
	if e.Site != "" {
		msg += " at " + e.Site
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// libraryDirs are the folders whose non-test frames are nabla's internals,
// skipped when naming the user's file:line.
var libraryDirs = func() []string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil
	}
	root := filepath.Dir(filepath.Dir(file))
	var dirs []string
	for _, d := range []string{"graph", "ops", "compile", "vm", "nn", "gradcheck", "onnx"} {
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
// packages, e.g. "model.go:42".
func (s site) String() string {
	if len(s.pcs) == 0 {
		return ""
	}
	frames := runtime.CallersFrames(s.pcs)
	for {
		f, more := frames.Next()
		runtimeFrame := strings.HasPrefix(f.Function, "runtime.") || strings.HasPrefix(f.Function, "testing.")
		if f.File != "" && !runtimeFrame && !isLibraryFile(f.File) {
			return filepath.Base(f.File) + ":" + strconv.Itoa(f.Line)
		}
		if !more {
			return ""
		}
	}
}

// CallerSite returns the file:line of the first caller outside nabla's
// packages, for errors raised by other nabla packages (compile, vm, nn).
func CallerSite() string { return callers().String() }

func newError(op string, s site, format string, args ...any) *Error {
	return &Error{Op: op, Err: fmt.Errorf(format, args...), Site: s.String()}
}

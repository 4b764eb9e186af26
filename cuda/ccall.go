package cuda

import "github.com/ebitengine/purego"

// cCall calls C functions whose arguments are integers and pointers
// through an argument array it keeps, so that a call allocates nothing:
// the arguments of purego.SyscallN escape to the heap when given as a
// list, and purego's reflected functions allocate on every call. A run
// on a GPU makes its calls (launches, copies, products, graph launches,
// waits) through one. It is not safe for concurrent use: a backend's
// calls are serialised.
type cCall struct{ argv [24]uintptr }

// call calls the function at fn with args and returns its C int result.
func (c *cCall) call(fn uintptr, args ...uintptr) int32 {
	n := copy(c.argv[:], args)
	r, _, _ := purego.SyscallN(fn, c.argv[:n]...)
	return int32(r)
}

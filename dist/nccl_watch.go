package dist

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/nabla-go/nabla/graph"
)

// A rank that dies or skips a collective leaves the others' NCCL kernels
// waiting on the GPU, and a host waiting for the GPU's stream with them:
// MPI's bound on a collective (wait.go) does not see it. So each NCCL
// collective's call gives the device a Watch (graph.LibraryCall), which
// the device calls while it waits for work holding the call (package
// cuda polls its stream then): where NCCL reports an asynchronous error
// (ncclCommGetAsyncError: a remote rank's failure that it sees,
// ncclRemoteError, ncclSystemError…), or where the wait outlasts the
// Comm's timeout, the watch aborts the Comm's NCCL communicators
// (ncclCommAbort: their kernels exit, and the stream drains) and fails
// the Comm, as a timeout of MPI's does: the wait, and every later call,
// return the error.

// watchNCCL is the Watch of c's collective what on communicator n, the
// device having waited for its work for waited.
func (c *Comm) watchNCCL(what string, n *ncclComm, waited time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.failed != nil:
		// Failed by another call: its communicators must not hold the GPU.
		c.abortNCCL()
		return c.failed
	case c.closed:
		return nil // Close destroyed the communicator, done with its work
	}
	n.polls++
	var async int32
	if r := call(n.lib.commGetAsyncError, n.handle, uintptr(unsafe.Pointer(&async))); r != 0 {
		async = r
	}
	switch {
	case async != 0 && async != ncclInProgress:
		err := n.lib.error(fmt.Sprintf("%s on %v", what, c), "ncclCommGetAsyncError", n.handle, async)
		c.failed = fmt.Errorf("%w; NCCL's communicators are aborted, so this communicator is unusable and the process should exit", err)
		c.abortNCCL()
		return c.failed
	case c.timeout > 0 && waited > c.timeout:
		c.abortNCCL()
		return c.timedOut(what)
	case async == ncclInProgress:
		return graph.ErrInProgress
	}
	return nil
}

// abortNCCL aborts c's NCCL communicators, c.mu held: their work ends,
// and they are gone (Close does not destroy them).
func (c *Comm) abortNCCL() {
	for dev, n := range c.nccls {
		call(n.lib.commAbort, n.handle)
		delete(c.nccls, dev)
	}
}

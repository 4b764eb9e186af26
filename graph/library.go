package graph

import (
	"errors"
	"time"
)

// LibraryOp is the optional interface of an op that a device runs as a
// call of a library on the device's own buffers and stream (NCCL's
// collectives, in package dist), beside CUDAKernel's elementwise C: a
// machine on a device (package cuda) asks the op, once while it loads a
// program, for the call that computes the outputs, and queues that call,
// in order with the device's other work, on every run. Ops without it, or
// that decline, run on the host (their inputs copied down, Forward run,
// their outputs copied up).
type LibraryOp interface {
	// Library prepares the call computing the outputs, of types out, from
	// inputs of types in, on the device dev; or declines with (nil, nil),
	// and the op then runs on the host. An error fails the load.
	//
	// It is called while the program loads, with the device's context
	// current on the calling thread, never during a run: what the call
	// needs that is costly or collective (a communicator, made by every
	// rank together) is made here, and owned by the op's owner (the
	// device does not release it). A run only queues the call, and on a
	// GPU the first run's calls may be captured into a CUDA graph, which
	// later runs replay: the call must queue its work on stream and
	// return, doing nothing the capture forbids (a synchronisation, an
	// allocation).
	Library(dev LibraryDevice, in, out []Type) (*LibraryCall, error)
}

// LibraryDevice is the device a LibraryOp prepares its call for.
type LibraryDevice struct {
	// Ordinal is the GPU's index (CUDA's device ordinal).
	Ordinal int
	// HostStandIn is set on the cuda package's host stand-in for a GPU:
	// its buffers are host memory, and the call gets stream 0.
	HostStandIn bool
}

// LibraryCall is a LibraryOp's prepared call.
type LibraryCall struct {
	// Label names the call in a device's plans: "NCCL AllReduce(sum)".
	Label string
	// Identity says that the op is the identity on this device (a
	// collective of one rank): the device copies input k into output k
	// (of the same size), and Call is not used.
	Identity bool
	// ZeroOutputs asks the device to set the outputs to zeros before
	// the call (for a call that leaves them unwritten, as NCCL's Reduce
	// does on the ranks but the root).
	ZeroOutputs bool
	// Call queues the work on stream (a CUstream on a GPU, 0 on the host
	// stand-in), given the addresses of the inputs and outputs in device
	// memory (an output may be an input's buffer, where the op is an
	// InPlacer). Its error fails the run, named after the op's
	// instruction.
	Call func(in, out []uintptr, stream uintptr) error
	// Check, where set, is called before every run, those that replay
	// a recorded CUDA graph (which do not call Call) included: its error
	// fails the run before anything is queued (what Call needs is gone:
	// a communicator closed).
	Check func() error
	// Watch, where set, watches the call's work while the device waits
	// for it: a wait for queued work that holds the call (a download, a
	// sync) polls the device's stream rather than blocking, and calls
	// Watch between polls with the time waited so far, and once more when
	// the stream is done. It returns nil while nothing is wrong;
	// ErrInProgress where it knows that the call's work is not done yet
	// (the wait goes on); any other error where the library has given up
	// the call and ended its work, so that the stream drains (NCCL's
	// communicator aborted, on a remote rank's failure or past a
	// timeout). The device then waits for the stream, fails the wait with
	// the error, named after the op's instruction, and fails the
	// machine's later runs with it. Without Watch, waits block until the
	// work is done, however long that is.
	Watch func(waited time.Duration) error
}

// ErrInProgress is what a LibraryCall's Watch returns where it knows that
// the call's work is not done yet: on the cuda package's host stand-in,
// whose stream is the calling thread and so always done, a library can
// thus hold a wait as a GPU's stream would (the tests' fake NCCL does,
// through ncclCommGetAsyncError's ncclInProgress).
var ErrInProgress = errors.New("the library call is in progress")

package dist

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/nabla-go/nabla/graph"
)

// The collectives implement graph.LibraryOp: on a machine on a GPU
// (package cuda) each is one NCCL call on the GPU's buffers and stream,
// queued with the device's other work and captured in its CUDA graphs,
// rather than a host instruction (inputs copied down, MPI on host memory,
// outputs up). The NCCL communicator of a Comm and a device is made when
// the first program holding a collective loads on that device: by every
// rank together, as the collectives themselves are. A collective declines,
// and runs on the host as before, where NCCL does not load (see
// ncclCandidates; an NCCL older than 2.23 does not), and on the host
// stand-in for a GPU unless $NABLA_NCCL names a library. A Comm of one
// rank needs no NCCL: its collectives are device copies.

// forceNCCL makes a Comm of one rank use NCCL rather than copies, so that
// a machine with one GPU runs the real library: set by the tests alone.
var forceNCCL bool

// ncclComm is a Comm's NCCL communicator on one device.
type ncclComm struct {
	lib    *nccl
	handle uintptr // ncclComm_t
	polls  int64   // calls of its collectives' Watch, for the tests
}

// ncclFor returns c's communicator on dev, making it (with every other
// rank) on first use; nil, with no error, where the collectives decline
// NCCL there.
func (c *Comm) ncclFor(what string, dev graph.LibraryDevice) (*ncclComm, error) {
	c.mu.Lock()
	if err := c.usableLocked(what); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	n, made := c.nccls[dev]
	c.mu.Unlock()
	if made {
		return n, nil
	}
	named := ncclNamed() != ""
	if dev.HostStandIn && !named {
		return nil, nil // the stand-in's buffers are host memory: only a named NCCL takes them
	}
	lib, err := loadNCCL()
	switch {
	case err != nil && !named:
		return nil, nil // no NCCL: the collectives run on the host
	case err != nil:
		return nil, err // the library named does not load
	}
	var id [ncclIDBytes / 8]float64 // an ncclUniqueId, broadcast as 16 doubles: MPI copies their bytes
	if c.rank == 0 {
		if r := call(lib.getUniqueID, uintptr(unsafe.Pointer(&id))); r != 0 {
			return nil, lib.error(fmt.Sprintf("%s on %v", what, c), "ncclGetUniqueId", 0, r)
		}
	}
	if !c.alone() {
		b := buffer{ptr: unsafe.Pointer(&id), count: uintptr(len(id)), dtype: c.lib.float64}
		m := newCall(c.lib.bcast, c.lib.ibcast, b, b, uintptr(b.ptr), b.count, b.dtype, 0, c.lib.world)
		if err := c.collective(what+" (NCCL's id)", &m); err != nil {
			return nil, err
		}
	}
	n = &ncclComm{lib: lib}
	if r := call(lib.commInitRankScalable, uintptr(unsafe.Pointer(&n.handle)), uintptr(c.size), uintptr(c.rank), 1, uintptr(unsafe.Pointer(&id)), 0); r != 0 {
		return nil, lib.error(fmt.Sprintf("%s on %v", what, c), "ncclCommInitRankScalable", 0, r)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nccls == nil {
		c.nccls = map[graph.LibraryDevice]*ncclComm{}
	}
	c.nccls[dev] = n
	return n, nil
}

// ncclNamed is $NABLA_NCCL.
func ncclNamed() string { return getenvOS(ncclEnv) }

// usableLocked says why c's collectives cannot run, c.mu held: it is
// closed or failed.
func (c *Comm) usableLocked(what string) error {
	switch {
	case c.closed:
		return fmt.Errorf("dist: %s on %v after Close", what, c)
	case c.failed != nil:
		return c.failed
	}
	return nil
}

// closeNCCL destroys c's communicators, c.mu held, and returns the first
// error.
func (c *Comm) closeNCCL() error {
	var first error
	for dev, n := range c.nccls {
		if r := call(n.lib.commDestroy, n.handle); r != 0 && first == nil {
			first = n.lib.error(fmt.Sprintf("Close on %v", c), "ncclCommDestroy", n.handle, r)
		}
		delete(c.nccls, dev)
	}
	return first
}

// ncclType is NCCL's datatype of a float dtype.
func ncclType(t graph.Type) uintptr {
	if t.DType == graph.Float32 {
		return ncclFloat32
	}
	return ncclFloat64
}

// libraryCall prepares collective what (label in plans) of an input of
// type in on dev: a copy for a Comm of one rank, nil where NCCL is
// declined, else the call that fn makes with the communicator, once every
// rank has given the collective an input of in's size and dtype (see
// agree: NCCL, as MPI, takes each rank's count as given).
func (c *Comm) libraryCall(dev graph.LibraryDevice, in graph.Type, what, label string, fn func(n *ncclComm, in, out, stream uintptr) (string, int32)) (*graph.LibraryCall, error) {
	if c.alone() && !forceNCCL {
		return &graph.LibraryCall{Label: "copy (" + label + " of one rank)", Identity: true}, nil
	}
	n, err := c.ncclFor(what, dev)
	if n == nil || err != nil {
		return nil, err
	}
	if !c.alone() {
		if err := c.agreeOn(what, nil, in); err != nil {
			return nil, err
		}
	}
	usable := func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.usableLocked(what)
	}
	watch := func(waited time.Duration) error { return c.watchNCCL(what, n, waited) }
	return &graph.LibraryCall{Label: "NCCL " + label, Check: usable, Watch: watch, Call: func(in, out []uintptr, stream uintptr) error {
		if err := usable(); err != nil {
			return err
		}
		if name, r := fn(n, in[0], out[0], stream); r != 0 {
			return n.lib.error(fmt.Sprintf("%s on %v", what, c), name, n.handle, r)
		}
		return nil
	}}, nil
}

// Library is one ncclAllReduce (graph.LibraryOp); Mean is ncclAvg (NCCL
// 2.10 and later; the binding needs 2.23).
func (op AllReduceOp) Library(dev graph.LibraryDevice, in, _ []graph.Type) (*graph.LibraryCall, error) {
	red := uintptr(ncclSum)
	switch op.Reduction {
	case Max:
		red = ncclMax
	case Mean:
		red = ncclAvg
	}
	count, dtype := uintptr(in[0].Size()), ncclType(in[0])
	return op.Comm.libraryCall(dev, in[0], "AllReduce", op.DotLabel(), func(n *ncclComm, send, recv, stream uintptr) (string, int32) {
		return "ncclAllReduce", call(n.lib.allReduce, send, recv, count, dtype, red, n.handle, stream)
	})
}

// Library is one ncclBroadcast (graph.LibraryOp).
func (op BroadcastOp) Library(dev graph.LibraryDevice, in, _ []graph.Type) (*graph.LibraryCall, error) {
	count, dtype, root := uintptr(in[0].Size()), ncclType(in[0]), uintptr(op.Root)
	return op.Comm.libraryCall(dev, in[0], "Broadcast", op.DotLabel(), func(n *ncclComm, send, recv, stream uintptr) (string, int32) {
		return "ncclBroadcast", call(n.lib.broadcast, send, recv, count, dtype, root, n.handle, stream)
	})
}

// Library is one ncclReduce (graph.LibraryOp), the output zeroed first on
// the ranks but the root (where NCCL leaves it unwritten).
func (op ReduceToOp) Library(dev graph.LibraryDevice, in, _ []graph.Type) (*graph.LibraryCall, error) {
	count, dtype, root := uintptr(in[0].Size()), ncclType(in[0]), uintptr(op.Root)
	lc, err := op.Comm.libraryCall(dev, in[0], "ReduceTo", op.DotLabel(), func(n *ncclComm, send, recv, stream uintptr) (string, int32) {
		return "ncclReduce", call(n.lib.reduce, send, recv, count, dtype, ncclSum, root, n.handle, stream)
	})
	if lc != nil && !lc.Identity {
		lc.ZeroOutputs = op.Comm.Rank() != op.Root
	}
	return lc, err
}

// Library is one ncclAllGather (graph.LibraryOp).
func (op AllGatherOp) Library(dev graph.LibraryDevice, in, _ []graph.Type) (*graph.LibraryCall, error) {
	count, dtype := uintptr(in[0].Size()), ncclType(in[0])
	return op.Comm.libraryCall(dev, in[0], "AllGather", op.Name(), func(n *ncclComm, send, recv, stream uintptr) (string, int32) {
		return "ncclAllGather", call(n.lib.allGather, send, recv, count, dtype, n.handle, stream)
	})
}

// Library is one ncclReduceScatter (graph.LibraryOp); Mean is ncclAvg.
func (op ReduceScatterOp) Library(dev graph.LibraryDevice, in, out []graph.Type) (*graph.LibraryCall, error) {
	red := uintptr(ncclSum)
	if op.Reduction == Mean {
		red = ncclAvg
	}
	count, dtype := uintptr(out[0].Size()), ncclType(out[0])
	return op.Comm.libraryCall(dev, in[0], "ReduceScatter", op.DotLabel(), func(n *ncclComm, send, recv, stream uintptr) (string, int32) {
		return "ncclReduceScatter", call(n.lib.reduceScatter, send, recv, count, dtype, red, n.handle, stream)
	})
}

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// libraries is what a plan needs to ask the ops implementing
// graph.LibraryOp for their calls: the device they run on, and how to
// run the preparation with the device's context current. A plan without
// it (nil) plans no library call: those ops run on the host.
type libraries struct {
	dev     graph.LibraryDevice
	prepare func(f func() error) error
}

// library plans the call of a graph.LibraryOp, or reports that the op
// declines it (or the plan has no libraries): the op then runs on the
// host. Outputs the call leaves unwritten are zeroed first, by a kernel;
// an op that is the identity here is copies.
func (l *lowering) library(o graph.LibraryOp) (bool, error) {
	libs := l.p.libs
	if libs == nil {
		return false, nil
	}
	var call *graph.LibraryCall
	err := libs.prepare(func() (err error) {
		call, err = o.Library(libs.dev, slices.Clone(l.inT), slices.Clone(l.outT))
		return err
	})
	if err != nil || call == nil {
		return false, err
	}
	if call.Identity {
		for k, t := range l.outT {
			l.copy(l.out[k], l.in[k], t)
		}
		return true, nil
	}
	if call.Call == nil {
		return false, fmt.Errorf("the library call %q has no function", call.Label)
	}
	if call.ZeroOutputs {
		for k, t := range l.outT {
			sub := &lowering{p: l.p, out: []ref{l.out[k]}, outT: []graph.Type{t}, node: l.node}
			sub.kernels([]graph.CUDASource{{N: int64(t.Size()), Body: "out0[i] = 0;"}})
		}
	}
	args := append(slices.Clone(l.in), l.out...)
	l.p.steps = append(l.p.steps, step{kind: stepLibrary, lib: len(l.p.calls), args: args, n: int64(len(l.in))})
	l.p.calls = append(l.p.calls, *call)
	return true, nil
}

// checkLibraries calls every library call's Check before a run (those
// of the steps bind listed in e.checked, so that a plan without library
// calls costs a run nothing), and returns the first error, named after
// its instruction.
func (e *executable) checkLibraries() error {
	for _, i := range e.checked {
		s := e.plan.steps[i]
		if err := e.plan.calls[s.lib].Check(); err != nil {
			return e.stepError(s, err)
		}
	}
	return nil
}

// stepError is err of step s, named after its instruction.
func (e *executable) stepError(s step, err error) error {
	in := e.prog.Instructions()[s.instr]
	return fmt.Errorf("%s (node %v): %v", in.Name(), in.Node, err)
}

// libraryArgs are a library step's input and output addresses, filled at
// load so that a run allocates nothing.
type libraryArgs struct{ in, out []uintptr }

// bindLibrary fills a library step's addresses.
func (e *executable) bindLibrary(s step) libraryArgs {
	addrs := make([]uintptr, len(s.args))
	for i, r := range s.args {
		addrs[i] = uintptr(e.addr(r))
	}
	return libraryArgs{in: addrs[:s.n:s.n], out: addrs[s.n:]}
}

// describeLibrary describes a library step: "NCCL AllReduce(sum)(b0 → b1)".
func (pl *plan) describeLibrary(s step, refs []string) string {
	return fmt.Sprintf("library %s(%s → %s)", pl.calls[s.lib].Label, strings.Join(refs[:s.n], ", "), strings.Join(refs[s.n:], ", "))
}

// libraries are the GPU's: its ordinal, and preparations run with its
// context current.
func (b *gpuBackend) libraries() *libraries {
	return &libraries{dev: graph.LibraryDevice{Ordinal: b.ordinal}, prepare: b.prepare}
}

// libraries are the host stand-in's.
func (h *hostBackend) libraries() *libraries {
	return &libraries{dev: graph.LibraryDevice{HostStandIn: true}, prepare: func(f func() error) error { return f() }}
}

// prepare runs f with the backend's context current on the calling
// thread, outside any capture.
func (b *gpuBackend) prepare(f func() error) error {
	if err := b.enterUncaptured(); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	return f()
}

// callLibrary queues a library call on the backend's stream (captured,
// when a CUDA graph is being recorded).
func (b *gpuBackend) callLibrary(c *graph.LibraryCall, a libraryArgs) error {
	if err := b.enter(); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	return c.Call(a.in, a.out, b.stream)
}

// callLibrary runs a library call on host memory, with stream 0.
func (h *hostBackend) callLibrary(c *graph.LibraryCall, a libraryArgs) error {
	return c.Call(a.in, a.out, 0)
}

// Describe lists the steps of the program a machine on a device runs,
// instruction by instruction: kernels, products, copies, library calls
// ("library NCCL AllReduce(sum)(b3 → b4)") and the instructions left to
// the host ("host"). It fails for a machine on the CPU or on another
// kind of device.
func Describe(m *vm.Machine) (string, error) {
	if m == nil {
		return "", fmt.Errorf("cuda: Describe: the machine is nil")
	}
	e, ok := m.Executable().(*executable)
	if !ok {
		return "", fmt.Errorf("cuda: Describe: the machine does not run on a cuda.Device (it runs on %v)", m.Device())
	}
	return e.plan.describe(e.prog), nil
}

// Replaying says whether a machine on a GPU replays a CUDA graph of its
// steps, recorded by its first run, on its later runs: nil where it does,
// else why not (no run yet, an instruction on the host, a run checked or
// timed, the capture's failure, or a device other than a GPU).
func Replaying(m *vm.Machine) error {
	if m == nil {
		return fmt.Errorf("cuda: Replaying: the machine is nil")
	}
	e, ok := m.Executable().(*executable)
	switch {
	case !ok:
		return fmt.Errorf("cuda: Replaying: the machine does not run on a cuda.Device (it runs on %v)", m.Device())
	case e.replay == nil:
		return errors.New("cuda: no CUDA graph: the machine has not run yet, or has an instruction on the host")
	case e.captureErr != nil:
		return e.captureErr
	}
	if _, gpu := e.dev.be.(*gpuBackend); !gpu {
		return fmt.Errorf("cuda: no CUDA graph on %v", e.dev)
	}
	return nil
}

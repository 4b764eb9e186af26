package graph

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/internal/kernel/parallel"
)

// Exec is what a machine lends an op's kernel while it runs: worker
// goroutines for parallel loops, and state that lives as long as the
// machine (a matrix product's packing buffers, say), so that kernels use
// every core without allocating per run; and, for ops that run subgraphs,
// a Runner for each. A nil *Exec is valid and serial: Parallel runs the
// task on the calling goroutine and State makes a fresh value each time.
// Constant folding and gradcheck run kernels so. It is built on the
// kernels' own parallel.Exec (see Kernel), so that the kernels below the
// IR, the matrix product among them, need not know the IR.
//
// An Exec belongs to one machine, and so to one goroutine at a time.
type Exec struct {
	kernel  *parallel.Exec
	runners []Runner // the running op's subgraphs (see WithRunners)
}

// Workers is a pool of goroutines that runs the parts of a task. The vm
// package provides one per machine.
type Workers = parallel.Workers

// Task is a unit of parallel work: Do computes one part. Parts of one run
// execute concurrently and must write disjoint memory. Pass a pointer the
// kernel keeps (in State, say) rather than a fresh value: converting a new
// value to an interface allocates.
type Task = parallel.Task

// NewExec returns an Exec whose parallel loops run on workers (nil:
// serially).
func NewExec(workers Workers) *Exec {
	return &Exec{kernel: parallel.NewExec(workers)}
}

// Threads is the number of goroutines Parallel spreads parts over: 1 for a
// nil or serial Exec.
func (e *Exec) Threads() int { return e.Kernel().Threads() }

// Parallel calls task.Do(part) for each part in [0, parts) and returns when
// all are done: across the workers, or in order on the calling goroutine
// when there is one thread or one part.
func (e *Exec) Parallel(parts int, task Task) { e.Kernel().Parallel(parts, task) }

// Kernel returns the workers and state as the kernels below the IR take
// them: nil (serial) for a nil Exec.
func (e *Exec) Kernel() *parallel.Exec {
	if e == nil {
		return nil
	}
	return e.kernel
}

// State returns the value kept under key for the life of the machine,
// calling init to make it on first use. Keys are compared as map keys: use
// a value of an unexported type of the kernel's package, as context keys
// are. On a nil Exec, State returns a fresh init() each call. A nil init
// makes nil.
func (e *Exec) State(key any, init func() any) any { return e.Kernel().State(key, init) }

// ExecForwarder is implemented by ops whose kernel can use an Exec's
// workers and state. A machine calls ForwardExec instead of Forward; with
// a nil Exec it must compute what Forward computes. The results must not
// depend on the number of threads unless the op's documentation says so.
type ExecForwarder interface {
	ForwardExec(e *Exec, out *tensor.Dense, in []*tensor.Dense) error
}

// MultiExecForwarder is ExecForwarder for multi-output ops: a machine
// calls ForwardExec instead of Forward.
type MultiExecForwarder interface {
	ForwardExec(e *Exec, out []*tensor.Dense, in []*tensor.Dense) error
}

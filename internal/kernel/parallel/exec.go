package parallel

// Task is a unit of parallel work: Do computes one part. Parts of one run
// execute concurrently and must write disjoint memory. Pass a pointer the
// kernel keeps (in State, say) rather than a fresh value: converting a new
// value to an interface allocates.
type Task interface {
	Do(part int)
}

// Workers is a pool of goroutines that runs the parts of a task; Pool is
// one.
type Workers interface {
	// Threads is the number of goroutines that run a task's parts,
	// the caller's included.
	Threads() int
	// Run calls task.Do(part) for every part in [0, parts), spread over
	// the pool and the calling goroutine, and returns when all are done.
	Run(parts int, task Task)
}

// Exec lends kernels a pool's workers and state kept for the pool's owner
// (a matrix product's packing buffers, say), so kernels use every core
// without allocating per call. A nil *Exec is valid and serial: Parallel
// runs the task on the calling goroutine and State makes a fresh value
// each time. An Exec belongs to one goroutine at a time.
type Exec struct {
	workers Workers
	state   map[any]any
}

// NewExec returns an Exec whose parallel loops run on workers (nil:
// serially).
func NewExec(workers Workers) *Exec {
	return &Exec{workers: workers, state: map[any]any{}}
}

// Threads is the number of goroutines Parallel spreads parts over: 1 for a
// nil or serial Exec.
func (e *Exec) Threads() int {
	if e == nil || e.workers == nil {
		return 1
	}
	return max(e.workers.Threads(), 1)
}

// Parallel calls task.Do(part) for each part in [0, parts) and returns when
// all are done: across the workers, or in order on the calling goroutine
// when there is one thread or one part.
func (e *Exec) Parallel(parts int, task Task) {
	if parts <= 0 || task == nil {
		return
	}
	if parts == 1 || e.Threads() == 1 {
		for p := range parts {
			task.Do(p)
		}
		return
	}
	e.workers.Run(parts, task)
}

// State returns the value kept under key for the life of the Exec,
// calling init to make it on first use. Keys are compared as map keys: use
// a value of an unexported type of the kernel's package, as context keys
// are. On a nil Exec, State returns a fresh init() each call. A nil init
// makes nil.
func (e *Exec) State(key any, init func() any) any {
	if init == nil {
		init = func() any { return nil }
	}
	if e == nil {
		return init()
	}
	v, ok := e.state[key]
	if !ok {
		v = init()
		e.state[key] = v
	}
	return v
}

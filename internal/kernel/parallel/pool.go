package parallel

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Pool runs the parts of a task on its goroutines and the caller's. It
// implements Workers. Run is for one goroutine at a time (the
// machine's); Close stops the goroutines.
//
// A worker that has finished its parts, and the caller waiting for the
// workers' parts, spin for up to spinFor before they sleep: a sleeping
// goroutine takes tens of microseconds to wake on a virtual machine,
// which is the time of a whole part of the matrix products of a small
// network's step, and those steps run a product every few microseconds.
type Pool struct {
	threads int
	workers []worker
	done    sync.WaitGroup
	pending atomic.Int64 // workers' shares of the current Run not yet done

	// The task of the current Run, read by the workers once they see
	// its generation.
	task   Task
	parts  int64
	next   atomic.Int64
	gen    atomic.Uint64 // the current Run's number and helpers (genOf); Close bumps it too
	closed atomic.Bool

	panicOnce sync.Once
	panicked  any // the first panic of a part, re-raised by Run
	closeOnce sync.Once
}

// A worker is one of the pool's goroutines.
type worker struct {
	state atomic.Int32     // awake or asleep
	wake  chan struct{}    // a sleeping worker's signal, buffered
	_     [64 - 4 - 8]byte // keep workers' states on separate cache lines
}

const (
	awake = iota
	asleep
)

// A generation word holds a Run's number above helperBits and, below, how
// many workers take part in it (the first ones): a worker reads both at
// once, so it never takes part in a Run by another's count.
const helperBits = 24

func genOf(run uint64, helpers int) uint64 { return run<<helperBits | uint64(helpers) }
func helpersOf(gen uint64) int             { return int(gen & (1<<helperBits - 1)) }

// spinFor is how long an idle worker, or a caller waiting on the
// workers, polls before it sleeps.
const spinFor = 50 * time.Microsecond

// New starts a pool of threads goroutines in all: threads-1 workers beside
// the goroutine that calls Run. threads < 1 means 1.
func New(threads int) *Pool {
	p := &Pool{threads: max(threads, 1)}
	p.workers = make([]worker, p.threads-1)
	for i := range p.workers {
		p.workers[i].wake = make(chan struct{}, 1)
		go p.worker(i)
	}
	return p
}

// Threads is the number of goroutines that run a task's parts.
func (p *Pool) Threads() int { return p.threads }

// Run calls task.Do(part) for every part in [0, parts) and returns when
// all are done. Parts are handed out in order, one at a time, to whichever
// goroutine is free. A part that panics makes Run panic with the same
// value (wrapped with its part number) after the others finish.
func (p *Pool) Run(parts int, task Task) {
	if parts <= 0 {
		return
	}
	helpers := min(p.threads, parts) - 1
	p.task, p.parts, p.panicked, p.panicOnce = task, int64(parts), nil, sync.Once{}
	p.next.Store(0)
	p.done.Add(helpers)
	p.pending.Store(int64(helpers))
	// Publishes the fields above to the workers that see it.
	p.gen.Store(genOf(p.gen.Load()>>helperBits+1, helpers))
	for i := range helpers {
		p.rouse(i)
	}
	p.work()
	for start, i := time.Now(), 0; p.pending.Load() > 0; i++ {
		if i%64 == 63 && time.Since(start) > spinFor {
			break
		}
		runtime.Gosched()
	}
	p.done.Wait()
	p.task = nil
	if p.panicked != nil {
		panic(p.panicked)
	}
}

// rouse signals worker i if it sleeps; a spinning one sees the new
// generation by itself.
func (p *Pool) rouse(i int) {
	if w := &p.workers[i]; w.state.CompareAndSwap(asleep, awake) {
		w.wake <- struct{}{}
	}
}

// work does parts until none is left.
func (p *Pool) work() {
	for {
		part := p.next.Add(1) - 1
		if part >= p.parts {
			return
		}
		p.do(int(part))
	}
}

func (p *Pool) do(part int) {
	defer func() {
		if r := recover(); r != nil {
			p.panicOnce.Do(func() { p.panicked = fmt.Sprintf("part %d: %v", part, r) })
			p.next.Store(p.parts) // hand out no more parts
		}
	}()
	p.task.Do(part)
}

// worker is the loop of worker i: wait for a generation it takes part
// in, do parts, repeat until Close.
func (p *Pool) worker(i int) {
	var seen uint64 // New made the pool at generation 0
	for {
		seen = p.await(i, seen)
		if p.closed.Load() {
			return
		}
		if i < helpersOf(seen) {
			p.work()
			p.pending.Add(-1)
			p.done.Done()
		}
	}
}

// await returns the first generation after seen: spinning a while, then
// asleep until Run or Close rouses worker i.
func (p *Pool) await(i int, seen uint64) uint64 {
	for start, n := time.Now(), 0; ; n++ {
		if g := p.gen.Load(); g != seen {
			return g
		}
		if n%64 == 63 && time.Since(start) > spinFor {
			break
		}
		runtime.Gosched()
	}
	w := &p.workers[i]
	w.state.Store(asleep)
	if g := p.gen.Load(); g != seen && w.state.CompareAndSwap(asleep, awake) {
		return g // a Run began before the worker slept: nobody sends
	}
	<-w.wake // rouse swapped the state and sends
	return p.gen.Load()
}

// Close stops the worker goroutines. The pool must not be used after.
func (p *Pool) Close() {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		p.gen.Store(genOf(p.gen.Load()>>helperBits+1, 0))
		for i := range p.workers {
			p.rouse(i)
		}
	})
}

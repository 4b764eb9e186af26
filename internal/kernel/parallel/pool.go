package parallel

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Pool runs the parts of a task on its goroutines and the caller's. It
// implements Workers. Run is for one goroutine at a time (the
// machine's); Close stops the goroutines.
type Pool struct {
	threads int
	wake    []chan struct{} // one per worker goroutine; closed by Close
	done    sync.WaitGroup

	// The task of the current Run, read by the workers after a wake-up.
	task  Task
	parts int64
	next  atomic.Int64

	panicOnce sync.Once
	panicked  any // the first panic of a part, re-raised by Run
	closeOnce sync.Once
}

// New starts a pool of threads goroutines in all: threads-1 workers beside
// the goroutine that calls Run. threads < 1 means 1.
func New(threads int) *Pool {
	p := &Pool{threads: max(threads, 1)}
	p.wake = make([]chan struct{}, p.threads-1)
	for i := range p.wake {
		p.wake[i] = make(chan struct{})
		go p.worker(p.wake[i])
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
	for _, w := range p.wake[:helpers] {
		w <- struct{}{}
	}
	p.work()
	p.done.Wait()
	p.task = nil
	if p.panicked != nil {
		panic(p.panicked)
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

func (p *Pool) worker(wake chan struct{}) {
	for range wake {
		p.work()
		p.done.Done()
	}
}

// Close stops the worker goroutines. The pool must not be used after.
func (p *Pool) Close() {
	p.closeOnce.Do(func() {
		for _, w := range p.wake {
			close(w)
		}
	})
}

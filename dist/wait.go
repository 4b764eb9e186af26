package dist

import (
	"fmt"
	"os"
	"runtime"
	"time"
	"unsafe"
)

// How a rank waits for a collective. MPI cannot cancel a collective, and
// a rank that crashed or skipped one leaves the others' call waiting
// forever, so that no goroutine may wait in MPI past the Comm's timeout
// and still return. Two ways keep that bound:
//
//   - blocking: the blocking function (MPI_Allreduce, ...) called on a
//     goroutine of the Comm's own, the caller thread, which takes one
//     call at a time; the caller waits for its result, and for the
//     Comm's timer. At the timeout the Comm fails and the caller thread
//     is left in MPI, its buffers kept alive. purego's call is a cgo call,
//     so the Go scheduler runs the program's other goroutines meanwhile;
//     a direct call from the caller's goroutine would be as cheap but
//     could not return at the timeout.
//   - polling: the nonblocking twin (MPI_Iallreduce, ...) started on the
//     caller's goroutine, then MPI_Test until done, as wait describes.
//
// Blocking is the faster on a quiet machine: Open MPI's blocking
// all-reduce takes a ring or recursive doubling tuned per size (its
// "tuned" component), its nonblocking one the generic schedules of
// libnbc; a C program on this 2-core machine took 0.14 ms for MPI_Allreduce
// of 1 MB against 0.24 ms for MPI_Iallreduce polled, 0.62 against 1.15
// ms for 4 MB, 6.3 against 9.2 ms for 16 MB. The handoff to the caller
// thread adds two channel operations and a timer's reset, 1 µs of
// processor time a call (BenchmarkHandoff's abs), and what the Go
// runtime's other threads do around it, which depends on GOMAXPROCS.
// Where it is 1 (Go's choice where Open MPI's mpirun binds each rank to
// one core), little within the call: any cgo call that lasts, direct or
// handed off, has the runtime take its P back after 20–40 µs and wake a
// thread to look for work (BenchmarkHandoff's memcmp, as long as a 1 MB
// all-reduce, on one core: 0.3–0.6 context switches a call either way;
// TestAllReduceOverhead's in-process column); but the runtime's monitor
// then wakes every 20 µs through the computing that follows, which
// costs more than the call (see minProcs: Init makes GOMAXPROCS 2).
// Where it is 2 or more, each of the handoff's two wake-ups finds an
// idle P and wakes a thread to spin for work: 1.7–2.1 context switches
// and 20–30 µs of processor time a call, against 0.2–0.3 and none for a
// direct call; polling, which has none, is slower still at these sizes.
// From pollFrom bytes on, polling is the faster (64 MB: 36.6 ms polled,
// 43.2 ms blocking), and it is taken.
//
// Polling is also taken where the machine runs more ranks than cpus
// (Comm.share), where a waiting rank must give its core up to the rank
// it waits for, which the polling does. A machine crowded by other work
// does not change the choice: W1's step on two ranks, the load at 8–9 on
// this 2-core machine, took 2.1–2.5 ms blocking against 2.5–4.0 ms
// polling, which yields the core between polls there (runs interleaved).
const pollFrom = 32 << 20

// How wait polls: without pause for spinFor (a collective whose ranks
// arrive together finishes within it); then yielding the processor
// between polls while other threads want it, and without pause
// otherwise, as MPI's blocking calls poll; after napAfter, sleeping
// napFor between polls, so that a long wait (a rank writing a
// checkpoint) does not burn a core. Other threads want the processor
// where this machine runs more ranks than it has cpus (Comm.share: a rank
// waited for may need this core, and Open MPI's mpi_yield_when_idle
// yields for them alike), and while more threads are runnable on it than
// it has cpus (crowded, read again every recheck): a rank that yields on
// a crowded machine is owed the processor when its message comes, and
// one that yields on a quiet machine hands its core to whatever wakes for
// a moment (a 1 MB all-reduce took twice as long).
const (
	spinFor  = 50 * time.Microsecond
	recheck  = time.Millisecond
	napAfter = time.Second
	napFor   = 100 * time.Microsecond
)

// Waiting modes, for tests and benchmarks (waiter.mode): each collective
// chooses (auto), or every one blocks, or every one polls; or, for
// benchmarks alone, every one calls the blocking function on the
// caller's goroutine, as a C program would, without the timeout's bound.
const (
	waitAuto = iota
	waitBlock
	waitPoll
	waitDirect
)

// mpiCall is a collective's C call: the blocking function, its
// nonblocking twin (the same arguments, then a request), the n
// arguments, the bytes each rank sends (which choose the way to wait)
// and the buffers, kept alive while MPI may write to them.
type mpiCall struct {
	fn, nonblocking uintptr
	args            [9]uintptr // room for the request
	n               int
	bytes           int
	keep            [2]unsafe.Pointer
}

// waiter is the state of a Comm's waiting, guarded by its lock. MPI
// writes req and done, so they live in the Comm, on the heap, which does
// not move; a goroutine's stack moves as it grows or shrinks, which
// would leave MPI writing where the variables were.
type waiter struct {
	mode  int           // waitAuto, waitBlock, waitPoll or waitDirect
	spent time.Duration // in MPI's collectives, waiting included, for benchmarks
	// job is the call in progress, handed to the caller thread through
	// work; its result comes back through result. The thread is started
	// at the first blocking call; timer is the watchdog of its calls.
	job    mpiCall
	work   chan struct{}
	result chan int32
	timer  *time.Timer
	// req, done and testArgs are the request of a nonblocking call in
	// progress, MPI_Test's flag and its arguments.
	req      uintptr
	done     int32
	testArgs [3]uintptr
	// load is /proc/loadavg, kept open, and loadBuf the buffer it is
	// read into (crowded allocates nothing).
	load    *os.File
	loadBuf [128]byte
}

// collective runs the collective m (nil for a single rank) and waits for
// it, at most c's timeout. It is a no-op for a single rank (the callers
// copy their input themselves).
func (c *Comm) collective(what string, m *mpiCall) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return fmt.Errorf("dist: %s on %v after Close", what, c)
	case c.failed != nil:
		return c.failed
	case c.alone():
		return nil
	}
	c.job = *m
	start := time.Now()
	var err error
	switch {
	case c.mode == waitDirect:
		if r := call(c.job.fn, c.job.args[:c.job.n]...); r != 0 {
			err = c.mpiError(what, r)
		}
	case c.blocks(m.bytes):
		err = c.block(what)
	default:
		err = c.poll(what)
	}
	c.spent += time.Since(start)
	if c.failed == nil {
		// Done with the buffers; a failed Comm keeps them, as MPI may
		// still write to them.
		c.job.keep = [2]unsafe.Pointer{}
	}
	return err
}

// poll starts c.job's nonblocking function and waits for it.
func (c *Comm) poll(what string) error {
	c.req = 0
	c.job.args[c.job.n] = uintptr(unsafe.Pointer(&c.req))
	if r := call(c.job.nonblocking, c.job.args[:c.job.n+1]...); r != 0 {
		return c.mpiError(what, r)
	}
	return c.wait(what)
}

// blocks reports whether a collective sending the given bytes calls the
// blocking function (see pollFrom).
func (c *Comm) blocks(bytes int) bool {
	switch c.mode {
	case waitBlock:
		return true
	case waitPoll:
		return false
	}
	return bytes < pollFrom && !c.share
}

// block hands c.job to the caller thread, starting it at the first call,
// and waits for its result, at most c's timeout.
func (c *Comm) block(what string) error {
	if c.work == nil {
		c.work, c.result = make(chan struct{}), make(chan int32, 1)
		c.timer = time.NewTimer(time.Hour)
		c.timer.Stop()
		go c.serve(c.work, c.result)
	}
	c.work <- struct{}{}
	var r int32
	if c.timeout <= 0 {
		r = <-c.result
	} else {
		c.timer.Reset(c.timeout)
		select {
		case r = <-c.result:
			c.timer.Stop()
		case <-c.timer.C:
			// The caller thread stays in MPI, holding c.job's buffers;
			// nothing calls MPI again (the Comm has failed).
			return c.timedOut(what)
		}
	}
	if r != 0 {
		return c.mpiError(what, r)
	}
	return nil
}

// serve is the caller thread: it calls c.job's blocking function for
// each signal on work and sends its result. A goroutine, not locked to an
// OS thread (runtime.LockOSThread): the handoff then runs it on the
// caller's thread at once, where a locked thread must be woken by the
// operating system (BenchmarkHandoff: 0.7 µs a call unlocked, 13–58 µs
// locked, the machine's load at 9); MPI_THREAD_SERIALIZED lets any
// thread call.
func (c *Comm) serve(work <-chan struct{}, result chan<- int32) {
	for range work {
		job := &c.job
		keep := job.keep // held until the call returns, even after a timeout
		r := call(job.fn, job.args[:job.n]...)
		runtime.KeepAlive(keep)
		result <- r
	}
}

// timedOut marks c failed by a collective that did not finish within its
// timeout, and returns the error.
func (c *Comm) timedOut(what string) error {
	c.failed = fmt.Errorf("dist: %s on %v did not finish within %v: another rank failed, exited, or did not make the same collective calls in the same order; "+
		"MPI cannot cancel a collective, so this communicator is unusable and the process should exit", what, c, c.timeout)
	return c.failed
}

// wait polls the request c.req with MPI_Test until it completes or c's
// timeout passes.
func (c *Comm) wait(what string) error {
	start := time.Now()
	c.done = 0
	// The same arguments for every poll, in the Comm: a variadic slice
	// made at each call would be allocated by each.
	c.testArgs = [3]uintptr{uintptr(unsafe.Pointer(&c.req)), uintptr(unsafe.Pointer(&c.done)), c.lib.statusIgnore}
	polite, checked := c.share, -recheck
	for i := 0; ; i++ {
		if r := call(c.lib.test, c.testArgs[:]...); r != 0 {
			return c.mpiError(what, r)
		}
		if c.done != 0 {
			return nil
		}
		if i < 16 {
			continue
		}
		waited := time.Since(start)
		switch {
		case c.timeout > 0 && waited > c.timeout:
			return c.timedOut(what)
		case waited > napAfter:
			time.Sleep(napFor)
		case waited > spinFor:
			if !c.share && waited-checked >= recheck {
				polite, checked = c.crowded(), waited
			}
			if polite {
				yield()
			}
		}
	}
}

package dist

import (
	"fmt"
	"os"
	"time"
	"unsafe"
)

// How a rank waits for a collective. MPI cannot cancel a collective, and
// a rank that crashed or skipped one leaves the others' call waiting
// forever, so that no goroutine may wait in MPI past the Comm's timeout
// and still return. A collective starts MPI's nonblocking twin
// (MPI_Iallreduce, ...) on the caller's goroutine and polls it with
// MPI_Test until done, at most the timeout, as wait describes. Each call
// into MPI is then short: the Go runtime takes no P back during it and
// wakes no thread around it.
//
// The blocking function (MPI_Allreduce, ...) handed to a goroutine of
// the Comm's own, while the caller waited for its result and for a timer,
// kept the bound too, and dist took that way below 32 MB until polling
// was measured against it: it cost a Go process more than the call.
// With a P idle (GOMAXPROCS 2), each handoff readied a goroutine and woke
// a thread to spin on the rank's one core. On two ranks of this 2-vCPU
// machine (TestAllReduceOverhead, quiet), the blocking call handed off
// took 0.26 ms for 1 MB and 1.49 ms for 4 MB, with 4.7 context switches a
// call at 1 MB, against 0.18 and 1.12 ms for the same call made through
// cgo from a Go program without a handoff, 0.17 and 1.10 ms from C;
// polled (Open MPI's ring: openMPISettings), dist took 0.17 and 0.78 ms.
// W1's training step on two ranks ran at 53,000–71,000 samples/s blocking,
// 88,000–96,000 polled. MPICH's blocking and nonblocking all-reduces take
// the same time from C (1 MB: 0.23 and 0.22 ms).
//
// A waiting rank yields its core where the machine runs more ranks than
// cpus (Comm.share), or more runnable threads (crowded): see wait.

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
//
// wait reads the clock every clockEvery polls: on this machine purego's
// call costs about 0.1 µs a poll, and reading the clock 0.03 µs more.
const (
	clockEvery = 32
	spinFor    = 50 * time.Microsecond
	recheck    = time.Millisecond
	napAfter   = time.Second
	napFor     = 100 * time.Microsecond
)

// Waiting modes (waiter.mode): every collective polls; or, for benchmarks
// alone, every one calls the blocking function on the caller's goroutine,
// as a C program would, without the timeout's bound.
const (
	waitPoll = iota
	waitDirect
)

// mpiCall is a collective's C call: the blocking function, its
// nonblocking twin (the same arguments, then a request), the n
// arguments and the buffers, kept alive while MPI may write to them.
type mpiCall struct {
	fn, nonblocking uintptr
	args            [9]uintptr // room for the request
	n               int
	keep            [2]unsafe.Pointer
}

// waiter is the state of a Comm's waiting, guarded by its lock. MPI
// writes req and done, so they live in the Comm, on the heap, which does
// not move; a goroutine's stack moves as it grows or shrinks, which
// would leave MPI writing where the variables were.
type waiter struct {
	mode  int           // waitPoll or waitDirect
	spent time.Duration // in MPI's collectives, waiting included, for benchmarks
	job   mpiCall       // the call in progress
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
		if i%clockEvery != clockEvery-1 {
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

package dist

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/nabla-go/nabla/graph"
)

// DefaultTimeout bounds how long a collective waits for the other ranks
// before it returns an error (see WithTimeout): PyTorch's default for its
// process groups, and long enough for a rank that writes a checkpoint or
// evaluates while the others wait.
const DefaultTimeout = 10 * time.Minute

// Comm is the group of processes a program was launched as (MPI's
// MPI_COMM_WORLD): Size processes, numbered by Rank from 0. Its methods,
// and the collective ops built on it, are called by every rank in the
// same order. Calls from several goroutines take turns (a lock), but
// their order must still be the same on every rank: make a process's
// collectives, and run the machines whose programs hold them, from one
// goroutine.
type Comm struct {
	mu   sync.Mutex
	lib  *library // nil for a process not launched by an MPI launcher
	rank int
	size int
	// localRank and localSize place the process among the group's on its
	// machine (local.go).
	localRank, localSize int
	timeout              time.Duration
	failed               error // sticky: set by a timeout, returned by every later call
	closed               bool
	// share is whether a waiting rank yields its core between polls:
	// where this machine runs more ranks than it has cores, or the
	// launcher does not say how many it runs.
	share bool
	cpus  int // the machine's cpus online
	// nccls are the NCCL communicators made for the collectives on
	// devices (nccl_ops.go), destroyed by Close.
	nccls map[graph.LibraryDevice]*ncclComm
	waiter
}

// Option configures Init.
type Option func(*Comm)

// WithTimeout sets how long a collective waits for the other ranks
// before returning an error (DefaultTimeout without it; 0 or less waits
// forever). A rank that crashed, exited or skipped a collective would
// otherwise leave the others waiting: MPI cannot cancel a collective, so
// after a timeout the Comm is broken (the collective's request is left
// unfinished inside MPI), every later call returns the same error, and
// the process should exit.
func WithTimeout(d time.Duration) Option { return func(c *Comm) { c.timeout = d } }

// launcher is where a process learns its rank and the group's size.
type launcher struct {
	rank, size int
	openMPI    bool   // launched by Open MPI's mpirun (load its library first)
	from       string // the variables read, for errors
}

// maxCPU bounds the cpu numbers of a cpu list (Linux's NR_CPUS is at
// most 8192): a number past it is no cpu list's, and cannot overflow the
// count.
const maxCPU = 1 << 20

// cpuListSize is the number of cpus in a Linux cpu list ("0-15,32-47\n"
// is 32), or 0 where s is not one.
func cpuListSize(s string) int {
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		z, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a < 0 || z < a || z > maxCPU {
			return 0
		}
		n += z - a + 1
	}
	return n
}

// runnableOf reads the number of threads runnable on the machine from
// the text of Linux's /proc/loadavg ("0.90 1.58 2.05 3/456 12345": 3),
// allocating nothing.
func runnableOf(loadavg string) (int, bool) {
	s := loadavg
	var f string
	for range 4 {
		s = strings.TrimLeft(s, " \t\n")
		end := strings.IndexAny(s, " \t\n")
		if end < 0 {
			end = len(s)
		}
		f, s = s[:end], s[end:]
	}
	run, _, ok := strings.Cut(f, "/")
	n, err := strconv.Atoi(run)
	return n, ok && err == nil && n >= 0
}

// launchers are the environment variables MPI launchers set: Open MPI's
// mpirun; MPICH's, Intel MPI's and MVAPICH's (Hydra, PMI); Slurm's srun.
var launchers = []struct {
	rank, size string
	openMPI    bool
}{
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", true},
	{"PMI_RANK", "PMI_SIZE", false},
	{"SLURM_PROCID", "SLURM_NTASKS", false},
}

// localSizes are the variables in which launchers give the number of
// ranks on this machine: Open MPI's mpirun, MPICH's Hydra.
var localSizes = []string{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}

// sharesCores reports whether the ranks on this machine outnumber its
// cpus online, as the launcher's variables read through getenv say; true
// where none of them is set.
func sharesCores(getenv func(string) string, cpus int) bool {
	for _, v := range localSizes {
		if n, err := strconv.Atoi(getenv(v)); err == nil && n > 0 {
			return n > cpus
		}
	}
	return true
}

// detect reads the launcher's variables through getenv. ok is false for a
// process no launcher started.
func detect(getenv func(string) string) (l launcher, ok bool, err error) {
	for _, v := range launchers {
		rs, ss := getenv(v.rank), getenv(v.size)
		if rs == "" || ss == "" {
			continue
		}
		rank, err1 := strconv.Atoi(rs)
		size, err2 := strconv.Atoi(ss)
		from := fmt.Sprintf("%s=%s %s=%s", v.rank, rs, v.size, ss)
		if err1 != nil || err2 != nil || size < 1 || rank < 0 || rank >= size {
			return launcher{}, false, fmt.Errorf("dist: Init: the launcher's %s are not a rank in [0, size)", from)
		}
		return launcher{rank: rank, size: size, openMPI: v.openMPI, from: from}, true, nil
	}
	return launcher{}, false, nil
}

var (
	worldMu sync.Mutex
	world   *Comm
)

// Init joins the group of processes an MPI launcher started (mpirun,
// mpiexec, srun), reading this process's rank and the group's size from
// the launcher's environment (OMPI_COMM_WORLD_RANK and _SIZE for Open MPI,
// PMI_RANK and PMI_SIZE for MPICH's Hydra, SLURM_PROCID and SLURM_NTASKS
// for srun), loading MPI's shared library at run time (Open MPI's
// libmpi.so.40 or MPICH's libmpich.so.12; $NABLA_MPI_LIB names another)
// and initialising it.
//
// A process that no launcher started is rank 0 of 1, and Init loads no
// library: a program written for several processes runs unchanged as
// one, its collectives copying their input. Init called again returns
// the same Comm (with the options of the first call); after Close it is
// an error, as MPI cannot start twice in a process.
//
// In a group of several ranks, Init raises GOMAXPROCS to 2 where it is 1
// and the environment does not set it (a launcher that binds each rank to
// one core, as Open MPI's mpirun does, makes Go choose 1): see procsFor.
// Set GOMAXPROCS to keep a value of your own. Under Open MPI with 2 or 3
// ranks, Init sets OMPI_MCA_coll_libnbc_iallreduce_algorithm to 1 (the
// ring) where the environment does not set it: see openMPISettings.
func Init(opts ...Option) (*Comm, error) {
	worldMu.Lock()
	defer worldMu.Unlock()
	if world != nil {
		if world.isClosed() {
			return nil, errors.New("dist: Init after Close: MPI cannot be initialised twice in a process")
		}
		return world, nil
	}
	c := &Comm{size: 1, localSize: 1, timeout: DefaultTimeout}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	l, ok, err := detect(getenvOS)
	if err != nil {
		return nil, err
	}
	if ok {
		// MPI's libraries may take the fault signals from Go's runtime
		// (UCX, under MPICH, does as it loads), so that a nil dereference
		// would print their backtrace and end the process instead of
		// panicking: give them back.
		if err := keepGoSignals(func() error { return c.start(l) }); err != nil {
			return nil, err
		}
		if n := procsFor(runtime.GOMAXPROCS(0), os.Getenv("GOMAXPROCS"), c.size); n != runtime.GOMAXPROCS(0) {
			runtime.GOMAXPROCS(n)
		}
	}
	world = c
	return c, nil
}

// minProcs is the least GOMAXPROCS of a rank that calls collectives.
// With one P, the polling collectives (wait.go) are slower: a 1 MB
// all-reduce on two ranks of this 2-vCPU machine took 0.195 ms with one
// P against 0.169 ms with two, with 2.7 context switches a call against
// 1.0 (medians of 8 alternating launches; C, 0.128 ms). And a cgo call
// that lasts more than two ticks of the runtime's monitor thread (sysmon),
// as the user's own may, has the P taken back from it (no other P is idle
// to leave the call to); each time the monitor takes a P back it wakes
// every 20 µs again for 50 ticks or more, through the computing that
// follows, where it would otherwise sleep 10 ms. On a rank bound to one
// core each wake-up stops the computing thread, and on this virtual
// machine one cost the thread it stopped about 40 µs (a C thread sleeping
// 20 µs in a loop on the core of one that computes slowed it by 60–90%).
// With a second P, idle during the call, the monitor leaves the P to it
// for 10 ms and slows down (TestMonitorWakesAfterLongCall: 1–2 wake-ups
// per ms of computing from 0.3 ms after a long call, against 3–10 with
// one P).
const minProcs = 2

// procsFor is the GOMAXPROCS of a rank of a group of size ranks whose
// runtime chose n, env being the environment's GOMAXPROCS: minProcs where
// n is less, there are several ranks and env is empty (a value the user
// set is kept); n otherwise.
func procsFor(n int, env string, size int) int {
	if size > 1 && env == "" && n < minProcs {
		return minProcs
	}
	return n
}

// iallreduceEnv sets the algorithm of Open MPI's nonblocking all-reduce
// (its coll/libnbc component), the call every all-reduce of dist makes
// (see wait.go): 1 is the ring.
const iallreduceEnv = "OMPI_MCA_coll_libnbc_iallreduce_algorithm"

// openMPISettings are the environment variables (name, value) that Init
// sets for Open MPI in a group of size ranks, where the environment
// (getenv) does not set them. Open MPI's nonblocking all-reduce chooses,
// below 4 ranks, reduce-to-one-then-broadcast, whose root receives and
// sends every byte; the ring, which sends each rank's share alone, takes
// as many steps there (2 and 4 for 2 and 3 ranks) and moves half the
// bytes. On two ranks of this 2-vCPU machine, a C program polling
// MPI_Iallreduce took 0.14–0.39 ms for 1 MB with the ring against
// 0.25–0.57 ms without, 0.55–0.93 against 1.3–2.4 ms for 4 MB (and
// 0.17–0.20 and 0.97–1.02 ms for the blocking MPI_Allreduce); W1's
// training step on two ranks ran at 88,000–96,000 samples/s with it,
// 74,000–93,000 without (TestAllReduceOverhead, TestW1Scaling). From 4
// ranks on, Open MPI's own choice (reduce-scatter then all-gather for
// large messages) is kept.
func openMPISettings(size int, getenv func(string) string) [][2]string {
	if size < 2 || size >= 4 || getenv(iallreduceEnv) != "" {
		return nil
	}
	return [][2]string{{iallreduceEnv, "1"}}
}

// start loads MPI and initialises it for the launcher l.
func (c *Comm) start(l launcher) error {
	lib, err := loadLibrary(l)
	if err != nil {
		return err
	}
	c.lib = lib
	if lib.name == openMPIABIName {
		for _, kv := range openMPISettings(l.size, getenvOS) {
			if err := os.Setenv(kv[0], kv[1]); err != nil {
				return fmt.Errorf("dist: Init: setting %s: %w", kv[0], err)
			}
		}
	}
	var provided int32
	if r := call(lib.initThread, 0, 0, mpiThreadSerialized, uintptr(unsafe.Pointer(&provided))); r != 0 {
		return c.mpiError("Init", r)
	}
	if provided < mpiThreadSerialized {
		return fmt.Errorf("dist: Init: %s (%s) supports thread level %d, below MPI_THREAD_SERIALIZED (2), which a Go program needs (its goroutines move between threads)",
			lib.version(), lib.path, provided)
	}
	if r := call(lib.commSetErrhandler, lib.world, lib.errorsReturn); r != 0 {
		return c.mpiError("Init", r)
	}
	var rank, size int32
	if r := call(lib.commRank, lib.world, uintptr(unsafe.Pointer(&rank))); r != 0 {
		return c.mpiError("Init", r)
	}
	if r := call(lib.commSize, lib.world, uintptr(unsafe.Pointer(&size))); r != 0 {
		return c.mpiError("Init", r)
	}
	if int(rank) != l.rank || int(size) != l.size {
		return fmt.Errorf("dist: Init: %s (%s) says rank %d of %d, but the launcher's %s: is the library the launcher's? (set %s)",
			lib.version(), lib.path, rank, size, l.from, libraryEnv)
	}
	c.rank, c.size = int(rank), int(size)
	if err := c.findLocal(); err != nil {
		return err
	}
	c.cpus = onlineCPUs()
	c.share = sharesCores(getenvOS, c.cpus)
	return nil
}

// alone reports whether c's collectives need no MPI call: a process no
// launcher started, or the only rank of its group, whose collectives copy
// their input.
func (c *Comm) alone() bool { return c.lib == nil || c.size == 1 }

// Rank is this process's number in the group, from 0 to Size()-1 (0 for
// a nil Comm).
func (c *Comm) Rank() int {
	if c == nil {
		return 0
	}
	return c.rank
}

// Size is the number of processes in the group (0 for a nil or zero
// Comm, which Init never returns).
func (c *Comm) Size() int {
	if c == nil {
		return 0
	}
	return c.size
}

// Library names the MPI library in use ("Open MPI v4.1.4" and its path),
// or says that there is none (a single process).
func (c *Comm) Library() string {
	if c == nil {
		return "none (a nil Comm)"
	}
	if c.lib == nil {
		return "none (a single process, not launched by an MPI launcher)"
	}
	return c.lib.version() + " (" + c.lib.path + ")"
}

// String describes the communicator for errors: "rank 1 of 2".
func (c *Comm) String() string {
	if c == nil {
		return "a nil Comm"
	}
	return fmt.Sprintf("rank %d of %d", c.rank, c.size)
}

// Barrier returns once every rank has called it.
func (c *Comm) Barrier() error {
	if err := errUnmade("Barrier", c); err != nil {
		return err
	}
	if c.alone() {
		return c.collective("Barrier", nil)
	}
	return c.collective("Barrier", &mpiCall{fn: c.lib.barrier, nonblocking: c.lib.ibarrier, args: [9]uintptr{c.lib.world}, n: 1})
}

// Close destroys the Comm's NCCL communicators (made for collectives on
// GPUs) and finalises MPI once every rank calls it. A Comm whose collective
// timed out is not finalised (MPI_Finalize would wait for the lost rank):
// Close returns that error. Closing twice is not an error.
func (c *Comm) Close() error {
	if err := errUnmade("Close", c); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.failed != nil {
		return c.failed
	}
	err := c.closeNCCL()
	if c.lib == nil {
		return err
	}
	if r := call(c.lib.finalize); r != 0 {
		return c.mpiError("Close", r)
	}
	return err
}

func (c *Comm) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// errUnmade is the error of method what called on a nil Comm, or a zero
// one (dist.Comm{}, of no ranks), or nil for one Init made.
func errUnmade(what string, c *Comm) error {
	switch {
	case c == nil:
		return fmt.Errorf("dist: %s on a nil Comm: get one from dist.Init", what)
	case c.size == 0:
		return fmt.Errorf("dist: %s on a zero Comm (a dist.Comm{} of no ranks): get one from dist.Init", what)
	}
	return nil
}

// mpiError is the error of MPI call what returning code r, with MPI's own
// text for it.
func (c *Comm) mpiError(what string, r int32) error {
	return fmt.Errorf("dist: %s on %v: MPI error %d: %s", what, c, r, c.lib.errorText(r))
}

// count converts an element count to MPI's C int, or says it is too big.
func (c *Comm) count(what string, n int) (uintptr, error) {
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("dist: %s on %v: %d elements are more than MPI's count (a C int) holds; split the tensor", what, c, n)
	}
	return uintptr(n), nil
}

// getenvOS is os.Getenv, for detect.
func getenvOS(k string) string { return os.Getenv(k) }

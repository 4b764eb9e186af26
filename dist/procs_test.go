package dist

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// checkProcs: in a group of several ranks, Init leaves GOMAXPROCS at
// minProcs or more where the environment does not set it (Open MPI's
// mpirun binds each of two ranks to one core, where Go chooses 1).
func checkProcs(t *testing.T, c *Comm) {
	if c.Size() == 1 || os.Getenv("GOMAXPROCS") != "" {
		t.Skip("Init raises GOMAXPROCS in a group of several ranks, where the environment does not set it")
	}
	require.GreaterOrEqual(t, runtime.GOMAXPROCS(0), minProcs, "%v, %d cpus", c, runtime.NumCPU())
}

// checkSettings: under Open MPI, 2 and 3 ranks run with the ring for the
// nonblocking all-reduce, set by Init in the environment MPI reads.
func checkSettings(t *testing.T, c *Comm) {
	if c.lib == nil || c.lib.name != openMPIABIName || c.Size() < 2 || c.Size() >= 4 {
		t.Skip("Init sets Open MPI's all-reduce algorithm for 2 and 3 ranks")
	}
	require.Equal(t, "1", os.Getenv(iallreduceEnv), "%v", c)
}

// TestProcsFor: Init raises GOMAXPROCS to minProcs for a rank of several
// whose runtime chose less (a rank bound to one core), and keeps a value
// the environment sets, a single rank's, and any of minProcs or more.
func TestProcsFor(t *testing.T) {
	for _, cs := range []struct {
		n    int
		env  string
		size int
		want int
	}{
		{1, "", 2, 2},
		{1, "", 8, 2},
		{1, "1", 2, 1}, // the user's choice
		{1, "", 1, 1},  // no collective calls MPI
		{2, "", 2, 2},
		{4, "", 2, 4},
		{3, "3", 2, 3},
	} {
		require.Equal(t, cs.want, procsFor(cs.n, cs.env, cs.size), "GOMAXPROCS %d, $GOMAXPROCS %q, %d ranks", cs.n, cs.env, cs.size)
	}
}

// TestMonitorWakesAfterLongCall measures one of minProcs' reasons: with
// one P, a cgo call longer than the runtime's monitor tick (a C memcmp of
// 16 MB, 0.4–0.6 ms, as long as W1's all-reduces with the wait for the
// other rank) has the monitor take the P back and then wake every 20 µs
// while the program computes after it, each wake-up stopping the
// computing thread on a rank bound to one core; with minProcs a
// millisecond of computing from 0.3 ms after the call sees less than half as many
// wake-ups (the process's voluntary context switches: the computing
// goroutine itself never sleeps). Five rounds of each alternate; the
// medians are compared.
func TestMonitorWakesAfterLongCall(t *testing.T) {
	if testing.Short() {
		t.Skip("times 0.8 s of calls and computing")
	}
	memcmp := libcFunc(t, "memcmp")
	a, z := make([]byte, 16<<20), make([]byte, 16<<20)
	for i := range a { // mapped before the first call
		a[i], z[i] = 1, 1
	}
	long := &mpiCall{fn: memcmp, n: 3, args: [9]uintptr{uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&z[0])), uintptr(len(a))}}
	c := standIn(t, time.Minute, waitDirect) // the long call made on this goroutine
	usleep := libcFunc(t, "usleep")
	// wakes runs steps of the call and 1.3 ms of computing under procs
	// Ps and returns the switches in the computing's last millisecond, per
	// step, after the first 10 (the monitor settles into its pace).
	wakes := func(procs int) float64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		// A call of 20 ms, longer than the monitor's longest sleep, has
		// it take the P back whatever its pace was, as a program's first
		// collectives (MPI's start, a broadcast of the parameters) do.
		call(usleep, 20000)
		var sum int64
		const steps = 50
		for i := range steps {
			require.NoError(t, c.collective("AllReduce", long))
			compute(300 * time.Microsecond) // the call's own wake-ups settle
			before := switches(t)
			compute(time.Millisecond)
			if i >= 10 {
				sum += switches(t) - before
			}
		}
		return float64(sum) / (steps - 10)
	}
	// A machine crowded by other work delays the monitor's wake-ups and
	// blurs the difference: up to three tries.
	for try := 1; ; try++ {
		var one, more []float64
		for range 5 {
			one, more = append(one, wakes(1)), append(more, wakes(minProcs))
		}
		t.Logf("wake-ups per ms of computing after the call: GOMAXPROCS 1 %.2f, %d %.2f (medians of %v and %v)", median(one), minProcs, median(more), one, more)
		if median(more) < median(one)/2 {
			break
		}
		if try == 3 {
			t.Fatalf("with GOMAXPROCS %d, not half as many wake-ups as with 1, in %d tries", minProcs, try)
		}
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(z)
}

// compute keeps the processor busy for d, without a system call.
func compute(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// switches is the process's voluntary context switches so far.
func switches(t *testing.T) int64 {
	var u syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &u))
	return u.Nvcsw
}

package dist

import (
	"testing"
	"time"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"
)

// libc resolves abs, a C function that stands in for MPI's blocking
// ones: abs(0) returns 0, MPI_SUCCESS, at once.
func libc(t testing.TB) (abs uintptr) {
	return libcFunc(t, "abs")
}

// libcFunc resolves the C library's function name.
func libcFunc(t testing.TB, name string) uintptr {
	h, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		t.Skipf("no libc.so.6: %v", err)
	}
	fn, err := purego.Dlsym(h, name)
	require.NoError(t, err)
	return fn
}

// standIn is a Comm of two ranks whose collectives wait in mode
// (waitPoll or waitDirect) on the C functions of the calls given them;
// MPI_Error_string's stand-in (abs) fails, so that an error's text is its
// code, and MPI_Test's is sched_yield, which returns 0 and leaves its flag
// alone: a polled collective never finishes.
func standIn(t testing.TB, timeout time.Duration, mode int) *Comm {
	return &Comm{lib: &library{errorString: libc(t), test: libcFunc(t, "sched_yield")}, rank: 0, size: 2, timeout: timeout, waiter: waiter{mode: mode}}
}

// TestPollingTimeout: a polled collective that does not finish (a rank
// that skipped it) fails at the Comm's timeout, not later, with the error
// every later call returns at once, and Close returns it.
func TestPollingTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	c := standIn(t, timeout, waitPoll)
	start := time.Now()
	err := c.collective("AllReduce", &mpiCall{nonblocking: libcFunc(t, "sched_yield")})
	took := time.Since(start)
	require.EqualError(t, err, "dist: AllReduce on rank 0 of 2 did not finish within 100ms: another rank failed, exited, or did not make the same collective calls in the same order; "+
		"MPI cannot cancel a collective, so this communicator is unusable and the process should exit")
	require.GreaterOrEqual(t, took, timeout)
	require.Less(t, took, timeout+time.Second, "the timeout of %v took effect after %v", timeout, took)
	start = time.Now()
	require.Equal(t, err, c.collective("Barrier", &mpiCall{}), "the error sticks")
	require.Less(t, time.Since(start), 100*time.Millisecond)
	require.Equal(t, err, c.Close())
}

package dist

import (
	"testing"
	"time"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/internal/kernel/race"
)

// libc resolves abs, a C function that stands in for MPI's blocking
// ones: abs(0) returns 0, MPI_SUCCESS, at once.
func libc(t testing.TB) (abs uintptr) {
	h, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		t.Skipf("no libc.so.6: %v", err)
	}
	abs, err = purego.Dlsym(h, "abs")
	require.NoError(t, err)
	return abs
}

// hang and release: hang, called from C, returns 0 once release gives it
// leave; a blocking collective that a rank skipped (a C sleep would
// return early where a signal interrupts it).
var (
	release = make(chan struct{})
	hang    = purego.NewCallback(func() uintptr { <-release; return 0 })
)

// standIn is a Comm of two ranks whose collectives all block, on the
// function of the call given them; MPI_Error_string's stand-in (abs)
// fails, so that an error's text is its code.
func standIn(timeout time.Duration, abs uintptr) *Comm {
	return &Comm{lib: &library{errorString: abs}, rank: 0, size: 2, timeout: timeout, waiter: waiter{mode: waitBlock}}
}

// TestBlockingTimeout: a blocking collective that does not return (a
// rank that skipped it) fails at the Comm's timeout, not later, with the
// error every later call returns at once; one that returns within it
// succeeds, again and again, allocating nothing.
func TestBlockingTimeout(t *testing.T) {
	abs := libc(t)
	c := standIn(time.Second, abs)
	quick := &mpiCall{fn: abs, n: 1}
	for range 3 {
		require.NoError(t, c.collective("AllReduce", quick))
	}
	if !race.Enabled { // under it, purego's sync.Pool drops what it holds
		require.Zero(t, testing.AllocsPerRun(100, func() { require.NoError(t, c.collective("AllReduce", quick)) }))
	}
	const timeout = 100 * time.Millisecond
	c = standIn(timeout, abs)
	start := time.Now()
	err := c.collective("AllReduce", &mpiCall{fn: hang})
	took := time.Since(start)
	defer func() { release <- struct{}{} }() // the caller thread, still in C, returns
	require.EqualError(t, err, "dist: AllReduce on rank 0 of 2 did not finish within 100ms: another rank failed, exited, or did not make the same collective calls in the same order; "+
		"MPI cannot cancel a collective, so this communicator is unusable and the process should exit")
	require.GreaterOrEqual(t, took, timeout)
	require.Less(t, took, timeout+time.Second, "the timeout of %v took effect after %v", timeout, took)
	start = time.Now()
	require.Equal(t, err, c.collective("Barrier", quick), "the error sticks")
	require.Less(t, time.Since(start), 100*time.Millisecond)
	require.Equal(t, err, c.Close())
}

// BenchmarkHandoff times a C call that returns at once (abs) made
// directly and handed to a Comm's caller thread, as a blocking
// collective is.
//
//	go test ./dist -run '^$' -bench Handoff
func BenchmarkHandoff(b *testing.B) {
	abs := libc(b)
	args := [1]uintptr{}
	b.Run("direct", func(b *testing.B) {
		for range b.N {
			call(abs, args[:]...)
		}
	})
	b.Run("caller thread", func(b *testing.B) {
		c := standIn(time.Minute, abs)
		m := &mpiCall{fn: abs, n: 1}
		for range b.N {
			if err := c.collective("AllReduce", m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

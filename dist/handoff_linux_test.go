package dist

import (
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/internal/kernel/race"
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

// BenchmarkHandoff times C calls made directly and handed to a Comm's
// caller thread, as a blocking collective is: abs(0), which returns at
// once; memcmp of two equal 4 MB buffers, which returns 0 after about as
// long as an all-reduce of 1 MB on two ranks, busy as MPI's polling is;
// and usleep(150), which leaves the processor free. Beside the time, it
// reports the process's processor time (cpu-us/op) and its threads'
// voluntary context switches (switches/op; usleep's own is one) per
// call: what the Go runtime's other threads do around a call, which
// takes the processor from MPI's polling where a launcher binds a rank
// to one core, as Open MPI's mpirun does (GOMAXPROCS is then 1). Run it
// on one core, and with GOMAXPROCS=2, to see both:
//
//	taskset -c 0 go test ./dist -run '^$' -bench Handoff
func BenchmarkHandoff(b *testing.B) {
	a, z := make([]byte, 4<<20), make([]byte, 4<<20)
	for _, fn := range []struct {
		name string
		args []uintptr
	}{
		{"abs", []uintptr{0}},
		{"memcmp", []uintptr{uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&z[0])), uintptr(len(a))}},
		{"usleep", []uintptr{150}},
	} {
		f := libcFunc(b, fn.name)
		m := &mpiCall{fn: f, n: len(fn.args)}
		copy(m.args[:], fn.args)
		b.Run(fn.name+"/direct", func(b *testing.B) {
			perCall(b, func() { call(f, m.args[:m.n]...) })
		})
		b.Run(fn.name+"/caller thread", func(b *testing.B) {
			c := standIn(time.Minute, libc(b))
			perCall(b, func() {
				if err := c.collective("AllReduce", m); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(z)
}

// perCall runs f b.N times and reports the process's processor time and
// voluntary context switches per call.
func perCall(b *testing.B, f func()) {
	var u0, u1 syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &u0))
	b.ResetTimer()
	for range b.N {
		f()
	}
	b.StopTimer()
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &u1))
	cpu := syscall.TimevalToNsec(u1.Utime) + syscall.TimevalToNsec(u1.Stime) - syscall.TimevalToNsec(u0.Utime) - syscall.TimevalToNsec(u0.Stime)
	b.ReportMetric(float64(cpu)/1e3/float64(b.N), "cpu-us/op")
	b.ReportMetric(float64(u1.Nvcsw-u0.Nvcsw)/float64(b.N), "switches/op")
}

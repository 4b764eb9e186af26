package dist

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/cuda"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"github.com/nabla-go/nabla/internal/testkit/mpitest"
	"github.com/nabla-go/nabla/vm"
)

// watchModeEnv says what the fake NCCL injects in TestChildNCCLWatch:
// "error", rank 1's asynchronous error (FAKE_NCCL_ASYNC_ERROR=1); or
// "pending", every collective in progress for ever (FAKE_NCCL_PENDING=1),
// under a timeout of watchTimeout.
const watchModeEnv = "NABLA_DIST_TEST_WATCH"

// watchTimeout is TestChildNCCLWatch's Comm timeout in "pending" mode.
const watchTimeout = 100 * time.Millisecond

// TestNCCLWatch runs TestChildNCCLWatch on two ranks under Open MPI and
// MPICH, with the fake NCCL injecting each failure: every rank passes
// (those that fail their read, as they must), and the launch ends
// cleanly.
func TestNCCLWatch(t *testing.T) {
	if mpitest.IsChild() {
		t.Skip("a child run")
	}
	for _, l := range []func(testing.TB) mpitest.Launcher{mpitest.OpenMPI, mpitest.MPICH} {
		l := l(t)
		t.Run(l.Name, func(t *testing.T) {
			lib := fakeNCCL(t, l)
			for _, mode := range []struct{ name, env string }{{"error", "FAKE_NCCL_ASYNC_ERROR=1"}, {"pending", "FAKE_NCCL_PENDING=1"}} {
				out, err, took := l.Run(2, "^TestChildNCCLWatch$", time.Minute, dirEnv+"="+t.TempDir(), ncclEnv+"="+lib, watchModeEnv+"="+mode.name, mode.env)
				if err != nil || strings.Contains(out, "--- FAIL") || strings.Count(out, "--- PASS: TestChildNCCLWatch ") != 2 {
					t.Fatalf("%s, %s: %v after %v\n%s", l.Name, mode.name, err, took.Round(time.Millisecond), out)
				}
				var reads []string
				for _, line := range strings.Split(out, "\n") {
					if strings.Contains(line, "the read after") {
						reads = append(reads, strings.TrimSpace(line))
					}
				}
				t.Logf("%s, %s: passed in %v:\n%s", l.Name, mode.name, took.Round(time.Millisecond), strings.Join(reads, "\n"))
			}
		})
	}
}

// TestChildNCCLWatch: an all-reduce on the host stand-in for a GPU,
// through the fake NCCL injecting what watchModeEnv says. A rank whose
// NCCL reports an asynchronous error fails the read after its run with
// NCCL's text, named after the op; a rank whose collective never ends
// fails it once the Comm's timeout has passed, with MPI's timeout error.
// Either way its machine fails its later runs, and its Comm every later
// call, with that error. The other rank reads the sum, its wait watched.
func TestChildNCCLWatch(t *testing.T) {
	c := child(t)
	dev, err := cuda.OpenHost()
	if err != nil {
		t.Skipf("no host stand-in for a GPU: %v", err)
	}
	defer dev.Close()
	mode := os.Getenv(watchModeEnv)
	if mode == "pending" {
		c.mu.Lock()
		c.timeout = watchTimeout
		c.mu.Unlock()
	}
	x, y, m := allReduceOnDevice(t, c, dev, graph.Float32, 4)
	r := float64(c.Rank() + 1)
	feeds := vm.Feeds{x: fdtest.TensorOf(t, x.Type(), r, 2*r, 3*r, 4*r)}
	require.NoError(t, m.Run(feeds), "%v: the run queues the call", c)
	start := time.Now()
	v, err := m.Value(y)
	took := time.Since(start)
	t.Logf("%v, %s: the read after %v: %v", c, mode, took, err)

	if mode == "error" && c.Rank() != 1 {
		require.NoError(t, err, "%v", c)
		k := float64(c.Size() * (c.Size() + 1) / 2)
		require.Equal(t, []float64{k, 2 * k, 3 * k, 4 * k}, graph.Float64s(v), "%v", c)
		require.NotZero(t, c.nccls[graph.LibraryDevice{HostStandIn: true}].polls, "%v: the wait was not watched", c)
		require.NoError(t, c.Close())
		return
	}
	op := "AllReduce (node AllReduce #1 float32(4)): "
	want := []string{op + fmt.Sprintf("dist: AllReduce on %v: ncclCommGetAsyncError: NCCL error 6: remote process exited or there was a network error: fake NCCL: rank lost its peer", c),
		"NCCL's communicators are aborted, so this communicator is unusable and the process should exit"}
	if mode == "pending" {
		want = []string{op + fmt.Sprintf("dist: AllReduce on %v did not finish within 100ms: another rank failed", c)}
		require.True(t, took >= watchTimeout && took < watchTimeout+time.Second, "%v: the read failed after %v, want %v and a little", c, took, watchTimeout)
	}
	require.Error(t, err, "%v", c)
	for _, w := range want {
		require.ErrorContains(t, err, w)
	}
	require.ErrorContains(t, m.Run(feeds), want[0], "%v: a run after the failure", c)
	require.Empty(t, c.nccls, "%v: the NCCL communicator was not aborted", c)
	// The Comm's error, the op's name aside.
	failed := strings.TrimPrefix(want[0], op)
	require.ErrorContains(t, c.Barrier(), failed, "%v: a collective after the failure", c)
	require.ErrorContains(t, c.Close(), failed, "%v: Close", c)
	// MPI itself is sound (the fake's collectives did all theirs, or
	// none): finalise it, so that the launch ends cleanly.
	require.Zero(t, call(c.lib.finalize), "%v: MPI_Finalize", c)
}

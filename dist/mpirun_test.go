package dist

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/internal/testkit/mpitest"
)

// childTimeout bounds each collective in the child tests, so that a rank
// that fails a check (and stops calling collectives) makes the others
// fail within it rather than wait for the parent's deadline.
const childTimeout = 20 * time.Second

// launch runs the child tests matching run on np ranks under l, within
// timeout, each rank given a shared folder.
func launch(t *testing.T, l mpitest.Launcher, np int, run string, timeout time.Duration) (string, error, time.Duration) {
	return l.Run(np, run, timeout, dirEnv+"="+t.TempDir())
}

// child initialises MPI in a child test, or skips the test outside one.
func child(t *testing.T) *Comm {
	t.Helper()
	if !mpitest.IsChild() {
		t.Skip("runs under mpirun, started by TestUnderOpenMPI and TestUnderMPICH")
	}
	c, err := Init(WithTimeout(childTimeout))
	if err != nil {
		t.Fatal(err)
	}
	setWaitMode(c)
	t.Logf("%v, %s", c, c.Library())
	return c
}

// childTests are the tests every rank runs.
const childTests = "^TestChild$"

// TestChild runs, on every rank and in this order, the checks of each
// collective's values and gradients, of data-parallel training (k ranks ×
// batch 32 train as one process × batch 32·k; buckets of 600 bytes split
// the model's gradients into several all-reduces, the default one takes
// them all), of Save, of collectives on a device, of GOMAXPROCS
// (checkProcs) and of the settings made for Open MPI (checkSettings),
// then finalises MPI.
func TestChild(t *testing.T) {
	c := child(t)
	t.Run("Collectives", func(t *testing.T) { checkCollectives(t, c) })
	t.Run("Gradients", func(t *testing.T) { checkGradients(t, c) })
	t.Run("DataParallel", func(t *testing.T) { checkDataParallel(t, c) })
	t.Run("DataParallelSmallBuckets", func(t *testing.T) { checkDataParallel(t, c, BucketBytes(600)) })
	t.Run("Save", func(t *testing.T) { checkSave(t, c) })
	t.Run("MismatchedShapes", func(t *testing.T) { checkMismatchedShapes(t, c) })
	t.Run("OnDevice", func(t *testing.T) { checkOnDevice(t, c) })
	t.Run("NilDereferencePanics", checkNilPanics)
	t.Run("OneRankCallsNoMPI", func(t *testing.T) { checkOneRank(t, c) })
	t.Run("WaitWhileStacksMove", func(t *testing.T) { checkStackMoves(t, c) })
	t.Run("Polling", func(t *testing.T) { checkWaiting(t, c) })
	t.Run("Procs", func(t *testing.T) { checkProcs(t, c) })
	t.Run("OpenMPISettings", func(t *testing.T) { checkSettings(t, c) })
	t.Run("Local", func(t *testing.T) { checkLocal(t, c) })
	require.NoError(t, c.Barrier())
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "a second Close")
	require.ErrorContains(t, c.Barrier(), "after Close")
}

// underMPI runs the child tests on 1, 2 and 3 ranks (3 catches code that
// assumes an even number) and fails with their output if any rank fails.
func underMPI(t *testing.T, l mpitest.Launcher) {
	for _, np := range []int{1, 2, 3} {
		out, err, took := launch(t, l, np, childTests, 2*time.Minute)
		requirePassed(t, fmt.Sprintf("%s, %d ranks", l.Name, np), "TestChild", out, err, took)
		if testing.Verbose() {
			t.Logf("%s, %d ranks: passed in %v", l.Name, np, took.Round(time.Millisecond))
		}
	}
}

// requirePassed fails t, with the launch's output, unless the launch of
// what ran test without an error or a failure and test passed.
func requirePassed(t *testing.T, what, test, out string, err error, took time.Duration) {
	t.Helper()
	if err != nil || strings.Contains(out, "--- FAIL") || !strings.Contains(out, "--- PASS: "+test+" ") {
		t.Fatalf("%s: %v after %v\n%s", what, err, took.Round(time.Millisecond), out)
	}
}

// TestUnderOpenMPI runs the child tests under Open MPI's mpirun.
func TestUnderOpenMPI(t *testing.T) {
	if mpitest.IsChild() {
		t.Skip("a child run")
	}
	underMPI(t, mpitest.OpenMPI(t))
}

// TestUnderMPICH runs the child tests under MPICH's mpirun, where it is
// installed beside Open MPI.
func TestUnderMPICH(t *testing.T) {
	if mpitest.IsChild() {
		t.Skip("a child run")
	}
	underMPI(t, mpitest.MPICH(t))
}

// failTimeout is the collective timeout of TestChildFailure's surviving
// ranks.
const failTimeout = 2 * time.Second

// failEnv says how TestChildFailure's last rank fails: "exit" exits at
// once, "skip" skips the collectives and stays alive past failTimeout.
const failEnv = "NABLA_DIST_TEST_FAIL"

// TestChildFailure: the last rank fails as failEnv says; the others enter
// a barrier, which must fail, not wait forever.
func TestChildFailure(t *testing.T) {
	if !mpitest.IsChild() {
		t.Skip("runs under mpirun, started by TestRankFailure")
	}
	c, err := Init(WithTimeout(failTimeout))
	if err != nil {
		t.Fatal(err)
	}
	setWaitMode(c)
	if c.Rank() == c.Size()-1 {
		if os.Getenv(failEnv) == "exit" {
			os.Exit(3)
		}
		time.Sleep(3 * failTimeout)
		return
	}
	start := time.Now()
	err = c.Barrier()
	took := time.Since(start)
	t.Logf("%v: Barrier after %v: %v", c, took, err)
	if err == nil {
		t.Fatalf("%v: Barrier succeeded though rank %d did not call it", c, c.Size()-1)
	}
	if took < failTimeout || took > failTimeout+time.Second {
		t.Fatalf("%v: Barrier failed after %v, not within a second past its timeout of %v", c, took, failTimeout)
	}
	require.Equal(t, err, c.Barrier(), "the error sticks")
	require.Equal(t, err, c.Close(), "Close returns it without finalising")
}

// TestRankFailure: a rank that exits early, or stays alive but skips a
// collective, makes the launch fail within failTimeout and the
// launcher's reaction time, never hang, under Open MPI and MPICH. Their
// launchers end the other ranks as soon as one exits with an error (about
// 1.5 s and 0.2 s here); a rank that skips a collective makes the others'
// wait time out with an error saying so.
func TestRankFailure(t *testing.T) {
	if mpitest.IsChild() {
		t.Skip("a child run")
	}
	t.Run("OpenMPI", func(t *testing.T) { rankFailure(t, mpitest.OpenMPI(t)) })
	t.Run("MPICH", func(t *testing.T) { rankFailure(t, mpitest.MPICH(t)) })
}

func rankFailure(t *testing.T, l mpitest.Launcher) {
	const limit = 30 * time.Second
	for _, mode := range []string{"exit", "skip"} {
		t.Setenv(failEnv, mode)
		out, err, took := launch(t, l, 2, "^TestChildFailure$", 2*limit)
		if took > limit {
			t.Fatalf("%s: the launch took %v to end, more than %v:\n%s", mode, took, limit, out)
		}
		switch mode {
		case "exit":
			if err == nil {
				t.Fatalf("exit: the launch succeeded though a rank exited early:\n%s", out)
			}
		case "skip":
			want := "dist: Barrier on rank 0 of 2 did not finish within 2s: another rank failed, exited, or did not make the same collective calls in the same order"
			if !strings.Contains(out, want) || strings.Contains(out, "--- FAIL") {
				t.Fatalf("skip: the surviving rank did not report %q:\n%s", want, out)
			}
		}
		t.Logf("%s, %s: ended after %v: %v", l.Name, mode, took.Round(time.Millisecond), err)
	}
}

// checkOneRank: the only rank of a group launched by mpirun (-np 1)
// copies in its collectives, as a process no launcher started does,
// rather than calling MPI: its collectives still give their values with
// MPI's collective functions taken away (a call would panic).
func checkOneRank(t *testing.T, c *Comm) {
	if c.Size() > 1 {
		t.Skip("one rank's check")
	}
	saved := c.lib
	defer func() { c.lib = saved }()
	none := *saved
	none.barrier, none.ibarrier, none.iallreduce, none.ibcast, none.iallgather = 0, 0, 0, 0, 0
	none.allreduce, none.bcast, none.allgather, none.reduceScatterBlock, none.reduce = 0, 0, 0, 0, 0
	none.ireduceScatterBlock, none.ireduce, none.test = 0, 0, 0
	c.lib = &none
	checkCollectives(t, c)
	require.NoError(t, c.Barrier())
}

// checkStackMoves: a collective completes while the garbage collector
// moves the waiting goroutine's stack (it shrinks a stack that grew and
// is little used), so MPI must not write to the stack: each rank but the
// last waits in Barrier for 20 ms, from a goroutine whose stack grew to
// about 256 KB first, while another goroutine collects garbage without
// pause. A flag MPI sets on the old stack is never seen: the wait times
// out.
func checkStackMoves(t *testing.T, c *Comm) {
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	for range 5 {
		errs := make(chan error)
		go func() {
			grow(256)
			if c.Rank() == c.Size()-1 {
				time.Sleep(20 * time.Millisecond)
			}
			errs <- c.Barrier()
		}()
		require.NoError(t, <-errs)
	}
}

// grow takes about n KB of the goroutine's stack and gives it back.
//
//go:noinline
func grow(n int) byte {
	var frame [1024]byte
	frame[n%len(frame)] = byte(n)
	if n > 1 {
		frame[0] = grow(n - 1)
	}
	return frame[0] + frame[n%len(frame)]
}

// checkNilPanics: a nil dereference after MPI started is still Go's
// panic, which recover catches (Open MPI's handler of SIGSEGV, which
// would print its backtrace and end the process, is left out).
func checkNilPanics(t *testing.T) {
	var p *struct{ x int }
	defer func() {
		r := recover()
		require.NotNil(t, r)
		require.Contains(t, fmt.Sprint(r), "nil pointer dereference")
	}()
	t.Log(p.x)
}

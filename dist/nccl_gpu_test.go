package dist

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/cuda"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"github.com/nabla-go/nabla/internal/testkit/mpitest"
	"github.com/nabla-go/nabla/vm"
)

// TestNCCLOnGPU runs TestChildNCCLGPU on one rank under Open MPI, NCCL
// forced: the real NCCL on a real GPU. It skips without a GPU; it needs
// neither Go nor a C compiler (bench/gpu/device.sh runs it from a
// cross-compiled test binary).
func TestNCCLOnGPU(t *testing.T) {
	if mpitest.IsChild() {
		t.Skip("a child run")
	}
	if n, err := cuda.Devices(); err != nil || n == 0 {
		t.Skipf("no GPU: %d devices, %v", n, err)
	}
	l := mpitest.OpenMPI(t)
	out, err, took := l.Run(1, "^TestChildNCCLGPU$", 50*time.Second, dirEnv+"="+t.TempDir(), forceNCCLEnv+"=1")
	requirePassed(t, l.Name+", 1 rank", "TestChildNCCLGPU", out, err, took)
	t.Logf("%s, 1 rank: passed in %v\n%s", l.Name, took.Round(time.Millisecond), out)
}

// TestNCCLTwoRanksOnOneGPU runs TestChildNCCLGPU on two ranks sharing
// the one GPU, NCCL not forced: whatever NCCL makes of two ranks on one
// device, the ranks either agree with the CPU or fail with NCCL's own
// error, in time, never hang. (NCCL refuses two ranks on one device; the
// error is the user's to read.)
func TestNCCLTwoRanksOnOneGPU(t *testing.T) {
	if mpitest.IsChild() {
		t.Skip("a child run")
	}
	if n, err := cuda.Devices(); err != nil || n != 1 {
		t.Skipf("wants exactly one GPU: %d devices, %v", n, err)
	}
	l := mpitest.OpenMPI(t)
	out, err, took := l.Run(2, "^TestChildNCCLGPU$", 50*time.Second, dirEnv+"="+t.TempDir())
	if took >= 50*time.Second {
		t.Fatalf("%s, 2 ranks on one GPU: no answer in %v\n%s", l.Name, took.Round(time.Millisecond), out)
	}
	if err == nil && strings.Count(out, "--- PASS: TestChildNCCLGPU ") == 2 {
		t.Logf("%s, 2 ranks on one GPU: passed in %v", l.Name, took.Round(time.Millisecond))
		return
	}
	if !strings.Contains(out, "NCCL error") {
		t.Fatalf("%s, 2 ranks on one GPU: failed without NCCL's error (%v, %v)\n%s", l.Name, err, took.Round(time.Millisecond), out)
	}
	t.Logf("%s, 2 ranks on one GPU: NCCL's error in %v\n%s", l.Name, took.Round(time.Millisecond), out)
}

// TestChildNCCLGPU checks, on GPU 0 through the NCCL found as the
// package finds it ($NABLA_NCCL, else libnccl.so.2), every collective and
// reduction, float32 and float64, and their gradients, against the CPU,
// none on the host, and against hand values; the plan's library steps; a
// CUDA graph's replay; data-parallel training against one process on the
// CPU; the waits for NCCL's work, watched (polled, not aborted); and a
// run after Close, which fails rather than replay NCCL's calls.
func TestChildNCCLGPU(t *testing.T) {
	c := child(t)
	setForceNCCL(t)
	dev, err := cuda.Open(0)
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	defer dev.Close()
	lib, err := loadNCCL()
	require.NoError(t, err)
	t.Logf("%v: %v on %v", c, lib, dev)
	t.Run("AgainstCPU", func(t *testing.T) { checkNCCL(t, c, dev) })
	t.Run("HandValues", func(t *testing.T) { checkCollectives(t, c, vm.OnDevice(dev)) })
	t.Run("Plan", func(t *testing.T) { checkNCCLPlan(t, c, dev) })
	t.Run("Replay", func(t *testing.T) { checkNCCLReplay(t, c, dev, true) })
	t.Run("DataParallel", func(t *testing.T) { checkDataParallelOn(t, c, []vm.Option{vm.OnDevice(dev)}, BucketBytes(600)) })
	t.Run("Watched", func(t *testing.T) { checkNCCLWatched(t, c, dev, graph.LibraryDevice{Ordinal: 0}) })
	checkNCCLClose(t, c, dev)
}

// checkNCCLReplay runs a program of every collective, float32 and
// float64, on dev three times with other inputs each time, and compares
// each run with the CPU's: on a GPU (gpu), the runs after the first
// replay a CUDA graph (cuda.Replaying), the NCCL calls captured in it.
func checkNCCLReplay(t *testing.T, c *Comm, dev *cuda.Device, gpu bool) {
	g := graph.New()
	var outs, ins []*graph.Node
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
		x := g.Input("x"+dtype.String(), dtype, 2*c.Size(), 2)
		ins = append(ins, x)
		for _, cs := range collectiveCases(c) {
			outs = append(outs, cs.f([]*graph.Node{x}))
		}
	}
	p, err := compile.Compile(outs)
	require.NoError(t, err)
	cpu, m := machines(t, p, dev)
	for run := range 3 {
		feeds := vm.Feeds{}
		for i, x := range ins {
			feeds[x] = fdtest.TensorOf(t, x.Type(), fdtest.RandomValues(uint64(10*run+i+1), x.Type().Size())...)
		}
		require.NoError(t, cpu.Run(feeds))
		require.NoError(t, m.Run(feeds), "run %d", run)
		for _, o := range outs {
			want, err := cpu.Value(o)
			require.NoError(t, err)
			got, err := m.Value(o)
			require.NoError(t, err)
			tol := map[tensor.Dtype]float64{graph.Float64: 1e-12, graph.Float32: 1e-6}[o.DType()]
			fdtest.RequireClose(t, graph.Float64s(want), graph.Float64s(got), tol, fmt.Sprintf("%v: run %d, %v", c, run, o))
		}
		if run > 0 && gpu {
			require.NoError(t, cuda.Replaying(m), "run %d", run)
		}
	}
}

// checkNCCLWatched runs an all-reduce of 8 Mi float32s on a GPU (32 MiB:
// its stream is still busy at the first poll; 1 Ki on the host stand-in)
// and a small one on dev three
// times, and compares them with the CPU's: the reads wait for NCCL's work
// watched (its communicator on key polled by the Watch), and the
// communicator is not aborted, the Comm still usable.
func checkNCCLWatched(t *testing.T, c *Comm, dev *cuda.Device, key graph.LibraryDevice) {
	g := graph.New()
	size := 8 << 20
	if key.HostStandIn {
		size = 1 << 10
	}
	big := g.Input("big", graph.Float32, size)
	small := g.Input("small", graph.Float64, 3)
	outs := []*graph.Node{AllReduce(c, big, Sum), AllReduce(c, small, Max)}
	p, err := compile.Compile(outs)
	require.NoError(t, err)
	cpu, m := machines(t, p, dev)
	c.mu.Lock()
	n := c.nccls[key]
	c.mu.Unlock()
	require.NotNil(t, n, "%v: no NCCL communicator on %v", c, key)
	before := n.polls
	for run := range 3 {
		feeds := vm.Feeds{}
		for i, x := range []*graph.Node{big, small} {
			feeds[x] = fdtest.TensorOf(t, x.Type(), fdtest.RandomValues(uint64(100*run+10*c.Rank()+i), x.Type().Size())...)
		}
		require.NoError(t, cpu.Run(feeds))
		require.NoError(t, m.Run(feeds), "%v: run %d", c, run)
		for _, o := range outs {
			want, err := cpu.Value(o)
			require.NoError(t, err)
			got, err := m.Value(o)
			require.NoError(t, err, "%v: run %d", c, run)
			tol := map[tensor.Dtype]float64{graph.Float64: 1e-12, graph.Float32: 1e-6}[o.DType()]
			fdtest.RequireClose(t, graph.Float64s(want), graph.Float64s(got), tol, fmt.Sprintf("%v: run %d, %v", c, run, o))
		}
	}
	c.mu.Lock()
	polls, failed, kept := n.polls-before, c.failed, c.nccls[key] == n
	c.mu.Unlock()
	t.Logf("%v: 3 runs, %d calls of the watch", c, polls)
	require.NotZero(t, polls, "%v: the reads' waits were not watched", c)
	require.NoError(t, failed, "%v: the Comm failed", c)
	require.True(t, kept, "%v: the communicator was aborted", c)
	require.NoError(t, c.Barrier(), "%v", c)
}

package dist

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// forceNCCLEnv, set to 1, makes a child test's Comm of one rank use NCCL
// (forceNCCL), so that one GPU runs the real library.
const forceNCCLEnv = "NABLA_DIST_TEST_FORCE_NCCL"

// setForceNCCL sets forceNCCL from forceNCCLEnv for the test's duration.
func setForceNCCL(t *testing.T) {
	forceNCCL = os.Getenv(forceNCCLEnv) == "1"
	t.Cleanup(func() { forceNCCL = false })
}

// fakeNCCL builds the fake NCCL (testdata/fakenccl/nccl.c) with the
// compiler wrapper of the MPI that l launches, or skips the test with the
// reason: the fake calls that MPI, loaded in the ranks.
func fakeNCCL(t *testing.T, l mpitest.Launcher) string {
	cc := map[string][]string{"Open MPI": {"mpicc.openmpi", "mpicc"}, "MPICH": {"mpicc.mpich"}}[l.Name]
	for _, name := range cc {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if name == "mpicc" { // Open MPI's only where it says so
			if out, _ := exec.Command(p, "--showme:version").CombinedOutput(); !strings.Contains(string(out), "Open MPI") {
				continue
			}
		}
		lib := filepath.Join(t.TempDir(), "libfakenccl.so")
		out, err := exec.Command(p, "-shared", "-fPIC", "-Wall", "-o", lib, filepath.Join("testdata", "fakenccl", "nccl.c")).CombinedOutput()
		require.NoError(t, err, "%s: %s", p, out)
		return lib
	}
	t.Skipf("%s's compiler wrapper (%s) is not installed (Debian: libopenmpi-dev, libmpich-dev): the fake NCCL cannot be built", l.Name, strings.Join(cc, " or "))
	return ""
}

// ncclUnderMPI runs TestChildNCCL on 1 (NCCL forced), 2 and 3 ranks under
// l, with the fake NCCL, and fails with their output if any rank fails.
func ncclUnderMPI(t *testing.T, l mpitest.Launcher) {
	lib := fakeNCCL(t, l)
	for _, np := range []int{1, 2, 3} {
		out, err, took := l.Run(np, "^TestChildNCCL$", 2*time.Minute, dirEnv+"="+t.TempDir(), ncclEnv+"="+lib, forceNCCLEnv+"=1")
		requirePassed(t, fmt.Sprintf("%s, %d ranks", l.Name, np), "TestChildNCCL", out, err, took)
		t.Logf("%s, %d ranks: passed in %v", l.Name, np, took.Round(time.Millisecond))
	}
}

// TestNCCLUnderOpenMPI runs the collectives on the host stand-in for a
// GPU through the fake NCCL, under Open MPI.
func TestNCCLUnderOpenMPI(t *testing.T) {
	if mpitest.IsChild() {
		t.Skip("a child run")
	}
	ncclUnderMPI(t, mpitest.OpenMPI(t))
}

// TestNCCLUnderMPICH is TestNCCLUnderOpenMPI under MPICH.
func TestNCCLUnderMPICH(t *testing.T) {
	if mpitest.IsChild() {
		t.Skip("a child run")
	}
	ncclUnderMPI(t, mpitest.MPICH(t))
}

// TestChildNCCL checks, on every rank, the collectives on the host
// stand-in for a GPU through the NCCL $NABLA_NCCL names (the fake):
// their values against the CPU's and against hand values, their
// gradients, the plan (library steps, no host instruction), data-parallel
// training, an NCCL error's text, and the watched waits.
func TestChildNCCL(t *testing.T) {
	c := child(t)
	setForceNCCL(t)
	dev, err := cuda.OpenHost()
	if err != nil {
		t.Skipf("no host stand-in for a GPU: %v", err)
	}
	defer dev.Close()
	t.Run("AgainstCPU", func(t *testing.T) { checkNCCL(t, c, dev) })
	t.Run("HandValues", func(t *testing.T) { checkCollectives(t, c, vm.OnDevice(dev)) })
	t.Run("Plan", func(t *testing.T) { checkNCCLPlan(t, c, dev) })
	t.Run("Runs", func(t *testing.T) { checkNCCLReplay(t, c, dev, false) })
	t.Run("DataParallel", func(t *testing.T) { checkDataParallelOn(t, c, []vm.Option{vm.OnDevice(dev)}, BucketBytes(600)) })
	t.Run("Mismatch", func(t *testing.T) { checkNCCLMismatch(t, c, dev) })
	t.Run("Error", func(t *testing.T) { checkNCCLError(t, c, dev) })
	t.Run("Watched", func(t *testing.T) { checkNCCLWatched(t, c, dev, graph.LibraryDevice{HostStandIn: true}) })
	checkNCCLClose(t, c, dev)
}

// checkNCCLClose closes c, which destroys its NCCL communicators: a
// machine loaded before, run once (on a GPU, its later runs replay a CUDA
// graph, NCCL's calls in it), then fails its runs with an error saying
// so, rather than calling a destroyed communicator.
func checkNCCLClose(t *testing.T, c *Comm, dev *cuda.Device) {
	x, _, m := allReduceOnDevice(t, c, dev, graph.Float32, 4)
	feeds := vm.Feeds{x: fdtest.TensorOf(t, x.Type(), 1, 2, 3, 4)}
	require.NoError(t, m.Run(feeds))
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "a second Close")
	err := m.Run(feeds)
	require.ErrorContains(t, err, fmt.Sprintf("AllReduce (node AllReduce #1 float32(4)): dist: AllReduce on %v after Close", c))
}

// allReduceOnDevice loads on dev a program all-reducing (summing) an
// input x of n elements of dtype into y; the machine m closes with the
// test.
func allReduceOnDevice(t *testing.T, c *Comm, dev *cuda.Device, dtype tensor.Dtype, n int) (x, y *graph.Node, m *vm.Machine) {
	t.Helper()
	g := graph.New()
	x = g.Input("x", dtype, n)
	y = AllReduce(c, x, Sum)
	p, err := compile.Compile([]*graph.Node{y})
	require.NoError(t, err)
	_, m = machines(t, p, dev)
	return x, y, m
}

// machines loads p on the CPU (one thread) and on dev; both close with
// the test.
func machines(t *testing.T, p *compile.Program, dev *cuda.Device) (cpu, m *vm.Machine) {
	t.Helper()
	cpu, err := vm.New(p, vm.WithThreads(1))
	require.NoError(t, err)
	t.Cleanup(func() { cpu.Close() })
	m, err = vm.New(p, vm.OnDevice(dev))
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return cpu, m
}

// collectiveCases are every collective and reduction, as functions of a
// (2k, 2) input for k ranks.
func collectiveCases(c *Comm) []struct {
	name string
	f    func(in []*graph.Node) *graph.Node
} {
	k := c.Size()
	return []struct {
		name string
		f    func(in []*graph.Node) *graph.Node
	}{
		{"AllReduce(sum)", func(in []*graph.Node) *graph.Node { return AllReduce(c, in[0], Sum) }},
		{"AllReduce(mean)", func(in []*graph.Node) *graph.Node { return AllReduce(c, in[0], Mean) }},
		{"AllReduce(max)", func(in []*graph.Node) *graph.Node { return AllReduce(c, in[0], Max) }},
		{"Broadcast", func(in []*graph.Node) *graph.Node { return Broadcast(c, in[0], k-1) }},
		{"ReduceTo", func(in []*graph.Node) *graph.Node { return ReduceTo(c, in[0], 0) }},
		{"AllGather", func(in []*graph.Node) *graph.Node { return AllGather(c, in[0]) }},
		{"ReduceScatter(sum)", func(in []*graph.Node) *graph.Node { return ReduceScatter(c, in[0], Sum) }},
		{"ReduceScatter(mean)", func(in []*graph.Node) *graph.Node { return ReduceScatter(c, in[0], Mean) }},
	}
}

// checkNCCL checks every collective and reduction on dev, float32 and
// float64, and the gradient of a weighted sum of each, against the CPU
// (cuda.CheckOp), and that none ran on the host.
func checkNCCL(t *testing.T, c *Comm, dev *cuda.Device) {
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
		x := fdtest.TensorOf(t, graph.TypeOf(dtype, 2*c.Size(), 2), fdtest.RandomValues(uint64(c.Rank())+5, 4*c.Size())...)
		for _, cs := range collectiveCases(c) {
			onHost, err := cuda.CheckOp(dev, cs.f, x)
			require.NoError(t, err, "%v, %v: %s", c, dtype, cs.name)
			require.Empty(t, onHost, "%v, %v: %s: instructions on the host", c, dtype, cs.name)
		}
	}
}

// checkNCCLPlan: a program of every collective, on dev, has one NCCL
// library step per collective and nothing on the host; ReduceTo's output
// is zeroed first on the ranks but the root.
func checkNCCLPlan(t *testing.T, c *Comm, dev *cuda.Device) {
	g := graph.New()
	x := g.Input("x", graph.Float32, 2*c.Size(), 2)
	var outs []*graph.Node
	for _, cs := range collectiveCases(c) {
		outs = append(outs, cs.f([]*graph.Node{x}))
	}
	p, err := compile.Compile(outs)
	require.NoError(t, err)
	m, err := vm.New(p, vm.OnDevice(dev))
	require.NoError(t, err)
	defer m.Close()
	plan, err := cuda.Describe(m)
	require.NoError(t, err)
	t.Logf("%v: the plan:\n%s", c, plan)
	for i := range p.Instructions() {
		require.False(t, m.OnHost(i), "%v: instruction %d runs on the host:\n%s", c, i, plan)
	}
	require.NotContains(t, plan, " host\n")
	for _, label := range []string{"AllReduce(sum)", "AllReduce(mean)", "AllReduce(max)", fmt.Sprintf("Broadcast(from %d)", c.Size()-1), "ReduceTo(0)", "AllGather", "ReduceScatter(sum)", "ReduceScatter(mean)"} {
		require.Contains(t, plan, "library NCCL "+label+"(", "%v", c)
	}
	require.Equal(t, c.Rank() != 0, strings.Contains(plan, "kernel "), "%v: ReduceTo's output zeroed (by a kernel) on the ranks but the root", c)
}

// checkNCCLMismatch: ranks loading one collective of inputs of other
// sizes on a device fail as the program loads, every rank, with the
// error the host's collectives give, before NCCL is called (it takes
// each rank's count as given, as MPI does).
func checkNCCLMismatch(t *testing.T, c *Comm, dev *cuda.Device) {
	if c.Size() == 1 {
		t.Skip("one rank: no other to differ from")
	}
	g := graph.New()
	x := g.Input("x", graph.Float64, 3+c.Rank())
	p, err := compile.Compile([]*graph.Node{AllReduce(c, x, Sum)})
	require.NoError(t, err)
	m, err := vm.New(p, vm.OnDevice(dev))
	if err == nil {
		m.Close()
	}
	require.ErrorContains(t, err, fmt.Sprintf("dist: AllReduce on %v: this rank's tensor has %d elements (float64(%d)), another rank's ", c, 3+c.Rank(), 3+c.Rank()))
}

// checkNCCLError: NCCL's error (the fake refuses 13 elements) reaches
// the run's error with the op's name, the NCCL function's, NCCL's text
// for the result and its last error.
func checkNCCLError(t *testing.T, c *Comm, dev *cuda.Device) {
	x, _, m := allReduceOnDevice(t, c, dev, graph.Float64, 13)
	err := m.Run(vm.Feeds{x: fdtest.TensorOf(t, x.Type(), make([]float64, 13)...)})
	require.Error(t, err)
	t.Logf("%v: %v", c, err)
	for _, want := range []string{"AllReduce", "ncclAllReduce", "NCCL error 4: invalid argument", "fake NCCL: 13 elements refused"} {
		require.ErrorContains(t, err, want)
	}
}

// TestNCCLSearch: NCCL is looked for by the dynamic linker, then in the
// multiarch folder and the nvidia-nccl wheels; $NABLA_NCCL alone wins.
func TestNCCLSearch(t *testing.T) {
	root := t.TempDir()
	arch := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[runtime.GOARCH]
	touch := func(path string) string {
		path = filepath.Join(root, path)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, nil, 0o644))
		return path
	}
	system := touch(filepath.Join("usr/lib", arch, "libnccl.so.2"))
	wheel := touch("venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2")
	env := map[string]string{"VIRTUAL_ENV": filepath.Join(root, "venv")}
	getenv := func(k string) string { return env[k] }
	require.Equal(t, []string{"libnccl.so.2", system, wheel}, ncclCandidates(root, getenv))
	env[ncclEnv] = "/opt/nccl/libnccl.so.2"
	require.Equal(t, []string{"/opt/nccl/libnccl.so.2"}, ncclCandidates(root, getenv))
}

// TestNCCLLoadErrors: a file that does not load, or is not NCCL, is an
// error naming each file tried, why, and the variable to set.
func TestNCCLLoadErrors(t *testing.T) {
	notNCCL := "libc.so.6" // loads, and lacks NCCL's functions
	_, err := openNCCL([]string{"/nonexistent/libnccl.so.2", notNCCL})
	require.Error(t, err)
	for _, want := range []string{"dist: no NCCL loads: tried /nonexistent/libnccl.so.2 (", "libc.so.6 (lacks ncclAllGather, ", "set NABLA_NCCL to its path"} {
		require.ErrorContains(t, err, want)
	}
}

package dist

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/mpitest"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/vm"
)

// benchEnv turns on TestAllReduceOverhead (it takes about a minute), and
// in its children, gives "bytes iterations".
const benchEnv = "NABLA_DIST_BENCH"

// benchSizes are the all-reduces timed, in bytes: 1 to 64 MB.
var benchSizes = []int{1 << 20, 4 << 20, 16 << 20, 64 << 20}

// TestChildAllReduceTime times iterations all-reduces (float32 sums) of
// the given bytes through dist, after two warm-up calls, and prints
// "bytes seconds-per-call" on rank 0, as testdata/allreduce.c does.
func TestChildAllReduceTime(t *testing.T) {
	if !mpitest.IsChild() {
		t.Skip("runs under mpirun, started by TestAllReduceOverhead")
	}
	f := strings.Fields(os.Getenv(benchEnv))
	require.Len(t, f, 2)
	bytes, _ := strconv.Atoi(f[0])
	iters, _ := strconv.Atoi(f[1])
	c, err := Init()
	require.NoError(t, err)
	setWaitMode(c)
	in := tensor.New(tensor.WithShape(bytes/4), tensor.Of(tensor.Float32))
	out := tensor.New(tensor.WithShape(bytes/4), tensor.Of(tensor.Float32))
	for i := range in.Float32s() {
		in.Float32s()[i] = float32(i % 13)
	}
	var start time.Time
	for it := -2; it < iters; it++ {
		if it == 0 {
			require.NoError(t, c.Barrier())
			start = time.Now()
		}
		require.NoError(t, c.allReduce(out, in, Sum))
	}
	took := time.Since(start).Seconds() / float64(iters)
	for i, v := range out.Float32s() {
		if want := float32(c.Size() * (i % 13)); v != want {
			t.Fatalf("%v: element %d of the sum is %v, want %v", c, i, v, want)
		}
	}
	if c.Rank() == 0 {
		fmt.Printf("%d %.9f\n", bytes, took)
	}
	require.NoError(t, c.Close())
}

// TestAllReduceOverhead compares dist's all-reduce of 1 to 64 MB on two
// ranks with testdata/allreduce.c, compiled with mpicc, making the same
// call: MPI_Allreduce ("blocking", the target: dist within 5% of it);
// and, as further columns, MPI_Iallreduce polled without pause ("spin")
// and polled as dist polls on a crowded machine ("yield"). Each is
// timed 5 times alternately, and the fastest of each compared.
// NABLA_DIST_BENCH=1 turns it on; NABLA_DIST_TEST_WAIT=block or poll
// makes every dist collective block or poll.
//
//	NABLA_DIST_BENCH=1 go test ./dist -run TestAllReduceOverhead -v
func TestAllReduceOverhead(t *testing.T) {
	if mpitest.IsChild() || os.Getenv(benchEnv) == "" {
		t.Skip("a benchmark: NABLA_DIST_BENCH=1 turns it on")
	}
	l := mpitest.OpenMPI(t)
	mpicc, err := exec.LookPath("mpicc")
	if err != nil {
		t.Skip("no mpicc (Debian: apt-get install libopenmpi-dev)")
	}
	bin := filepath.Join(t.TempDir(), "allreduce")
	if out, err := exec.Command(mpicc, "-O2", "-o", bin, filepath.Join("testdata", "allreduce.c")).CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	seconds := func(out []byte, err error) float64 {
		t.Helper()
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 {
				if s, perr := strconv.ParseFloat(f[1], 64); perr == nil {
					return s
				}
			}
		}
		t.Fatalf("no time in the output (%v):\n%s", err, out)
		return 0
	}
	run := func(env string, args ...string) ([]byte, error) {
		return l.Command(context.Background(), 2, []string{benchEnv + "=" + env}, args...).CombinedOutput()
	}
	t.Logf("%10s %14s %12s %14s %14s %12s %12s", "bytes", "C blocking", "dist", "dist vs it", "C spin", "C yield", "dist vs spin")
	for _, bytes := range benchSizes {
		n, iters := strconv.Itoa(bytes), strconv.Itoa(max(5, (256<<20)/bytes))
		spin, blocking, yield, g := 1e9, 1e9, 1e9, 1e9
		for range 5 {
			spin = min(spin, seconds(run("", bin, n, iters, "spin")))
			blocking = min(blocking, seconds(run("", bin, n, iters, "blocking")))
			yield = min(yield, seconds(run("", bin, n, iters, "yield")))
			g = min(g, seconds(run(n+" "+iters, os.Args[0], "-test.run", "^TestChildAllReduceTime$")))
		}
		t.Logf("%10d %11.3f ms %9.3f ms %13.1f%% %11.3f ms %9.3f ms %11.1f%%", bytes,
			1e3*blocking, 1e3*g, 100*(g/blocking-1), 1e3*spin, 1e3*yield, 100*(g/spin-1))
	}
}

// w1Steps are the training steps TestChildW1Throughput times.
const w1Steps = 300

// w1 is W1's training step (the MLP 784-256-256-10 of package bench,
// float32, batch 64 per rank, SGD, one thread) as a machine and its
// feeds, under opts (DataParallel, or none).
func w1(t *testing.T, opts ...nn.TrainingOption) (*vm.Machine, vm.Feeds) {
	g := graph.New()
	rng := rand.New(rand.NewPCG(1, 3))
	sizes := []int{784, 256, 256, 10}
	var layers []nn.Module
	for i := 1; i < len(sizes); i++ {
		layers = append(layers, nn.NewLinear(g, fmt.Sprintf("l%d", i), sizes[i-1], sizes[i], true, nn.WithRand(rng), nn.WithDType(tensor.Float32)))
		if i < len(sizes)-1 {
			layers = append(layers, nn.Tanh{})
		}
	}
	model := nn.NewSequential("w1", layers...)
	x := g.Input("x", tensor.Float32, w1Batch, sizes[0])
	y := g.Input("y", tensor.Float32, w1Batch)
	loss := nn.CrossEntropy(model.Forward(x), y)
	updates, err := nn.TrainingUpdates(nn.NewSGD(nn.SGDConfig{LR: 0.01}), loss, model, opts...)
	require.NoError(t, err)
	p, err := compile.Compile([]*graph.Node{loss}, compile.WithUpdates(updates))
	require.NoError(t, err)
	m, err := vm.New(p, vm.WithThreads(1))
	require.NoError(t, err)
	xs := tensor.New(tensor.WithShape(w1Batch, sizes[0]), tensor.Of(tensor.Float32))
	ys := tensor.New(tensor.WithShape(w1Batch), tensor.Of(tensor.Float32))
	for i := range xs.Float32s() {
		xs.Float32s()[i] = float32(rng.NormFloat64())
	}
	for i := range ys.Float32s() {
		ys.Float32s()[i] = float32(rng.IntN(10))
	}
	return m, vm.Feeds{x: xs, y: ys}
}

// w1Batch is W1's batch per rank.
const w1Batch = 64

// timeSteps times w1Steps calls of step on every rank at once (after 5
// to warm up), from a barrier to a barrier, and the time of each spent in
// collectives, waiting included.
func timeSteps(t *testing.T, c *Comm, step func() error) (took, inside time.Duration) {
	for range 5 {
		require.NoError(t, step())
	}
	require.NoError(t, c.Barrier())
	start, spent := time.Now(), c.spent
	for range w1Steps {
		require.NoError(t, step())
	}
	took, inside = time.Since(start), c.spent-spent
	require.NoError(t, c.Barrier())
	return took / w1Steps, inside / w1Steps
}

// TestChildW1Throughput times W1's training step under DataParallel and
// prints the samples per second of all the ranks together on rank 0, and
// where a step's time goes: computing (outside the collectives), the
// all-reduces (the same calls timed alone, the ranks in step) and
// waiting (the rest of the time in the collectives: the ranks out of
// step).
func TestChildW1Throughput(t *testing.T) {
	if !mpitest.IsChild() {
		t.Skip("runs under mpirun, started by TestW1Scaling")
	}
	c, err := Init()
	require.NoError(t, err)
	setWaitMode(c)
	m, feeds := w1(t, DataParallel(c))
	step, inside := timeSteps(t, c, func() error { return m.Run(feeds) })
	// The step's all-reduces, in place as in the step: W1's first two
	// weights (784×256 and 256×256 float32s) alone, the other parameters
	// in one bucket.
	var reduces []func() error
	for _, n := range []int{784 * 256, 256 * 256, 256 + 256 + 256*10 + 10} {
		x := tensor.New(tensor.WithShape(n), tensor.Of(tensor.Float32))
		reduces = append(reduces, func() error { return c.allReduce(x, x, Sum) })
	}
	reduce, _ := timeSteps(t, c, func() error {
		for _, r := range reduces {
			if err := r(); err != nil {
				return err
			}
		}
		return nil
	})
	if c.Size() == 1 {
		reduce = 0 // no MPI: the all-reduces copy, or nothing in place
	}
	if c.Rank() == 0 {
		fmt.Printf("samples/s %.1f\n", float64(w1Batch*c.Size())/step.Seconds())
		ms := func(d time.Duration) float64 { return 1e3 * d.Seconds() }
		fmt.Printf("step %.3f ms: computing %.3f ms, all-reduces %.3f ms, waiting %.3f ms\n",
			ms(step), ms(step-inside), ms(reduce), ms(inside-reduce))
	}
	require.NoError(t, c.Close())
}

// TestW1Scaling compares W1's training throughput on 2 ranks × 1 thread
// with 1 rank × 1 thread, both launched by mpirun, each measured 3 times
// alternately, the best of each kept. NABLA_DIST_BENCH=1 turns it on.
//
//	NABLA_DIST_BENCH=1 go test ./dist -run TestW1Scaling -v
func TestW1Scaling(t *testing.T) {
	if mpitest.IsChild() || os.Getenv(benchEnv) == "" {
		t.Skip("a benchmark: NABLA_DIST_BENCH=1 turns it on")
	}
	l := mpitest.OpenMPI(t)
	best := map[int]float64{}
	for range 3 {
		for _, np := range []int{1, 2} {
			out, err := l.Command(context.Background(), np, []string{"GOMAXPROCS=1"},
				os.Args[0], "-test.run", "^TestChildW1Throughput$").CombinedOutput()
			var s float64
			for _, line := range strings.Split(string(out), "\n") {
				if v, ok := strings.CutPrefix(line, "samples/s "); ok {
					s, _ = strconv.ParseFloat(v, 64)
				}
			}
			if s == 0 {
				t.Fatalf("%d ranks: no throughput (%v):\n%s", np, err, out)
			}
			best[np] = max(best[np], s)
			for _, line := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(line, "step ") {
					t.Logf("%d ranks: %s", np, line)
				}
			}
		}
	}
	t.Logf("W1, float32, batch 64 per rank, SGD, 1 thread per rank: 1 rank %.0f samples/s, 2 ranks %.0f samples/s: %.2f×",
		best[1], best[2], best[2]/best[1])
}

package dist

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
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

// benchEnv turns on TestAllReduceOverhead and TestW1Scaling, and in the
// children of the first, gives "bytes iterations".
const benchEnv = "NABLA_DIST_BENCH"

// benchSizes are the all-reduces timed, in bytes: 1 to 64 MB.
var benchSizes = []int{1 << 20, 4 << 20, 16 << 20, 64 << 20}

// benchRounds is how many times TestAllReduceOverhead runs each side for
// each size.
const benchRounds = 9

// usage is the process's context switches (voluntary, involuntary) and
// minor page faults so far, as getrusage counts them over its threads.
func usage(t *testing.T) [3]float64 {
	var u syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &u))
	return [3]float64{float64(u.Nvcsw), float64(u.Nivcsw), float64(u.Minflt)}
}

// TestChildAllReduceTime times iterations all-reduces (float32 sums) of
// the given bytes through dist, after two warm-up calls, and prints
// "bytes seconds-per-call voluntary involuntary faults" on rank 0, as
// testdata/allreduce.c does: its buffers are written before the first
// call as that program's are. With a third word, "ab", it times instead
// the calls in abBlocks pairs of blocks, one of dist's calls and one of
// MPI's blocking function called on this goroutine as a C program calls
// it (waitDirect), taking turns to go first, and prints "bytes ab
// direct-seconds dist-seconds ratio lowest highest": the medians of
// each side's blocks and of the pairs' ratios, and the ratios' range.
func TestChildAllReduceTime(t *testing.T) {
	if !mpitest.IsChild() {
		t.Skip("runs under mpirun, started by TestAllReduceOverhead")
	}
	f := strings.Fields(os.Getenv(benchEnv))
	require.GreaterOrEqual(t, len(f), 2)
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
	clear(out.Float32s())    // fresh memory from the system is not yet mapped
	agreed := newAgreement() // checked once, as an AllReduce node is
	reduce := func(n int) time.Duration {
		start := time.Now()
		for range n {
			require.NoError(t, c.allReduce(out, in, Sum, agreed))
		}
		return time.Since(start) / time.Duration(n)
	}
	reduce(2) // to warm up
	require.NoError(t, c.Barrier())
	if len(f) > 2 && f[2] == "ab" {
		abAllReduce(t, c, bytes, max(1, iters/abBlocks), reduce)
	} else {
		u0 := usage(t)
		took := reduce(iters).Seconds()
		u1 := usage(t)
		if c.Rank() == 0 {
			n := float64(iters)
			fmt.Printf("%d %.9f %.3f %.3f %.3f\n", bytes, took, (u1[0]-u0[0])/n, (u1[1]-u0[1])/n, (u1[2]-u0[2])/n)
		}
	}
	for i, v := range out.Float32s() {
		if want := float32(c.Size() * (i % 13)); v != want {
			t.Fatalf("%v: element %d of the sum is %v, want %v", c, i, v, want)
		}
	}
	require.NoError(t, c.Close())
}

// abBlocks is how many pairs of blocks TestChildAllReduceTime's "ab"
// times.
const abBlocks = 16

// abAllReduce times abBlocks pairs of blocks of k calls of reduce, one
// in c's own waiting mode, one calling MPI's function directly, and
// prints their medians on rank 0.
func abAllReduce(t *testing.T, c *Comm, bytes, k int, reduce func(int) time.Duration) {
	own := c.mode
	var direct, dist, ratios []float64
	for i := range abBlocks {
		var d, g time.Duration
		for j := range 2 {
			if (i+j)%2 == 0 {
				c.mode = waitDirect
				d = reduce(k)
			} else {
				c.mode = own
				g = reduce(k)
			}
		}
		direct, dist, ratios = append(direct, d.Seconds()), append(dist, g.Seconds()), append(ratios, g.Seconds()/d.Seconds())
	}
	c.mode = own
	if c.Rank() == 0 {
		fmt.Printf("%d ab %.9f %.9f %.4f %.4f %.4f\n", bytes, median(direct), median(dist), median(ratios), slices.Min(ratios), slices.Max(ratios))
	}
}

// logLoad logs the machine's load averages and runnable threads
// (/proc/loadavg) with when. A busy machine invalidates the benchmarks:
// its scheduler runs a process that never sleeps (the C program, a rank
// that computes alone) in long slices, and brings one whose threads wake
// often (the Go runtime's, around each cgo call) back at each wake-up.
// Under strace, whose stops make the C program sleep, its 1 MB
// all-reduce took 0.23 ms against 6.5 ms without, the load at 11.
func logLoad(t *testing.T, when string) {
	t.Helper()
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return
	}
	f := strings.Fields(string(b))
	if len(f) < 4 {
		return
	}
	warn := ""
	if l, err := strconv.ParseFloat(f[0], 64); err == nil && l > 1 {
		warn = ": the machine is busy, the figures are not to be trusted"
	}
	t.Logf("load %s: %s %s %s, runnable/threads %s%s", when, f[0], f[1], f[2], f[3], warn)
}

// median is the median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// column is the median of the i-th number of each run's line.
func column(runs [][]float64, i int) float64 {
	xs := make([]float64, len(runs))
	for j, r := range runs {
		xs[j] = r[i]
	}
	return median(xs)
}

// TestAllReduceOverhead compares dist's all-reduce of 1 to 64 MB on two
// ranks with testdata/allreduce.c, compiled with mpicc, making the call
// dist makes (the target: dist within 5% of it): MPI_Iallreduce polled
// without pause, under the settings dist makes for Open MPI
// (openMPISettings). A third side, testdata/cgoallreduce (where cgo and
// mpicc build it), makes the C program's calls from a Go program through
// cgo: dist over it is what purego's calls and dist's handling add within
// a Go process, it over C what a Go process costs around calls into MPI.
// Each side runs benchRounds times for each size, the sides alternating
// and taking turns to go first, and the test reports the medians of each
// side's time per call, the median of the rounds' ratios (dist over C,
// with their range; dist over cgo), and the context switches and page
// faults per call. Each round also runs TestChildAllReduceTime's "ab",
// which alternates dist's calls with MPI's blocking function called
// directly from Go in one process pair: its column, the median of the
// rounds' medians, is what polling gains or loses against the blocking
// call. The machine must be quiet for the figures to mean anything.
// NABLA_DIST_BENCH=1 turns it on.
//
//	NABLA_DIST_BENCH=1 go test ./dist -run TestAllReduceOverhead -v -count 1
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
	// cgoBin is the same calls from a Go program through cgo, or "" where
	// it does not build.
	cgoBin := filepath.Join(t.TempDir(), "cgoallreduce")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", cgoBin, "./testdata/cgoallreduce")
	build.Env = append(os.Environ(), "CGO_ENABLED=1", "CC="+mpicc)
	if out, err := build.CombinedOutput(); err != nil {
		t.Logf("no cgo column: building testdata/cgoallreduce: %v\n%s", err, out)
		cgoBin = ""
	}
	// run launches args on two ranks and returns the numbers of the line
	// that starts with the bytes (and, for an "ab" run, "ab").
	// The C and cgo sides run under the settings dist makes for Open MPI.
	var settings []string
	for _, kv := range openMPISettings(2, os.Getenv) {
		settings = append(settings, kv[0]+"="+kv[1])
	}
	run := func(bytes int, ab bool, env string, args ...string) []float64 {
		t.Helper()
		out, err := l.Command(context.Background(), 2, append([]string{benchEnv + "=" + env}, settings...), args...).CombinedOutput()
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 5 || f[0] != strconv.Itoa(bytes) || (f[1] == "ab") != ab {
				continue
			}
			if ab {
				f = f[1:]
			}
			v := make([]float64, len(f)-1)
			for i := range v {
				v[i], err = strconv.ParseFloat(f[i+1], 64)
				require.NoError(t, err, line)
			}
			return v
		}
		t.Fatalf("no time in the output (%v):\n%s", err, out)
		return nil
	}
	logLoad(t, "at the start")
	defer logLoad(t, "at the end")
	t.Logf("%d rounds; medians, the ratio's range in brackets; cgo: the C calls made from Go through cgo, and dist over it; in one process pair, dist over a direct call; switches (voluntary+involuntary) and faults per call", benchRounds)
	t.Logf("%9s %8s %10s %10s %10s %26s %9s %12s %12s %12s", "bytes", "C call", "C", "cgo", "dist", "dist/C", "dist/cgo", "in-process", "C sw, flt", "dist sw, flt")
	for _, bytes := range benchSizes {
		n, iters := strconv.Itoa(bytes), strconv.Itoa(max(5, (256<<20)/bytes))
		var c, cg, g, ab [][]float64 // C's, cgo's and dist's: seconds, switches (voluntary, involuntary), faults; ab: direct, dist, ratio
		mode := "spin"               // as dist polls
		child := []string{os.Args[0], "-test.run", "^TestChildAllReduceTime$"}
		for i := range benchRounds {
			sides := []func(){
				func() { c = append(c, run(bytes, false, "", bin, n, iters, mode)) },
				func() { g = append(g, run(bytes, false, n+" "+iters, child...)) },
			}
			if cgoBin != "" {
				sides = append(sides, func() { cg = append(cg, run(bytes, false, "", cgoBin, n, iters, mode)) })
			}
			for j := range sides { // each side goes first in turn
				sides[(i+j)%len(sides)]()
			}
			ab = append(ab, run(bytes, true, n+" "+iters+" ab", child...))
		}
		ratios, overCgo := make([]float64, benchRounds), make([]float64, len(cg))
		for i := range ratios {
			ratios[i] = g[i][0] / c[i][0]
		}
		for i := range overCgo {
			overCgo[i] = g[i][0] / cg[i][0]
		}
		cgoTime, cgoRatio := "-", "-"
		if len(cg) > 0 {
			cgoTime, cgoRatio = fmt.Sprintf("%7.3f ms", 1e3*column(cg, 0)), fmt.Sprintf("%+8.1f%%", 100*(median(overCgo)-1))
		}
		t.Logf("%9d %8s %7.3f ms %10s %7.3f ms %+7.1f%% [%+7.1f%%, %+7.1f%%] %9s %+11.1f%% %6.2f, %4.2f %6.2f, %4.2f", bytes, mode,
			1e3*column(c, 0), cgoTime, 1e3*column(g, 0), 100*(median(ratios)-1), 100*(slices.Min(ratios)-1), 100*(slices.Max(ratios)-1),
			cgoRatio, 100*(column(ab, 2)-1), column(c, 1)+column(c, 2), column(c, 3), column(g, 1)+column(g, 2), column(g, 3))
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
// step). With w1Env set to "alone", each rank trains a model of its own
// (no DataParallel, no collective in the step): two such ranks are what
// the machine allows two W1s at once, the ceiling of two ranks' scaling.
func TestChildW1Throughput(t *testing.T) {
	if !mpitest.IsChild() {
		t.Skip("runs under mpirun, started by TestW1Scaling")
	}
	c, err := Init()
	require.NoError(t, err)
	setWaitMode(c)
	var opts []nn.TrainingOption
	alone := os.Getenv(w1Env) == "alone"
	if !alone {
		opts = append(opts, DataParallel(c))
	}
	m, feeds := w1(t, opts...)
	step, inside := timeSteps(t, c, func() error { return m.Run(feeds) })
	// The step's all-reduces, in place as in the step: W1's first two
	// weights (784×256 and 256×256 float32s) alone, the other parameters
	// in one bucket.
	var reduces []func() error
	for _, n := range []int{784 * 256, 256 * 256, 256 + 256 + 256*10 + 10} {
		x := tensor.New(tensor.WithShape(n), tensor.Of(tensor.Float32))
		agreed := newAgreement()
		reduces = append(reduces, func() error { return c.allReduce(x, x, Sum, agreed) })
	}
	reduce, _ := timeSteps(t, c, func() error {
		for _, r := range reduces {
			if err := r(); err != nil {
				return err
			}
		}
		return nil
	})
	if c.Size() == 1 || alone {
		reduce = 0 // no MPI: the all-reduces copy, or nothing in place
	}
	if c.Rank() == 0 {
		fmt.Printf("samples/s %.1f\n", float64(w1Batch*c.Size())/step.Seconds())
		ms := func(d time.Duration) float64 { return 1e3 * d.Seconds() }
		fmt.Printf("step %.3f ms: computing %.3f ms, all-reduces %.3f ms, waiting %.3f ms (GOMAXPROCS %d)\n",
			ms(step), ms(step-inside), ms(reduce), ms(inside-reduce), runtime.GOMAXPROCS(0))
	}
	require.NoError(t, c.Close())
}

// w1Env, set to "alone", makes TestChildW1Throughput's ranks train
// apart.
const w1Env = "NABLA_DIST_W1"

// TestW1Scaling compares W1's training throughput on 2 ranks × 1 thread
// with 1 rank × 1 thread, both launched by mpirun (each rank bound to a
// core; the one thread is vm.WithThreads(1), GOMAXPROCS what Init makes
// it), with 2 ranks under GOMAXPROCS=1 (Go's choice on a bound rank,
// which Init raises: see minProcs), and with 2 ranks that train apart
// (the machine's ceiling for two ranks: its cores, caches and memory
// shared, no communication), each measured w1Rounds times in turn, and
// reports the medians and the best of each.
// NABLA_DIST_BENCH=1 turns it on.
//
//	NABLA_DIST_BENCH=1 go test ./dist -run TestW1Scaling -v -count 1
func TestW1Scaling(t *testing.T) {
	if mpitest.IsChild() || os.Getenv(benchEnv) == "" {
		t.Skip("a benchmark: NABLA_DIST_BENCH=1 turns it on")
	}
	l := mpitest.OpenMPI(t)
	logLoad(t, "at the start")
	defer logLoad(t, "at the end")
	runs := map[string][]float64{}
	kinds := []struct {
		name  string
		np    int
		env   string
		procs string // GOMAXPROCS, where set
	}{{"1 rank", 1, "", ""}, {"2 ranks", 2, "", ""}, {"2 ranks, GOMAXPROCS 1", 2, "", "1"}, {"2 apart", 2, "alone", ""}}
	for range w1Rounds {
		for _, k := range kinds {
			env := []string{w1Env + "=" + k.env}
			if k.procs != "" {
				env = append(env, "GOMAXPROCS="+k.procs)
			}
			out, err := l.Command(context.Background(), k.np, env,
				os.Args[0], "-test.run", "^TestChildW1Throughput$").CombinedOutput()
			var s float64
			for _, line := range strings.Split(string(out), "\n") {
				if v, ok := strings.CutPrefix(line, "samples/s "); ok {
					s, _ = strconv.ParseFloat(v, 64)
				}
				if strings.HasPrefix(line, "step ") {
					t.Logf("%s: %s", k.name, line)
				}
			}
			if s == 0 {
				t.Fatalf("%s: no throughput (%v):\n%s", k.name, err, out)
			}
			runs[k.name] = append(runs[k.name], s)
		}
	}
	med := func(name string) float64 { return median(slices.Clone(runs[name])) }
	best := func(name string) float64 { return slices.Max(runs[name]) }
	ratio := func(name string) string {
		return fmt.Sprintf("%s %.0f (%.0f): %.2f× (%.2f×)", name, med(name), best(name), med(name)/med("1 rank"), best(name)/best("1 rank"))
	}
	t.Logf("W1, float32, batch 64 per rank, SGD, 1 thread per rank, samples/s, median (best) of %d: 1 rank %.0f (%.0f); %s; %s; %s",
		w1Rounds, med("1 rank"), best("1 rank"), ratio("2 ranks"), ratio("2 ranks, GOMAXPROCS 1"), ratio("2 apart"))
}

// w1Rounds is how many times TestW1Scaling runs each kind.
const w1Rounds = 5

package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/data"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/vm"
)

// dirEnv names a folder every rank of a child run can write to.
const dirEnv = "NABLA_DIST_TEST_DIR"

const (
	ddpSteps    = 20
	ddpBatch    = 32 // each rank's
	ddpFeatures = 8
	ddpClasses  = 3
)

// ddpData is a classification set of steps·32·ranks rows, the same on
// every rank: labels from a fixed linear rule of the features.
func ddpData(t *testing.T, ranks int) *data.Tensors {
	rows := ddpSteps * ddpBatch * ranks
	rng := rand.New(rand.NewPCG(5, 5))
	x, y := make([]float64, rows*ddpFeatures), make([]float64, rows)
	for r := range rows {
		best, label := math.Inf(-1), 0
		for c := range ddpClasses {
			s := 0.0
			for f := range ddpFeatures {
				if c == 0 {
					x[r*ddpFeatures+f] = rng.NormFloat64()
				}
				s += x[r*ddpFeatures+f] * math.Sin(float64(3*f+c))
			}
			if s > best {
				best, label = s, c
			}
		}
		y[r] = float64(label)
	}
	d, err := data.NewTensors(
		data.Column{Name: "x", Data: tensor.New(tensor.WithShape(rows, ddpFeatures), tensor.WithBacking(x))},
		data.Column{Name: "y", Data: tensor.New(tensor.WithShape(rows), tensor.WithBacking(y))},
	)
	require.NoError(t, err)
	return d
}

// trainer is a model, its training machine and its loader.
type trainer struct {
	model  *nn.Sequential
	m      *vm.Machine
	x, y   *graph.Node
	loader *data.Loader
}

// newTrainer builds an MLP initialised from seed, trained by Adam on
// batches of batch rows, with the training options opts, on a machine
// made with mopts.
func newTrainer(t *testing.T, d *data.Tensors, seed uint64, batch int, mopts []vm.Option, opts ...nn.TrainingOption) *trainer {
	g := graph.New()
	rng := rand.New(rand.NewPCG(seed, 0))
	model := nn.NewSequential("mlp",
		nn.NewLinear(g, "hidden", ddpFeatures, 16, true, nn.WithRand(rng)), nn.ReLU{},
		nn.NewLinear(g, "output", 16, ddpClasses, true, nn.WithRand(rng)))
	x := g.Input("x", graph.Float64, batch, ddpFeatures)
	y := g.Input("y", graph.Float64, batch)
	loss := nn.CrossEntropy(model.Forward(x), y)
	updates, err := nn.TrainingUpdates(nn.NewAdam(nn.DefaultAdam().WithLR(0.01)), loss, model, opts...)
	require.NoError(t, err)
	p, err := compile.Compile([]*graph.Node{loss}, compile.WithUpdates(updates))
	require.NoError(t, err)
	m, err := vm.New(p, mopts...)
	require.NoError(t, err)
	l, err := data.NewLoader(d, batch)
	require.NoError(t, err)
	return &trainer{model: model, m: m, x: x, y: y, loader: l}
}

// train runs every batch of the loader and returns the parameters,
// end to end.
func (tr *trainer) train(t *testing.T) []float64 {
	require.Equal(t, ddpSteps, tr.loader.Len())
	for i := range tr.loader.Len() {
		b, err := tr.loader.Batch(i)
		require.NoError(t, err)
		require.NoError(t, tr.m.Run(vm.Feeds{tr.x: b[0], tr.y: b[1]}))
	}
	return tr.params(t)
}

func (tr *trainer) params(t *testing.T) []float64 {
	var all []float64
	for _, p := range nn.Parameters(tr.model) {
		v, err := tr.m.Value(p)
		require.NoError(t, err)
		all = append(all, graph.Float64s(v)...)
	}
	return all
}

// checkDataParallel trains on k ranks, each with batches of 32 and its
// own initial parameters (seed 1+rank) until BroadcastState gives them
// rank 0's, and compares the parameters after 20 steps with one process
// trained on batches of 32·k from rank 0's initial parameters. They
// differ by the summation order alone: the gradient's mean over 32·k rows
// is a mean of k means of 32. Every rank must hold the same parameters,
// bit for bit (an all-reduce gives every rank the same result).
func checkDataParallel(t *testing.T, c *Comm, opts ...ParallelOption) {
	checkDataParallelOn(t, c, nil, opts...)
}

// checkDataParallelOn is checkDataParallel with the ranks' machines made
// with mopts (on a device, say); the one process's is on the CPU.
func checkDataParallelOn(t *testing.T, c *Comm, mopts []vm.Option, opts ...ParallelOption) {
	k := c.Size()
	d := ddpData(t, k)
	ddp := newTrainer(t, d, 1+uint64(c.Rank()), ddpBatch, mopts, DataParallel(c, opts...))
	defer ddp.m.Close()
	if mopts != nil {
		reduces := 0
		for i, in := range ddp.m.Program().Instructions() {
			if in.Name() == "AllReduce" {
				reduces++
				require.False(t, ddp.m.OnHost(i), "%v: an all-reduce of the gradients runs on the host", c)
			}
		}
		if c.Size() > 1 { // one rank's DataParallel has nothing to reduce
			require.Positive(t, reduces, "%v: no all-reduce", c)
		}
	}
	require.NoError(t, ddp.loader.Shard(c.Rank(), k))
	require.NoError(t, c.BroadcastState(ddp.m, nn.StateOf(ddp.model), 0))
	got := ddp.train(t)
	want := newTrainer(t, d, 1, ddpBatch*k, nil).train(t)
	worst := 0.0
	for i := range want {
		worst = math.Max(worst, math.Abs(got[i]-want[i])/math.Max(1, math.Abs(want[i])))
	}
	t.Logf("%v: largest difference from one process with batch %d after %d steps: %.2g", c, ddpBatch*k, ddpSteps, worst)
	require.Less(t, worst, 1e-12, "%v: parameters differ from one process's", c)

	rank0 := tensor.New(tensor.WithShape(len(got)), tensor.WithBacking(append([]float64(nil), got...)))
	require.NoError(t, c.broadcast(rank0, rank0, 0, nil))
	require.Equal(t, rank0.Float64s(), got, "%v holds other parameters than rank 0", c)
}

// TestDataParallelSingleProcess: one process with DataParallel trains as
// without it.
func TestDataParallelSingleProcess(t *testing.T) { checkDataParallel(t, single()) }

// checkSave: Save writes rank 0's checkpoint alone (each rank names its
// own file, and only rank 0's exists), and a failure on rank 0 is every
// rank's error.
func checkSave(t *testing.T, c *Comm) {
	dir := os.Getenv(dirEnv)
	require.NotEmpty(t, dir)
	tr := newTrainer(t, ddpData(t, c.Size()), 1, ddpBatch, nil)
	state := nn.StateOf(tr.model)
	path := filepath.Join(dir, fmt.Sprintf("rank%d.safetensors", c.Rank()))
	require.NoError(t, c.Save(path, tr.m, state))
	require.NoError(t, c.Barrier())
	for r := range c.Size() {
		_, err := os.Stat(filepath.Join(dir, fmt.Sprintf("rank%d.safetensors", r)))
		require.Equal(t, r == 0, err == nil, "%v: rank %d's file: %v", c, r, err)
	}
	err := c.Save(filepath.Join(dir, "missing", "x.safetensors"), tr.m, state)
	require.ErrorContains(t, err, "dist: Save "+filepath.Join(dir, "missing", "x.safetensors"))
	if c.Rank() != 0 {
		require.ErrorContains(t, err, "rank 0 failed to write the checkpoint")
	}
}

// TestBuckets: gradients are packed last first, up to the limit, a larger
// one, or one of 256 KB or more, alone.
func TestBuckets(t *testing.T) {
	g := graph.New()
	grads := []*graph.Node{
		g.Input("a", graph.Float64, 4), // 32 bytes
		g.Input("b", graph.Float64, 2), // 16
		g.Input("c", graph.Float32, 2), // 8
		g.Input("d", graph.Float64, 8), // 64
		g.Input("e", graph.Float64, 1), // 8
	}
	require.Equal(t, [][]int{{4}, {3}, {2, 1}, {0}}, buckets(grads, 40))
	require.Equal(t, [][]int{{4, 3, 2, 1, 0}}, buckets(grads, DefaultBucketBytes))
	require.Equal(t, [][]int{{4}, {3}, {2}, {1}, {0}}, buckets(grads, 1))
	// From 256 KB, a gradient is all-reduced alone, not copied into a
	// bucket: W1's 784×256 and 256×256 weights, not its 256×10.
	w1 := []*graph.Node{
		g.Input("l1.weight", graph.Float32, 256, 784), g.Input("l1.bias", graph.Float32, 256),
		g.Input("l2.weight", graph.Float32, 256, 256), g.Input("l2.bias", graph.Float32, 256),
		g.Input("l3.weight", graph.Float32, 10, 256), g.Input("l3.bias", graph.Float32, 10),
	}
	require.Equal(t, [][]int{{2}, {0}, {5, 4, 3, 1}}, buckets(w1, DefaultBucketBytes))
}

// TestParallelErrors: a nil Comm, a bucket size that is not positive, a
// root out of range and a nil store are errors naming the call.
func TestParallelErrors(t *testing.T) {
	d := ddpData(t, 1)
	build := func(opt nn.TrainingOption) error {
		g := graph.New()
		model := nn.NewLinear(g, "l", ddpFeatures, ddpClasses, true)
		loss := nn.CrossEntropy(model.Forward(g.Input("x", graph.Float64, 4, ddpFeatures)), g.Input("y", graph.Float64, 4))
		_, err := nn.TrainingUpdates(nn.NewSGD(nn.SGDConfig{LR: 0.1}), loss, model, opt)
		return err
	}
	require.ErrorContains(t, build(DataParallel(nil)), "dist: DataParallel on a nil Comm: get one from dist.Init")
	require.ErrorContains(t, build(DataParallel(single(), BucketBytes(0))), "dist: DataParallel: bucket size 0 bytes is not positive")
	var none *Comm
	require.EqualError(t, none.Barrier(), "dist: Barrier on a nil Comm: get one from dist.Init")
	require.EqualError(t, none.Close(), "dist: Close on a nil Comm: get one from dist.Init")
	require.EqualError(t, none.Save("x", nil, nil), "dist: Save on a nil Comm: get one from dist.Init")
	tr := newTrainer(t, d, 1, ddpBatch, nil)
	require.EqualError(t, none.BroadcastState(tr.m, nil, 0), "dist: BroadcastState on a nil Comm: get one from dist.Init")
	require.EqualError(t, single().BroadcastState(tr.m, nil, 1), "dist: BroadcastState: root 1 is not a rank of 1")
	require.EqualError(t, single().BroadcastState(nil, nil, 0), "dist: BroadcastState: the store is nil")
	require.ErrorContains(t, single().Save(filepath.Join(t.TempDir(), "missing", "x"), tr.m, nn.StateOf(tr.model)), "dist: Save ")
}

// TestDataParallelFoldsMean: DataParallel all-reduces sums and leaves the
// division by the number of ranks to the optimiser's update, which the
// compiler fuses it into (SGD's here): no pass of its own over the
// gradients. Each all-reduce sums in its gradient's (or bucket's) own
// buffer (AllReduceOp.InPlace).
func TestDataParallelFoldsMean(t *testing.T) {
	g := graph.New()
	model := nn.NewSequential("mlp",
		nn.NewLinear(g, "hidden", ddpFeatures, 16, true), nn.Tanh{},
		nn.NewLinear(g, "output", 16, ddpClasses, true))
	loss := nn.CrossEntropy(model.Forward(g.Input("x", graph.Float64, 4, ddpFeatures)), g.Input("y", graph.Float64, 4))
	two := &Comm{size: 2, timeout: DefaultTimeout}
	for _, bucket := range []int{DefaultBucketBytes, 1} {
		updates, err := nn.TrainingUpdates(nn.NewSGD(nn.SGDConfig{LR: 0.1}), loss, model, DataParallel(two, BucketBytes(bucket)))
		require.NoError(t, err)
		p, err := compile.Compile([]*graph.Node{loss}, compile.WithUpdates(updates))
		require.NoError(t, err)
		reduces, fused := 0, 0
		for _, in := range p.Instructions() {
			if op, ok := in.Op.(AllReduceOp); ok {
				require.Equal(t, Sum, op.Reduction, "bucket %d: %s", bucket, p)
				require.Equal(t, in.In[0], in.Out[0], "bucket %d: an all-reduce not in place:\n%s", bucket, p)
				reduces++
			}
			require.NotEqual(t, "Scale", in.Name(), "bucket %d: a pass of its own:\n%s", bucket, p)
			if strings.HasPrefix(in.Name(), "Fused(Scale,") {
				fused++
			}
		}
		require.Equal(t, map[int]int{DefaultBucketBytes: 1, 1: 4}[bucket], reduces, "bucket %d:\n%s", bucket, p)
		require.Equal(t, 4, fused, "bucket %d: the updates that divide:\n%s", bucket, p)
	}
}

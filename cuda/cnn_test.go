package cuda

import (
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// cnnStep is the training step (Adam) of examples/cnn's network: two
// blocks of 3×3 convolution (c1, then c2 channels), batch normalisation,
// ReLU and 2×2 max pooling, then a linear layer to 10 classes, on a batch
// of single-channel images of side×side pixels; with feeds for three
// steps. The convolutions have biases when bias is set. Fashion-MNIST's
// is cnnStep(t, dtype, 64, 28, 32, 64, true).
func cnnStep(t testing.TB, dtype tensor.Dtype, batch, side, c1, c2 int, bias bool) (*compile.Program, []vm.Feeds) {
	g := graph.New()
	rng := rand.New(rand.NewPCG(5, 6))
	same := ops.ConvOptions{Padding: []int{1}}
	pool := ops.PoolOptions{Kernel: []int{2}}
	opts := []nn.Option{nn.WithDType(dtype), nn.WithRand(rng)}
	model := nn.NewSequential("cnn",
		nn.NewConv2d(g, "conv1", 1, c1, []int{3}, bias, same, opts...),
		nn.NewBatchNorm2d(g, "bn1", c1, 1e-5, 0.1, opts[0]),
		nn.ReLU{},
		nn.MaxPool2d{Options: pool},
		nn.NewConv2d(g, "conv2", c1, c2, []int{3}, bias, same, opts...),
		nn.NewBatchNorm2d(g, "bn2", c2, 1e-5, 0.1, opts[0]),
		nn.ReLU{},
		nn.MaxPool2d{Options: pool},
		nn.Flatten{StartDim: 1},
		nn.NewLinear(g, "fc", c2*(side/4)*(side/4), 10, true, opts...),
	)
	nn.SetTraining(model, true)
	x := g.Input("x", dtype, batch, 1, side, side)
	labels := g.Input("labels", graph.Int64, batch)
	loss := nn.CrossEntropy(model.Forward(x), labels)
	updates, err := nn.TrainingUpdates(nn.NewAdam(nn.DefaultAdam()), loss, model)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{loss}, compile.WithUpdates(updates))
	if err != nil {
		t.Fatal(err)
	}
	var feeds []vm.Feeds
	for range 3 {
		xs := make([]float64, batch*side*side)
		for i := range xs {
			xs[i] = rng.Float64()
		}
		ls := make([]int64, batch)
		for i := range ls {
			ls[i] = int64(rng.IntN(10))
		}
		xd, _ := graph.FromFloat64s(dtype, xs, batch, 1, side, side)
		feeds = append(feeds, vm.Feeds{x: xd, labels: tensor.New(tensor.WithShape(batch), tensor.WithBacking(ls))})
	}
	return prog, feeds
}

// maxItemWork bounds the serial work of one item of any kernel of the
// Fashion-MNIST training step: loop iterations, nested loops multiplied.
const maxItemWork = 4096

// The Fashion-MNIST training step runs wholly on the device, and none of
// its kernels has an item doing more than maxItemWork loop iterations:
// the long sums (channel statistics and their gradients, bias and weight
// gradients) are split over chunks, so that a GPU runs them on many
// threads rather than a few. Every kernel with a loop says how long it
// is (graph.CUDASource's Work).
func TestCNNStepPlanIsParallel(t *testing.T) {
	prog, _ := cnnStep(t, graph.Float32, 64, 28, 32, 64, true)
	pl, err := newPlan(prog)
	if err != nil {
		t.Fatal(err)
	}
	instrs := prog.Instructions()
	for i, h := range pl.onHost {
		if h {
			t.Errorf("%s (node %v) runs on the host", instrs[i].Name(), instrs[i].Node)
		}
	}
	launches, most := 0, int64(0)
	for _, s := range pl.steps {
		if s.kind != stepKernel {
			continue
		}
		launches++
		most = max(most, s.work)
		name := instrs[s.instr].Name()
		if s.work > maxItemWork {
			t.Errorf("%s: %s × %d runs %d iterations an item, more than %d", name, pl.kernels[s.kernel].name, s.n, s.work, maxItemWork)
		}
		if body := pl.kernels[s.kernel].body; s.work == 0 && (strings.Contains(body, "for (") || strings.Contains(body, "while")) {
			t.Errorf("%s: %s loops but does not say how long:\n%s", name, pl.kernels[s.kernel].name, body)
		}
	}
	t.Logf("%d kernel launches, at most %d iterations an item", launches, most)
}

// A smaller network's training step, its sums long enough to be split,
// gives the CPU's loss, parameters and statistics on the device, step
// after step. Its convolutions have no bias: batch normalisation
// cancels a bias, whose gradient is then rounding noise that Adam scales
// up to a step, different in each order of summation.
func TestCNNTrainingStep(t *testing.T) {
	for _, dev := range testDevices(t) {
		for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
			prog, feeds := cnnStep(t, dtype, 8, 12, 4, 6, false)
			compareRuns(t, dev, prog, feeds)
		}
	}
}

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// testDevices are the devices the machine tests run on: the GPU where
// one is available, and the host stand-in where a C compiler is, running
// each kernel's items in reverse (OpenHost's users run them in order), so
// that a kernel whose items depend on one another's order fails.
func testDevices(t *testing.T) []*Device {
	t.Helper()
	var devs []*Device
	if d, err := Open(0); err == nil {
		devs = append(devs, d)
		t.Cleanup(func() { d.Close() })
	} else {
		t.Logf("no GPU: %v", err)
	}
	if d, err := openHost(true); err == nil {
		devs = append(devs, d)
		t.Cleanup(func() { d.Close() })
	} else {
		t.Logf("no host stand-in: %v", err)
	}
	if len(devs) == 0 {
		t.Skip("neither a GPU nor a C compiler for the host stand-in")
	}
	return devs
}

// machines returns a one-thread CPU machine and a machine on dev for prog.
func machines(t *testing.T, prog *compile.Program, dev *Device) (cpu, onDev *vm.Machine) {
	t.Helper()
	cpu, err := vm.New(prog, vm.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	onDev, err = vm.New(prog, vm.OnDevice(dev))
	if err != nil {
		t.Fatalf("%v: %v", dev, err)
	}
	return cpu, onDev
}

// compareRuns runs prog on the CPU and on dev with each of feeds in turn
// and compares every output and parameter after each run (compareRun).
func compareRuns(t *testing.T, dev *Device, prog *compile.Program, feeds []vm.Feeds) *vm.Machine {
	t.Helper()
	cpu, gpu := machines(t, prog, dev)
	t.Cleanup(gpu.Close)
	for r, f := range feeds {
		if err := compareRun(cpu, gpu, f, append(append([]*graph.Node{}, prog.Outputs()...), prog.Params()...)); err != nil {
			t.Fatalf("%v: run %d: %v", dev, r, err)
		}
	}
	return gpu
}

// mlpStep is W1's training step at a smaller size: a tanh perceptron with
// the mean cross-entropy, and its feeds for a few steps.
func mlpStep(t *testing.T, dtype tensor.Dtype, optimizer nn.Optimizer) (*compile.Program, []vm.Feeds) {
	return mlpStepOf(t, dtype, optimizer, []int{12, 16, 8, 5}, 7)
}

// mlpStepOf is mlpStep for layers of the given sizes and a batch of the
// given size (W1's are 784, 256, 256, 10 and 64).
func mlpStepOf(t testing.TB, dtype tensor.Dtype, optimizer nn.Optimizer, sizes []int, batch int) (*compile.Program, []vm.Feeds) {
	g := graph.New()
	rng := rand.New(rand.NewPCG(1, 2))
	var mods []nn.Module
	for i := 1; i < len(sizes); i++ {
		mods = append(mods, nn.NewLinear(g, fmt.Sprintf("fc%d", i), sizes[i-1], sizes[i], true, nn.WithDType(dtype), nn.WithRand(rng)))
		if i < len(sizes)-1 {
			mods = append(mods, nn.Tanh{})
		}
	}
	model := nn.NewSequential("mlp", mods...)
	x := g.Input("x", dtype, batch, sizes[0])
	labels := g.Input("labels", graph.Int64, batch)
	loss := nn.CrossEntropy(model.Forward(x), labels)
	updates, err := nn.TrainingUpdates(optimizer, loss, model)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{loss}, compile.WithUpdates(updates))
	if err != nil {
		t.Fatal(err)
	}
	var feeds []vm.Feeds
	for range 3 {
		xs := make([]float64, batch*sizes[0])
		for i := range xs {
			xs[i] = rng.NormFloat64()
		}
		ls := make([]int64, batch)
		for i := range ls {
			ls[i] = int64(rng.IntN(sizes[len(sizes)-1]))
		}
		xd, _ := graph.FromFloat64s(dtype, xs, batch, sizes[0])
		feeds = append(feeds, vm.Feeds{x: xd, labels: tensor.New(tensor.WithShape(batch), tensor.WithBacking(ls))})
	}
	return prog, feeds
}

// A training step (forward, backward, SGD or Adam update) gives the CPU's
// loss and parameters on the device, step after step.
func TestTrainingStep(t *testing.T) {
	for _, dev := range testDevices(t) {
		for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
			for _, opt := range []func() nn.Optimizer{
				func() nn.Optimizer { return nn.NewSGD(nn.SGDConfig{LR: 0.1, Momentum: 0.9}) },
				func() nn.Optimizer { return nn.NewAdam(nn.DefaultAdam().WithLR(0.01)) },
			} {
				prog, feeds := mlpStep(t, dtype, opt())
				compareRuns(t, dev, prog, feeds)
			}
		}
	}
}

// checkOnDevices compiles outputs, runs them on the CPU and on every test
// device with feeds, compares every output (float64 to 1e-12, float32 to
// 1e-5), and checks that every instruction whose op is named in onDevice
// ran on the device, not on the host. It is the harness of the kernels'
// tests.
func checkOnDevices(t *testing.T, outputs []*graph.Node, feeds vm.Feeds, onDevice ...string) {
	t.Helper()
	prog, err := compile.Compile(outputs)
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range testDevices(t) {
		m := compareRuns(t, dev, prog, []vm.Feeds{feeds})
		for i, in := range prog.Instructions() {
			if m.OnHost(i) && slices.Contains(onDevice, in.Name()) {
				t.Errorf("%v: %s (node %v) ran on the host", dev, in.Name(), in.Node)
			}
		}
	}
}

// The Hessian and a Hessian–vector product of W3's two-layer tanh
// network (at a smaller size) and of the Hessian example's function give
// the CPU's values on the device.
func TestHessian(t *testing.T) {
	const dim = 8
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(shape ...int) *tensor.Dense {
		v := make([]float64, graph.ShapeSize(shape))
		for i := range v {
			v[i] = rng.Float64()*2 - 1
		}
		d, _ := graph.FromFloat64s(graph.Float64, v, shape...)
		return d
	}
	g := graph.New()
	x := g.Input("x", graph.Float64, 1, dim)
	v := g.Input("v", graph.Float64, 1, dim)
	h := ops.Tanh(ops.Add(ops.MatMul(x, g.Const(random(dim, dim))), g.Const(random(dim))))
	network := ops.Sum(ops.Tanh(ops.Add(ops.MatMul(h, g.Const(random(dim, dim))), g.Const(random(dim)))))
	example := ops.Add(ops.Sum(ops.Mul(ops.Sin(x), ops.PowConst(x, 3))), ops.Log1p(ops.Sum(ops.Square(x))))
	var outs []*graph.Node
	for _, f := range []*graph.Node{network, example} {
		hess, err := compile.Hessian(f, x)
		if err != nil {
			t.Fatal(err)
		}
		hvp, err := compile.HVP(f, x, v)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, hess, hvp)
	}
	checkOnDevices(t, outs, vm.Feeds{x: random(1, dim), v: random(1, dim)}, "MatMul", "SharedMatMul", "Tanh")
}

func mustTensor(t *testing.T, v []float64, shape ...int) *tensor.Dense {
	t.Helper()
	d, err := graph.FromFloat64s(graph.Float64, v, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func nanValue() float64 { return math.NaN() }

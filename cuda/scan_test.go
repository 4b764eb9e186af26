package cuda

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// An LSTM's forward and backward pass (its Scans, forward and reverse,
// with the gradient's sums over the steps) runs wholly on the device, as
// loops unrolled into the device's steps, and gives the CPU's loss and
// gradients; a Scan whose body needs the host, and one too long to
// unroll, stay on the host.
func TestScanRunsOnTheDevice(t *testing.T) {
	g := graph.New()
	m := nn.NewLSTM(g, "lstm", 3, 4, nn.RecurrentConfig{}, nn.WithDType(graph.Float64), nn.WithRand(rand.New(rand.NewPCG(1, 2))))
	x := g.Input("x", graph.Float64, 5, 2, 3)
	loss := ops.Sum(m.Forward(x))
	grads, err := compile.Grad(loss, nn.Parameters(m)...)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := compile.Compile(append([]*graph.Node{loss}, grads...))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := newPlan(prog)
	if err != nil {
		t.Fatal(err)
	}
	scans := 0
	for i, in := range prog.Instructions() {
		if len(in.Bodies) > 0 {
			scans++
			if pl.onHost[i] {
				t.Errorf("%s (node %v) runs on the host", in.Name(), in.Node)
			}
		}
	}
	if scans < 2 {
		t.Fatalf("%d loops in the LSTM's forward and backward pass, want a forward and a reverse Scan", scans)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var feeds []vm.Feeds
	for range 2 {
		xs := make([]float64, 5*2*3)
		for i := range xs {
			xs[i] = rng.NormFloat64()
		}
		xd, _ := graph.FromFloat64s(graph.Float64, xs, 5, 2, 3)
		feeds = append(feeds, vm.Feeds{x: xd})
	}
	for _, dev := range testDevices(t) {
		compareRuns(t, dev, prog, feeds)
	}
}

// A loop of many steps is not unrolled: it runs on the host.
func TestLongScanStaysOnTheHost(t *testing.T) {
	g := graph.New()
	x0 := g.Input("x0", graph.Float64, 2)
	final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return []*graph.Node{ops.Tanh(c[0])}, nil
	}, []*graph.Node{x0}, nil, ops.Steps(maxScanSteps))
	prog, err := compile.Compile(final)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := newPlan(prog)
	if err != nil {
		t.Fatal(err)
	}
	if !hasHost(pl) {
		t.Errorf("a Scan of %d steps was unrolled", maxScanSteps)
	}
}

// Feeds go up to the device as they are, views through their strides:
// the program sees the fed values, Value of an input gives them back,
// and the caller may change its tensor once Run returns.
func TestFeedsGoUpAsTheyAre(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 2)
	y := ops.Scale(x, 2)
	prog, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range testDevices(t) {
		m, err := vm.New(prog, vm.OnDevice(dev))
		if err != nil {
			t.Fatal(err)
		}
		whole := mustTensor(t, []float64{1, 2, 3, 4}, 2, 2)
		big := mustTensor(t, []float64{9, 9, 5, 6, 7, 8}, 3, 2)
		view, err := big.Slice(tensor.S(1, 3))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			feed *tensor.Dense
			want []float64
		}{{whole, []float64{1, 2, 3, 4}}, {view.(*tensor.Dense), []float64{5, 6, 7, 8}}} {
			if err := m.Run(vm.Feeds{x: c.feed}); err != nil {
				t.Fatal(err)
			}
			if c.feed == whole {
				whole.Float64s()[0] = 100 // after Run: the device has its copy
			}
			got, _ := m.Value(y)
			in, _ := m.Value(x)
			if msg := closeTo(got, mustTensor(t, []float64{2 * c.want[0], 2 * c.want[1], 2 * c.want[2], 2 * c.want[3]}, 2, 2), 0); msg != "" {
				t.Errorf("%v: y: %s", dev, msg)
			}
			if msg := closeTo(in, mustTensor(t, c.want, 2, 2), 0); msg != "" {
				t.Errorf("%v: Value(x): %s", dev, msg)
			}
		}
		m.Close()
	}
}

package compile_test

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

// sameBits compares values element by element, bit for bit.
func sameBits(t *testing.T, what string, got, want [][]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("case %s: got %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("case %s: value %d: got %d elements, want %d", what, i, len(got[i]), len(want[i]))
		}
		for j, w := range want[i] {
			if math.Float64bits(got[i][j]) != math.Float64bits(w) {
				t.Errorf("case %s: value %d element %d: got %v, want %v", what, i, j, got[i][j], w)
				return
			}
		}
	}
}

// fusedCount counts a program's fused instructions.
func fusedCount(p *compile.Program) int {
	n := 0
	for i := range p.Instructions() {
		if len(p.Instructions()[i].Absorbed()) > 0 {
			n++
		}
	}
	return n
}

// elementwiseBuilders are the ops random elementwise graphs draw from.
var elementwiseBuilders = []func(a, b, c *graph.Node) *graph.Node{
	func(a, _, _ *graph.Node) *graph.Node { return ops.Tanh(a) },
	func(a, _, _ *graph.Node) *graph.Node { return ops.Sin(a) },
	func(a, _, _ *graph.Node) *graph.Node { return ops.Exp(ops.Neg(ops.Square(a))) },
	func(a, _, _ *graph.Node) *graph.Node { return ops.Sigmoid(a) },
	func(a, _, _ *graph.Node) *graph.Node { return ops.Scale(a, 0.75) },
	func(a, _, _ *graph.Node) *graph.Node { return ops.Sqrt(ops.Abs(a)) },
	func(a, _, _ *graph.Node) *graph.Node { return ops.Log1p(ops.Abs(a)) },
	func(a, _, _ *graph.Node) *graph.Node { return ops.PowConst(a, 3) },
	func(a, _, _ *graph.Node) *graph.Node { return ops.ReLU(a) },
	func(a, b, _ *graph.Node) *graph.Node { return ops.Add(a, b) },
	func(a, b, _ *graph.Node) *graph.Node { return ops.Sub(a, b) },
	func(a, b, _ *graph.Node) *graph.Node { return ops.Mul(a, b) },
	func(a, b, _ *graph.Node) *graph.Node {
		return ops.Div(a, ops.Add(ops.Square(b), a.Graph().Scalar(1, a.DType())))
	},
	func(a, b, _ *graph.Node) *graph.Node { return ops.Maximum(a, b) },
	func(a, b, c *graph.Node) *graph.Node { return ops.Where(ops.Less(a, b), c, a) },
}

// randomElementwise builds a random graph of n elementwise ops or so (a
// builder adds up to three) over inputs of shapes (4,5), (5), (4,1) and
// (), some values read several times; its outputs are the last value and,
// now and then, an intermediate one.
func randomElementwise(rng *rand.Rand, dtype tensor.Dtype, n int) (outputs []*graph.Node, feeds vm.Feeds) {
	g := graph.New()
	var nodes []*graph.Node
	feeds = vm.Feeds{}
	for _, shape := range [][]int{{4, 5}, {4, 5}, {5}, {4, 1}, {}} {
		x := g.Input("in", dtype, shape...)
		v := graph.NewDense(dtype, shape...)
		for i := range graph.ShapeSize(shape) {
			graph.SetFloat(v, i, rng.Float64()*4-2)
		}
		feeds[x] = v
		nodes = append(nodes, x)
	}
	pick := func() *graph.Node {
		if rng.IntN(2) == 0 {
			return nodes[len(nodes)-1]
		}
		return nodes[rng.IntN(len(nodes))]
	}
	for range n {
		b := elementwiseBuilders[rng.IntN(len(elementwiseBuilders))]
		y := b(pick(), pick(), pick())
		if rng.IntN(8) == 0 {
			outputs = append(outputs, y)
		}
		nodes = append(nodes, y)
	}
	return append(outputs, nodes[len(nodes)-1]), feeds
}

// Fused programs compute the bits unfused ones compute.
func TestFuseRandomGraphsBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	fused := 0
	for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
		for trial := range 40 {
			outputs, feeds := randomElementwise(rng, dtype, 5+rng.IntN(36))
			pr := problem{name: "random", outputs: outputs, feeds: feeds}
			on := runProblem(t, pr, nil)
			off := runProblem(t, pr, []compile.Option{compile.WithoutPass("fuse")})
			sameBits(t, fmt.Sprintf("%v #%d", dtype, trial), on, off)
			p, err := compile.Compile(outputs)
			if err != nil {
				t.Fatal(err)
			}
			fused += fusedCount(p)
		}
	}
	if fused < 40 {
		t.Errorf("got %d fused instructions in 80 programs, want the pass to fire", fused)
	}
}

// The gradient of the mean softmax cross-entropy, (softmax - onehot)·g/n,
// fuses its difference and product.
func TestFuseSoftmaxCrossEntropyGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	g := graph.New()
	x := g.Input("logits", graph.Float64, 8, 5)
	labels := g.Input("labels", graph.Float64, 8)
	loss := ops.Mean(ops.CrossEntropy(x, labels))
	grads, err := compile.Grad(loss, x)
	if err != nil {
		t.Fatal(err)
	}
	feeds := vm.Feeds{x: graph.NewDense(graph.Float64, 8, 5), labels: graph.NewDense(graph.Float64, 8)}
	for i := range 40 {
		graph.SetFloat(feeds[x], i, rng.NormFloat64())
	}
	for i := range 8 {
		graph.SetFloat(feeds[labels], i, float64(rng.IntN(5)))
	}
	on := must(compile.Compile(grads))
	off := must(compile.Compile(grads, compile.WithoutPass("fuse")))
	if fusedCount(on) == 0 || len(on.Instructions()) >= len(off.Instructions()) {
		t.Errorf("got program\n%s\nwant a fused instruction, fewer than the %d without fuse", on, len(off.Instructions()))
	}
	pr := problem{name: "softmax cross-entropy", outputs: grads, feeds: feeds}
	sameBits(t, pr.name, runProblem(t, pr, nil), runProblem(t, pr, []compile.Option{compile.WithoutPass("fuse")}))
}

// mlpTraining builds one training step of a tanh MLP with opt: its loss and
// its updates.
func mlpTraining(t *testing.T, opt nn.Optimizer) (pr problem, updates map[*graph.Node]*graph.Node) {
	t.Helper()
	rng := rand.New(rand.NewPCG(15, 16))
	g := graph.New()
	x := g.Input("x", graph.Float64, 16, 8)
	y := g.Input("y", graph.Float64, 16, 3)
	net := nn.NewSequential("mlp", nn.NewLinear(g, "l1", 8, 12, true), nn.Tanh{}, nn.NewLinear(g, "l2", 12, 3, true))
	loss := nn.MSE(net.Forward(x), y)
	updates, err := nn.TrainingUpdates(opt, loss, net)
	if err != nil {
		t.Fatal(err)
	}
	feeds := vm.Feeds{x: randomDense(rng, 16, 8), y: randomDense(rng, 16, 3)}
	var params []*graph.Node
	for _, p := range nn.NamedParameters(net) {
		params = append(params, p.Node)
	}
	return problem{name: "mlp", outputs: []*graph.Node{loss}, updates: updates, feeds: feeds, params: params}, updates
}

// A training step fuses the optimiser's arithmetic: the updates of a
// parameter (the parameter's and, with Adam, its two moments') are
// written by one fused instruction, and the values are unchanged.
func TestFuseTrainingStep(t *testing.T) {
	for _, c := range []struct {
		name      string
		opt       nn.Optimizer
		perParam  int // updates per parameter
		wantFewer int // instructions fusion saves at least
	}{
		{"SGD", nn.NewSGD(nn.SGDConfig{LR: 0.1}), 1, 4},
		{"Adam", nn.NewAdam(nn.DefaultAdam()), 3, 4 * 10},
	} {
		pr, updates := mlpTraining(t, c.opt)
		on := must(compile.Compile(pr.outputs, compile.WithUpdates(updates)))
		off := must(compile.Compile(pr.outputs, compile.WithUpdates(updates), compile.WithoutPass("fuse")))
		t.Logf("%s: %d instructions, %d without fuse", c.name, len(on.Instructions()), len(off.Instructions()))
		if !slices.Equal(on.Params(), off.Params()) {
			t.Errorf("case %s: parameters %v, %v without fuse: want the same order", c.name, on.Params(), off.Params())
		}
		if got, limit := len(on.Instructions()), len(off.Instructions())-c.wantFewer; got > limit {
			t.Errorf("case %s: got %d instructions, want at most %d", c.name, got, limit)
		}
		writer := map[int]int{}
		for i, in := range on.Instructions() {
			for _, s := range in.Out {
				writer[s] = i
			}
		}
		// Updates of tensors (not the scalar step count) by instruction.
		written := map[int][]*graph.Node{}
		for _, u := range on.Updates() {
			if !u.Param.Type().IsScalar() {
				written[writer[u.From]] = append(written[writer[u.From]], u.Param)
			}
		}
		if len(written) != len(pr.params) {
			t.Errorf("case %s: got %d instructions writing the updates of %d parameters, want one each", c.name, len(written), len(pr.params))
		}
		for i, params := range written {
			in := &on.Instructions()[i]
			if len(params) != c.perParam || len(in.Absorbed()) < 2 {
				t.Errorf("case %s: instruction %d (%s) writes the updates of %v, want one parameter's %d", c.name, i, in.Name(), params, c.perParam)
			}
		}
		sameBits(t, c.name, runProblem(t, pr, nil), runProblem(t, pr, []compile.Option{compile.WithoutPass("fuse")}))
	}
}

// A machine runs fused programs (here of two outputs) without allocating,
// on one thread or two, small and large.
func TestFuseDoesNotAllocate(t *testing.T) {
	for _, size := range []int{16, 1 << 16} {
		g := graph.New()
		x := g.Input("x", graph.Float32, size)
		s := g.Input("s", graph.Float32)
		th := ops.Tanh(ops.Scale(x, 0.5))
		y := ops.Add(ops.Mul(th, s), ops.Sin(x))
		p := must(compile.Compile([]*graph.Node{y, th})) // two outputs
		if fusedCount(p) != 1 || len(p.Instructions()) != 1 {
			t.Fatalf("got program\n%s\nwant one fused instruction", p)
		}
		feeds := vm.Feeds{x: graph.NewDense(graph.Float32, size), s: graph.NewDense(graph.Float32)}
		for _, threads := range []int{1, 2} {
			m := must(vm.New(p, vm.WithThreads(threads)))
			if err := m.Run(feeds); err != nil {
				t.Fatal(err)
			}
			if n := testing.AllocsPerRun(10, func() { _ = m.Run(feeds) }); n != 0 {
				t.Errorf("case size %d, %d threads: got %v allocations per run, want 0", size, threads, n)
			}
			m.Close()
		}
	}
}

// With fuse, a training step's activations live no longer than in
// program order, whatever the optimiser, checkpointed or not: fuse moves
// each update up to its gradient, rather than each gradient's product
// down to its update at the end of the step, which would keep the
// activations the products read (the recomputed ones too) alive to the
// end.
func TestFuseTrainingStepMemory(t *testing.T) {
	const layers, width, batch = 8, 32, 16
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		name string
		opt  func() nn.Optimizer
	}{
		{"SGD", func() nn.Optimizer { return nn.NewSGD(nn.SGDConfig{LR: 0.1}) }},
		{"Adam", func() nn.Optimizer { return nn.NewAdam(nn.DefaultAdam()) }},
		{"AdamW", func() nn.Optimizer { return nn.NewAdamW(nn.DefaultAdamW()) }},
	} {
		for _, segment := range []int{0, 2} { // layers per checkpointed segment (0: none)
			g := graph.New()
			x := g.Input("x", graph.Float64, batch, width)
			y := g.Input("y", graph.Float64, batch, width)
			var mods []nn.Module
			for i := range layers {
				mods = append(mods, nn.NewLinear(g, fmt.Sprint("l", i), width, width, true), nn.Tanh{})
			}
			net := nn.NewSequential("mlp", mods...)
			h := net.Forward(x)
			if segment > 0 {
				h = x
				for i := 0; i < len(mods); i += 2 * segment {
					part := nn.NewSequential(fmt.Sprint("part", i), mods[i:min(i+2*segment, len(mods))]...)
					h = ops.Checkpoint(func(in []*graph.Node) []*graph.Node { return []*graph.Node{part.Forward(in[0])} }, h)[0]
				}
			}
			loss := nn.MSE(h, y)
			updates, err := nn.TrainingUpdates(c.opt(), loss, net)
			if err != nil {
				t.Fatal(err)
			}
			for _, outputs := range [][]*graph.Node{{loss}, nil} { // the loss an output or not
				on := must(compile.Compile(outputs, compile.WithUpdates(updates)))
				off := must(compile.Compile(outputs, compile.WithUpdates(updates), compile.WithoutPass("fuse")))
				got, want := activationBytes(on, batch*width), activationBytes(off, batch*width)
				t.Logf("%s, segments of %d layers, %d outputs: %d bytes of activations, %d without fuse", c.name, segment, len(outputs), got, want)
				if got > want {
					t.Errorf("%s, segments of %d layers, %d outputs: %d bytes of activations, more than without fuse (%d)",
						c.name, segment, len(outputs), got, want)
				}
			}
			pr := problem{name: fmt.Sprintf("%s, segments of %d layers", c.name, segment), outputs: []*graph.Node{loss}, updates: updates,
				feeds: vm.Feeds{x: randomDense(rng, batch, width), y: randomDense(rng, batch, width)}}
			for _, p := range nn.NamedParameters(net) {
				pr.params = append(pr.params, p.Node)
			}
			sameBits(t, pr.name, runProblem(t, pr, nil), runProblem(t, pr, []compile.Option{compile.WithoutPass("fuse")}))
		}
	}
}

// activationBytes is the storage the memory planner gives the values of
// the given number of elements the program computes.
func activationBytes(p *compile.Program, size int) int64 {
	var n int64
	for _, s := range p.Slots() {
		if s.Kind == graph.KindOp && s.Type.Size() == size {
			n += int64(size) * int64(s.Type.DType.Size())
		}
	}
	return n
}

// randomDense is a float64 tensor of the given shape, normally distributed.
func randomDense(r *rand.Rand, shape ...int) *tensor.Dense {
	d := graph.NewDense(graph.Float64, shape...)
	for i := range graph.ShapeSize(shape) {
		graph.SetFloat(d, i, r.NormFloat64())
	}
	return d
}

package bench

import (
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Benchmarks of nabla beside Gorgonia on the same work; README.md has the
// command and the figures. Run them with a short -benchtime: the machine
// is shared.

var dtypes = []tensor.Dtype{graph.Float32, graph.Float64}

// The training step's sizes: an MNIST-shaped perceptron.
const (
	mnistIn, mnistHidden, mnistClasses, mnistBatch = 784, 256, 10, 64
	learningRate                                   = 0.1
)

func newNablaStep(tb testing.TB, dtype tensor.Dtype) (*nablaMLP, *vm.Machine) {
	tb.Helper()
	m := buildNablaMLP(dtype, newMLPData(mnistIn, mnistHidden, mnistClasses, mnistBatch, 1))
	machine, err := m.trainingStep(learningRate)
	if err != nil {
		tb.Fatal(err)
	}
	return m, machine
}

func loss(tb testing.TB, m *vm.Machine, n *graph.Node) float64 {
	tb.Helper()
	v, err := m.Value(n)
	if err != nil {
		tb.Fatal(err)
	}
	return graph.Float(v, 0)
}

// TestTrainingStepDoesNotAllocate asserts the VM's promise on the largest
// program here: after a warm-up run, a whole training step (forward,
// backward and the SGD update) allocates nothing.
func TestTrainingStepDoesNotAllocate(t *testing.T) {
	for _, dtype := range dtypes {
		m, machine := newNablaStep(t, dtype)
		assertStepsDoNotAllocate(t, fmt.Sprint(dtype), machine, m.feeds, m.loss, 10)
	}
}

// assertStepsDoNotAllocate runs a training step once, then runs times more
// under testing.AllocsPerRun, and fails unless those allocate nothing and
// bring the loss down (so that they were real steps: all of them train on
// the same batch).
func assertStepsDoNotAllocate(t *testing.T, name string, m *vm.Machine, feeds vm.Feeds, lossNode *graph.Node, runs int) {
	t.Helper()
	if err := m.Run(feeds); err != nil {
		t.Fatalf("case %v: %v", name, err)
	}
	first := loss(t, m, lossNode)
	var err error
	allocs := testing.AllocsPerRun(runs, func() {
		if e := m.Run(feeds); e != nil {
			err = e
		}
	})
	if err != nil {
		t.Fatalf("case %v: %v", name, err)
	}
	if allocs != 0 {
		t.Errorf("case %v: got %v allocations per training step, want 0", name, allocs)
	}
	if last := loss(t, m, lossNode); !(last < first) {
		t.Errorf("case %v: loss went from %v to %v in %d more steps, want a decrease", name, first, last, runs+1)
	}
}

// TestTrainingStepMatchesGorgonia checks the benchmarked step does the same
// work as Gorgonia's: one SGD step on a small perceptron leaves the same
// parameters.
func TestTrainingStepMatchesGorgonia(t *testing.T) {
	d := newMLPData(8, 16, 4, 5, 2)
	n := buildNablaMLP(graph.Float64, d)
	machine, err := n.trainingStep(learningRate)
	if err != nil {
		t.Fatal(err)
	}
	if err := machine.Run(n.feeds); err != nil {
		t.Fatal(err)
	}
	gm, gorgoniaStep := newGorgoniaStep(t, graph.Float64, d)
	defer gorgoniaStep.close()
	if err := gorgoniaStep.run(); err != nil {
		t.Fatal(err)
	}
	initial := [][]float64{d.w1, d.b1, d.w2, d.b2}
	for i, p := range n.params {
		got, err := machine.Get(p)
		if err != nil {
			t.Fatal(err)
		}
		stepped := graph.Float64s(got)
		if moved := maxDifference(stepped, initial[i]); moved < 1e-6 {
			t.Errorf("case %v: the step moved it by %v, want a real step", p.Name(), moved)
		}
		assertClose(t, "stepped "+p.Name(), stepped, gorgoniaFloats(t, gm.params[i].Value()), agreement)
	}
}

func maxDifference(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// gorgoniaStep is Gorgonia's training step: its tape machine computes the
// loss and the gradients, and its vanilla SGD solver updates the weights.
type gorgoniaStep struct {
	machine G.VM
	solver  G.Solver
	model   []G.ValueGrad
}

func newGorgoniaStep(tb testing.TB, dtype tensor.Dtype, d mlpData) (*gorgoniaMLP, *gorgoniaStep) {
	tb.Helper()
	m, err := buildGorgoniaMLP(dtype, d)
	if err != nil {
		tb.Fatal(err)
	}
	return m, newGorgoniaSGD(tb, m, learningRate)
}

// newGorgoniaSGD differentiates m's loss and makes the step that runs it
// and updates m's parameters by vanilla SGD with learning rate lr.
func newGorgoniaSGD(tb testing.TB, m *gorgoniaMLP, lr float64) *gorgoniaStep {
	tb.Helper()
	if _, err := G.Grad(m.loss, m.params...); err != nil {
		tb.Fatal(err)
	}
	return &gorgoniaStep{
		machine: G.NewTapeMachine(m.g, G.BindDualValues(m.params...)),
		solver:  G.NewVanillaSolver(G.WithLearnRate(lr)),
		model:   G.NodesToValueGrads(m.params),
	}
}

func (s *gorgoniaStep) run() error {
	if err := s.machine.RunAll(); err != nil {
		return err
	}
	if err := s.solver.Step(s.model); err != nil {
		return err
	}
	s.machine.Reset()
	return nil
}

func (s *gorgoniaStep) close() { s.machine.Close() }

func BenchmarkTrainingStep(b *testing.B) {
	for _, dtype := range dtypes {
		b.Run(fmt.Sprintf("%v/nabla", dtype), func(b *testing.B) {
			m, machine := newNablaStep(b, dtype)
			b.ReportAllocs()
			warmUp(b, func() error { return machine.Run(m.feeds) })
			for b.Loop() {
				if err := machine.Run(m.feeds); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%v/gorgonia", dtype), func(b *testing.B) {
			_, step := newGorgoniaStep(b, dtype, newMLPData(mnistIn, mnistHidden, mnistClasses, mnistBatch, 1))
			defer step.close()
			b.ReportAllocs()
			warmUp(b, step.run)
			for b.Loop() {
				if err := step.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// warmUp runs a benchmark's step once before timing, so that one-time
// work (buffers, worker goroutines) is not counted.
func warmUp(b *testing.B, step func() error) {
	b.Helper()
	if err := step(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
}

// chainLength is the per-op benchmark's number of ops.
const chainLength = 100

// BenchmarkElementwiseChain runs 100 elementwise ops on a 16-element
// vector, forward only: what it measures is the cost of dispatching an op.
func BenchmarkElementwiseChain(b *testing.B) {
	x0 := uniform(12, chainWidth, 1)
	for _, dtype := range dtypes {
		b.Run(fmt.Sprintf("%v/nabla", dtype), func(b *testing.B) {
			x, y := nablaChain(dtype, chainLength)
			prog, err := compile.Compile([]*graph.Node{y})
			if err != nil {
				b.Fatal(err)
			}
			machine, err := vm.New(prog)
			if err != nil {
				b.Fatal(err)
			}
			feeds := vm.Feeds{x: mustDense(dtype, x0, chainWidth)}
			b.ReportAllocs()
			warmUp(b, func() error { return machine.Run(feeds) })
			for b.Loop() {
				if err := machine.Run(feeds); err != nil {
					b.Fatal(err)
				}
			}
			reportPerOp(b)
		})
		b.Run(fmt.Sprintf("%v/gorgonia", dtype), func(b *testing.B) {
			g, _, err := gorgoniaChain(dtype, chainLength, x0)
			if err != nil {
				b.Fatal(err)
			}
			machine := G.NewTapeMachine(g)
			defer machine.Close()
			run := func() error {
				defer machine.Reset()
				return machine.RunAll()
			}
			b.ReportAllocs()
			warmUp(b, run)
			for b.Loop() {
				if err := run(); err != nil {
					b.Fatal(err)
				}
			}
			reportPerOp(b)
		})
	}
}

func reportPerOp(b *testing.B) { reportTime(b, chainLength, "ns/elemop") }

// reportTime reports the time per iteration divided by per, in the given
// unit: per = 1e6 with "ms/step" gives milliseconds per step, per = 200
// with "ns/graphop" nanoseconds for each of 200 ops.
func reportTime(b *testing.B, per float64, unit string) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/per, unit)
}

// TestChainsAgree checks that the chain both frameworks run in
// BenchmarkElementwiseChain computes the same values.
func TestChainsAgree(t *testing.T) {
	x0 := uniform(12, chainWidth, 1)
	x, y := nablaChain(graph.Float64, chainLength)
	prog, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	machine, err := vm.New(prog)
	if err != nil {
		t.Fatal(err)
	}
	if err := machine.Run(vm.Feeds{x: mustDense(graph.Float64, x0, chainWidth)}); err != nil {
		t.Fatal(err)
	}
	got, _ := machine.Value(y)

	g, gy, err := gorgoniaChain(graph.Float64, chainLength, x0)
	if err != nil {
		t.Fatal(err)
	}
	gm := G.NewTapeMachine(g)
	defer gm.Close()
	if err := gm.RunAll(); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "chain", graph.Float64s(got), gorgoniaFloats(t, gy.Value()), agreement)
}

// BenchmarkCompile times turning a chain of n elementwise ops into a
// runnable machine: compile.Compile and vm.New for nabla, NewTapeMachine
// for Gorgonia. Gorgonia's compile is quadratic in graph size; it is not
// run at 100k nodes, where it would take hours.
func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk/nabla", n/1000), func(b *testing.B) {
			_, y := nablaChain(graph.Float64, n)
			b.ReportAllocs()
			for b.Loop() {
				prog, err := compile.Compile([]*graph.Node{y})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := vm.New(prog); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
		if n > 10_000 {
			continue
		}
		b.Run(fmt.Sprintf("%dk/gorgonia", n/1000), func(b *testing.B) {
			g, _, err := gorgoniaChain(graph.Float64, n, make([]float64, chainWidth))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				G.NewTapeMachine(g).Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}

// The Hessian benchmark's network: f(x) = w2·tanh(W1ᵀx + b1) for x in R⁶⁴,
// one hidden layer of 64 tanh units.
const hessianDim = 64

type tanhNetwork struct {
	x, f, hessian  *graph.Node
	w1, b1, w2, x0 []float64
}

func buildTanhNetwork(tb testing.TB) *tanhNetwork {
	tb.Helper()
	n := &tanhNetwork{
		w1: uniform(21, hessianDim*hessianDim, 1/math.Sqrt(hessianDim)),
		b1: uniform(22, hessianDim, 0.1),
		w2: uniform(23, hessianDim, 1/math.Sqrt(hessianDim)),
		x0: uniform(24, hessianDim, 1),
	}
	g := graph.New()
	n.x = g.Input("x", graph.Float64, 1, hessianDim)
	w1 := g.Const(mustDense(graph.Float64, n.w1, hessianDim, hessianDim))
	b1 := g.Const(mustDense(graph.Float64, n.b1, hessianDim))
	w2 := g.Const(mustDense(graph.Float64, n.w2, hessianDim, 1))
	n.f = ops.Sum(ops.MatMul(ops.Tanh(ops.Add(ops.MatMul(n.x, w1), b1)), w2))
	h, err := compile.Hessian(n.f, n.x)
	if err != nil {
		tb.Fatal(err)
	}
	n.hessian = h
	return n
}

func (n *tanhNetwork) machine(tb testing.TB) (*vm.Machine, vm.Feeds) {
	tb.Helper()
	prog, err := compile.Compile([]*graph.Node{n.hessian})
	if err != nil {
		tb.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		tb.Fatal(err)
	}
	return m, vm.Feeds{n.x: mustDense(graph.Float64, n.x0, 1, hessianDim)}
}

// TestTanhNetworkHessian checks the benchmarked Hessian against its closed
// form: with z = W1ᵀx + b1 and s(z) = −2·tanh(z)·(1 − tanh²(z)) the second
// derivative of tanh, H[j][k] = Σᵢ w2ᵢ·s(zᵢ)·W1[j][i]·W1[k][i].
func TestTanhNetworkHessian(t *testing.T) {
	n := buildTanhNetwork(t)
	m, feeds := n.machine(t)
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	h, _ := m.Value(n.hessian)
	want := make([]float64, hessianDim*hessianDim)
	for i := range hessianDim {
		z := n.b1[i]
		for j := range hessianDim {
			z += n.x0[j] * n.w1[j*hessianDim+i]
		}
		th := math.Tanh(z)
		c := n.w2[i] * -2 * th * (1 - th*th)
		for j := range hessianDim {
			for k := range hessianDim {
				want[j*hessianDim+k] += c * n.w1[j*hessianDim+i] * n.w1[k*hessianDim+i]
			}
		}
	}
	assertClose(t, "Hessian", graph.Float64s(h), want, 1e-12)
}

// BenchmarkHessian times the 64×64 Hessian of the tanh network: building
// it (64 vector–Jacobian products of the gradient), compiling it, and one
// run. nabla only: Gorgonia's second derivatives are wrong.
func BenchmarkHessian(b *testing.B) {
	b.Run("build+compile", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := buildTanhNetwork(b)
			n.machine(b)
		}
	})
	b.Run("run", func(b *testing.B) {
		n := buildTanhNetwork(b)
		m, feeds := n.machine(b)
		b.ReportAllocs()
		warmUp(b, func() error { return m.Run(feeds) })
		for b.Loop() {
			if err := m.Run(feeds); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(m.Program().Instructions())), "instructions")
	})
}

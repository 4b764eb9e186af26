package bench

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// joinedSteps counts prog's instructions that compute a weight
// gradient's product and Adam's step together (pass matmulupdate).
func joinedSteps(prog *compile.Program) int {
	n := 0
	for _, in := range prog.Instructions() {
		if _, ok := in.Multi.(ops.MatMulUpdateOp); ok {
			n++
		}
	}
	return n
}

// runSteps runs prog's step three times on threads threads and returns
// the loss and every parameter (the optimiser's state included) after
// each step.
func runSteps(t *testing.T, m *w1Model, prog *compile.Program, threads int) [][]float64 {
	t.Helper()
	machine := newMachine(t, prog, threads)
	defer machine.Close()
	var got [][]float64
	for range 3 {
		if err := machine.Run(m.feeds); err != nil {
			t.Fatal(err)
		}
		for _, n := range append([]*graph.Node{m.loss}, prog.Params()...) {
			v, err := machine.Value(n)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, graph.Float64s(v))
		}
	}
	return got
}

// W1's Adam steps joined to their weight gradients' products (pass
// matmulupdate: the product a block of rows at a time, the step on each
// block) give the losses, parameters and moments of the steps apart, bit
// for bit, three steps running, in float32 and float64, on one thread and
// on two, in PyTorch's form, with L2 or decoupled decay and with the
// correction folded; the first layer's gradient (256×784) spans several
// blocks. Every weight's step is joined.
func TestW1JoinedStepsKeepBits(t *testing.T) {
	decayed := nn.DefaultAdam().WithLR(w1LR)
	decayed.WeightDecay = 0.01
	folded := nn.DefaultAdam().WithLR(w1LR)
	folded.FoldCorrection = true
	optimizers := map[string]func() nn.Optimizer{
		"adam":    func() nn.Optimizer { return newW1Optimizer("adam") },
		"adam+L2": func() nn.Optimizer { return nn.NewAdam(decayed) },
		"adamw":   func() nn.Optimizer { return nn.NewAdamW(decayed) },
		"folded":  func() nn.Optimizer { return nn.NewAdam(folded) },
	}
	for _, dtype := range dtypes {
		m := newW1Model(dtype, w1Sizes, w1Batch, 4)
		for name, opt := range optimizers {
			updates, err := nn.TrainingUpdates(opt(), m.loss, m.model)
			if err != nil {
				t.Fatal(err)
			}
			compileWith := func(opts ...compile.Option) *compile.Program {
				prog, err := compile.Compile([]*graph.Node{m.loss}, append(opts, compile.WithUpdates(updates), compile.WithChecks())...)
				if err != nil {
					t.Fatal(err)
				}
				return prog
			}
			joined, apart := compileWith(), compileWith(compile.WithoutPass("matmulupdate"))
			if n := joinedSteps(joined); name != "adam+L2" && n != len(m.layers) {
				t.Errorf("%s/%s: %d weights' steps joined to their products, want %d:\n%v", dtypeName(dtype), name, n, len(m.layers), joined)
			}
			for _, in := range joined.Instructions() {
				if _, ok := in.Multi.(ops.MatMulUpdateOp); ok {
					if nodes := in.Absorbed(); len(nodes) < 2 || nodes[0].Op().Name() != "MatMul" {
						t.Errorf("%s/%s: %s absorbs %v, want the product's node first", dtypeName(dtype), name, in.Name(), nodes)
					}
				}
			}
			if n := joinedSteps(apart); n != 0 {
				t.Errorf("%s/%s: %d steps joined with the pass off", dtypeName(dtype), name, n)
			}
			for _, threads := range []int{1, 2} {
				label := fmt.Sprintf("%s/%s/threads=%d", dtypeName(dtype), name, threads)
				got, want := runSteps(t, m, joined, threads), runSteps(t, m, apart, threads)
				for i := range want {
					for j := range want[i] {
						if math.Float64bits(got[i][j]) != math.Float64bits(want[i][j]) {
							t.Fatalf("%s: value %d element %d: %v joined, %v apart", label, i, j, got[i][j], want[i][j])
						}
					}
				}
			}
		}
	}
}

// A weight gradient that something else reads (here, as an output of
// the program) keeps its product: only the other weights' steps join
// theirs, and the gradient requested is the product's value.
func TestW1GradientReadElsewhereIsNotJoined(t *testing.T) {
	m := newW1Model(graph.Float64, []int{40, 24, 24, 10}, 8, 5)
	w := m.layers[0].Weight
	var gw *graph.Node
	capture := nn.TransformGradients(func(g []*graph.Node, params []nn.Named) ([]*graph.Node, error) {
		for i, p := range params {
			if p.Node == w {
				gw = g[i]
			}
		}
		return g, nil
	})
	updates, err := nn.TrainingUpdates(newW1Optimizer("adam"), m.loss, m.model, capture)
	if err != nil {
		t.Fatal(err)
	}
	if gw == nil {
		t.Fatal("no gradient for the first weight")
	}
	prog, err := compile.Compile([]*graph.Node{m.loss, gw}, compile.WithUpdates(updates), compile.WithChecks())
	if err != nil {
		t.Fatal(err)
	}
	if n := joinedSteps(prog); n != len(m.layers)-1 {
		t.Fatalf("%d steps joined, want %d (not the first weight's, whose gradient is an output):\n%v", n, len(m.layers)-1, prog)
	}
	machine, err := vm.New(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer machine.Close()
	if err := machine.Run(m.feeds); err != nil {
		t.Fatal(err)
	}
	if v, err := machine.Value(gw); err != nil || len(graph.Float64s(v)) != 24*40 {
		t.Fatalf("the gradient output: %v, %v", v, err)
	}
}

// BenchmarkW1AdamShare measures Adam's share of W1's step on one thread
// as the difference of two steps, (Adam's − SGD's) ÷ Adam's: since pass
// matmulupdate joins Adam's steps to the weight gradients' products, the
// optimiser's instructions no longer say what Adam costs. It runs SGD's
// step, Adam's and Adam's with the pass off (apart) in turn, b.N times
// each, with the profile on, and sums each instruction's fastest run, a
// time other processes on a loaded machine move less than the step's:
// share% is Adam's share, share-apart% the same with the pass off, and
// adam-ms, apart-ms and sgd-ms the steps' sums.
func BenchmarkW1AdamShare(b *testing.B) {
	for _, dtype := range dtypes {
		b.Run(dtypeName(dtype), func(b *testing.B) {
			m := newW1Model(dtype, w1Sizes, w1Batch, 1)
			var machines []*vm.Machine
			for _, c := range []struct {
				opt  string
				opts []compile.Option
			}{{"adam", nil}, {"adam", []compile.Option{compile.WithoutPass("matmulupdate")}}, {"sgd", nil}} {
				updates, err := nn.TrainingUpdates(newW1Optimizer(c.opt), m.loss, m.model)
				if err != nil {
					b.Fatal(err)
				}
				prog, err := compile.Compile([]*graph.Node{m.loss}, append(c.opts, compile.WithUpdates(updates))...)
				if err != nil {
					b.Fatal(err)
				}
				machine, err := vm.New(prog, vm.WithThreads(1), vm.WithProfile())
				if err != nil {
					b.Fatal(err)
				}
				defer machine.Close()
				machines = append(machines, machine)
			}
			fastest := make([][]time.Duration, len(machines))
			for r := 0; b.Loop(); r++ {
				for i, machine := range machines {
					machine.ResetProfile()
					if err := machine.Run(m.feeds); err != nil {
						b.Fatal(err)
					}
					for k, e := range machine.Profile().Entries {
						if r == 0 {
							fastest[i] = append(fastest[i], e.Total)
						}
						fastest[i][k] = min(fastest[i][k], e.Total)
					}
				}
			}
			sums := make([]float64, len(machines))
			for i, f := range fastest {
				for _, d := range f {
					sums[i] += float64(d)
				}
			}
			adam, apart, sgd := sums[0], sums[1], sums[2]
			b.ReportMetric(100*(adam-sgd)/adam, "share%")
			b.ReportMetric(100*(apart-sgd)/apart, "share-apart%")
			b.ReportMetric(adam/1e6, "adam-ms")
			b.ReportMetric(apart/1e6, "apart-ms")
			b.ReportMetric(sgd/1e6, "sgd-ms")
		})
	}
}

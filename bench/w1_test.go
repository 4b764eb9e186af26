package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/cputime"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/vm"
)

// W1: one training step of an MNIST-shaped perceptron built from nn.Linear
// layers, 784-256(tanh)-256(tanh)-10, with the mean softmax cross-entropy
// over a batch of 64 and an SGD (learning rate 0.01) or Adam step: the
// forward pass, the backward pass and the update in one program. The data
// is random (fixed seeds): only its shape matters to the time.
// bench/torch/w1.py is the same step in PyTorch.

var w1Sizes = []int{784, 256, 256, 10}

const (
	w1Batch = 64
	w1LR    = 0.01
)

// w1Optimizers are the optimisers W1 is measured with, by name: SGD,
// Adam (PyTorch's defaults but for the learning rate) and Adam with
// AdamConfig.FoldCorrection (adamfold) and Adam with
// AdamConfig.Float32Moments (adam32m: float32 moments for float64
// parameters, the same as adam for float32 ones), all at w1LR.
var w1Optimizers = []string{"sgd", "adam", "adamfold", "adam32m"}

func newW1Optimizer(name string) nn.Optimizer {
	switch name {
	case "adam":
		return nn.NewAdam(nn.DefaultAdam().WithLR(w1LR))
	case "adamfold":
		cfg := nn.DefaultAdam().WithLR(w1LR)
		cfg.FoldCorrection = true
		return nn.NewAdam(cfg)
	case "adam32m":
		cfg := nn.DefaultAdam().WithLR(w1LR)
		cfg.Float32Moments = true
		return nn.NewAdam(cfg)
	}
	return nn.NewSGD(nn.SGDConfig{LR: w1LR})
}

// w1Model is W1's network, its loss and one batch of inputs and labels.
type w1Model struct {
	model     *nn.Sequential
	layers    []*nn.Linear
	x, labels *graph.Node
	loss      *graph.Node
	feeds     vm.Feeds
	xData     []float64 // (batch, sizes[0])
	classes   []int     // batch class indices
}

// newW1Model builds a tanh perceptron of the given layer sizes in dtype,
// its parameters and data drawn from seed.
func newW1Model(dtype tensor.Dtype, sizes []int, batch int, seed uint64) *w1Model {
	g := graph.New()
	rng := rand.New(rand.NewPCG(seed, 3))
	m := &w1Model{}
	var mods []nn.Module
	for i := 1; i < len(sizes); i++ {
		l := nn.NewLinear(g, fmt.Sprintf("fc%d", i), sizes[i-1], sizes[i], true, nn.WithDType(dtype), nn.WithRand(rng))
		m.layers = append(m.layers, l)
		mods = append(mods, l)
		if i < len(sizes)-1 {
			mods = append(mods, nn.Tanh{})
		}
	}
	m.model = nn.NewSequential("mlp", mods...)
	classes := sizes[len(sizes)-1]
	m.x = g.Input("x", dtype, batch, sizes[0])
	m.labels = g.Input("labels", dtype, batch)
	m.loss = nn.CrossEntropy(m.model.Forward(m.x), m.labels)
	m.xData = uniform(seed+1, batch*sizes[0], 1)
	m.classes = make([]int, batch)
	labels := make([]float64, batch)
	for i := range m.classes {
		m.classes[i] = rng.IntN(classes)
		labels[i] = float64(m.classes[i])
	}
	m.feeds = vm.Feeds{
		m.x:      mustDense(dtype, m.xData, batch, sizes[0]),
		m.labels: mustDense(dtype, labels, batch),
	}
	return m
}

// program compiles the training step with the named optimiser.
func (m *w1Model) program(tb testing.TB, optimizer string) *compile.Program {
	tb.Helper()
	updates, err := nn.TrainingUpdates(newW1Optimizer(optimizer), m.loss, m.model)
	if err != nil {
		tb.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{m.loss}, compile.WithUpdates(updates))
	if err != nil {
		tb.Fatal(err)
	}
	return prog
}

// machine compiles the training step with the named optimiser and makes a
// machine with the given number of threads for it.
func (m *w1Model) machine(tb testing.TB, optimizer string, threads int) *vm.Machine {
	tb.Helper()
	return newMachine(tb, m.program(tb, optimizer), threads)
}

// newMachine makes a machine for prog with the given number of threads.
func newMachine(tb testing.TB, prog *compile.Program, threads int) *vm.Machine {
	tb.Helper()
	machine, err := vm.New(prog, vm.WithThreads(threads))
	if err != nil {
		tb.Fatal(err)
	}
	return machine
}

// dtypeName is a dtype's short name in benchmark names: f32 or f64.
func dtypeName(dtype tensor.Dtype) string {
	if dtype == graph.Float32 {
		return "f32"
	}
	return "f64"
}

// benchThreads are the thread counts benchmarks run with: 1 and, when it
// differs, GOMAXPROCS.
func benchThreads() []int {
	if n := runtime.GOMAXPROCS(0); n > 1 {
		return []int{1, n}
	}
	return []int{1}
}

// TestW1StepDoesNotAllocate asserts that W1's training step allocates
// nothing after its first run, with SGD and Adam, in both dtypes, on one
// thread and on two.
func TestW1StepDoesNotAllocate(t *testing.T) {
	for _, dtype := range dtypes {
		m := newW1Model(dtype, w1Sizes, w1Batch, 1)
		for _, opt := range w1Optimizers {
			prog := m.program(t, opt)
			for _, threads := range []int{1, 2} {
				machine := newMachine(t, prog, threads)
				name := fmt.Sprintf("%s/%s/threads=%d", dtypeName(dtype), opt, threads)
				assertStepsDoNotAllocate(t, name, machine, m.feeds, m.loss, 3)
				machine.Close()
			}
		}
	}
}

// TestW1UpdatesInPlace: W1's training step computes every update in its
// parameter's buffer, leaving nothing to copy after the run, and its
// losses, parameters and optimiser state are the same bits, step after
// step, as with the updates copied after each run (pass inplace off), and
// as with every op run on its own (passes fuse and inplace off: Adam's
// step without ops.FusedOp's one-pass kernel), with SGD and with Adam
// without weight decay, with L2 decay and with decoupled decay (AdamW),
// in PyTorch's form and with AdamConfig.FoldCorrection.
func TestW1UpdatesInPlace(t *testing.T) {
	decayed := nn.DefaultAdam().WithLR(w1LR)
	decayed.WeightDecay = 0.01
	folded, decayedFolded := nn.DefaultAdam().WithLR(w1LR), decayed
	folded.FoldCorrection, decayedFolded.FoldCorrection = true, true
	optimizers := []struct {
		name, onePass string
		make          func() nn.Optimizer
	}{
		{"sgd", "", func() nn.Optimizer { return newW1Optimizer("sgd") }},
		{"adam", "Adam", func() nn.Optimizer { return newW1Optimizer("adam") }},
		{"adam+L2", "Adam+L2", func() nn.Optimizer { return nn.NewAdam(decayed) }},
		{"adamw", "AdamW", func() nn.Optimizer { return nn.NewAdamW(decayed) }},
		{"adam folded", "Adam", func() nn.Optimizer { return nn.NewAdam(folded) }},
		{"adamw folded", "AdamW", func() nn.Optimizer { return nn.NewAdamW(decayedFolded) }},
		// Float32 moments: one AdamM32 per float64 parameter, not a fused op.
		{"adam32m", "", func() nn.Optimizer { return newW1Optimizer("adam32m") }},
		{"adam32m+L2", "", func() nn.Optimizer { d := decayed; d.Float32Moments = true; return nn.NewAdam(d) }},
		{"adamw32m folded", "", func() nn.Optimizer { d := decayedFolded; d.Float32Moments = true; return nn.NewAdamW(d) }},
	}
	for _, dtype := range dtypes {
		m := newW1Model(dtype, []int{40, 24, 24, 10}, 8, 3)
		for _, opt := range optimizers {
			name := fmt.Sprintf("%s/%s", dtypeName(dtype), opt.name)
			updates, err := nn.TrainingUpdates(opt.make(), m.loss, m.model)
			if err != nil {
				t.Fatal(err)
			}
			steps := func(opts ...compile.Option) (*compile.Program, [][]float64) {
				prog, err := compile.Compile([]*graph.Node{m.loss}, append(opts, compile.WithUpdates(updates), compile.WithChecks())...)
				if err != nil {
					t.Fatal(err)
				}
				machine := newMachine(t, prog, 2)
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
				return prog, got
			}
			prog, inPlace := steps()
			_, copied := steps(compile.WithoutPass("inplace"))
			_, unfused := steps(compile.WithoutPass("inplace"), compile.WithoutPass("fuse"))
			if opt.onePass != "" {
				// Every parameter's step runs in one pass; a weight's L2
				// decay may join its gradient's product (pass matmuladd),
				// leaving the step without decay.
				onePass, kind := 0, 0
				for _, in := range prog.Instructions() {
					if f := in.Fused(); f != nil && f.OnePass() != "" {
						onePass++
						if f.OnePass() == opt.onePass {
							kind++
						}
					}
				}
				if onePass != 2*len(m.layers) || kind == 0 {
					t.Errorf("%s: %d parameters' Adam steps run in one pass (%d as %s), want all %d:\n%v", name, onePass, kind, opt.onePass, 2*len(m.layers), prog)
				}
			}
			for _, u := range prog.Updates() {
				if u.From != u.Slot {
					t.Errorf("%s: the update of %v is copied after the run", name, u.Param)
				}
			}
			if len(prog.Updates()) < 2*len(m.layers) {
				t.Errorf("%s: %d updates, want at least %d", name, len(prog.Updates()), 2*len(m.layers))
			}
			for i := range copied {
				for j := range copied[i] {
					if a, b, c := inPlace[i][j], copied[i][j], unfused[i][j]; math.Float64bits(a) != math.Float64bits(b) || math.Float64bits(a) != math.Float64bits(c) {
						t.Fatalf("%s: value %d element %d: %v in place, %v copied, %v unfused", name, i, j, a, b, c)
					}
				}
			}
		}
	}
}

// BenchmarkW1 times W1's step in both dtypes with SGD and Adam on 1 and
// GOMAXPROCS threads, and Gorgonia's SGD step beside it (w1_gorgonia_test.go).
// In the openblas build, OpenBLAS's products get the machine's threads
// too (peerThreads): left to itself, OpenBLAS starts one per core, and
// its threads=1 would run the products on two.
func BenchmarkW1(b *testing.B) {
	for _, dtype := range dtypes {
		for _, opt := range w1Optimizers {
			for _, threads := range benchThreads() {
				b.Run(fmt.Sprintf("%s/%s/threads=%d", dtypeName(dtype), opt, threads), func(b *testing.B) {
					defer peerThreads(peerThreads(threads))
					m := newW1Model(dtype, w1Sizes, w1Batch, 1)
					machine := m.machine(b, opt, threads)
					defer machine.Close()
					if threads == 1 {
						benchRunsCPU(b, machine, m.feeds)
					} else {
						benchRuns(b, machine, m.feeds)
					}
					reportTime(b, 1e6, "ms/step")
				})
			}
		}
		b.Run(fmt.Sprintf("%s/sgd/gorgonia", dtypeName(dtype)), func(b *testing.B) {
			benchGorgoniaW1(b, dtype)
		})
	}
}

// benchRuns times machine.Run(feeds) after a warm-up run.
func benchRuns(b *testing.B, machine *vm.Machine, feeds vm.Feeds) {
	b.Helper()
	timeRuns(b, machine, feeds, false)
}

// benchRunsCPU is benchRuns on a goroutine locked to its thread that also
// reports the thread's CPU time per step (cpu-ms/step), where the system
// measures it: time spent waiting for a core behind other processes is
// not counted. A machine of one thread runs every instruction on it.
func benchRunsCPU(b *testing.B, machine *vm.Machine, feeds vm.Feeds) {
	b.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	timeRuns(b, machine, feeds, true)
}

func timeRuns(b *testing.B, machine *vm.Machine, feeds vm.Feeds, cpu bool) {
	b.Helper()
	b.ReportAllocs()
	warmUp(b, func() error { return machine.Run(feeds) })
	cpu0, ok := cputime.Thread()
	for b.Loop() {
		if err := machine.Run(feeds); err != nil {
			b.Fatal(err)
		}
	}
	if cpu1, _ := cputime.Thread(); cpu && ok {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/1e6, "cpu-ms/step")
	}
}

// optimizerScopes are the graph scopes nn's optimisers build their updates
// in (after the gradients, which are the backward pass's).
var optimizerScopes = map[string]bool{"SGD": true, "Adam": true, "AdamW": true}

// inOptimizer reports whether n was built by an optimiser's update.
func inOptimizer(n *graph.Node) bool {
	for s := n.Scope(); s != nil; s = s.Parent {
		if optimizerScopes[s.Name] {
			return true
		}
	}
	return false
}

// BenchmarkW1Profile runs W1's step on one thread with the machine's
// profile on and reports the optimiser's share of the instructions' time
// (optimizer%): the instructions whose nodes the optimiser built. The
// profile's timers slow every instruction a little, so the time per step
// is not W1's.
func BenchmarkW1Profile(b *testing.B) {
	for _, dtype := range dtypes {
		for _, opt := range w1Optimizers {
			b.Run(fmt.Sprintf("%s/%s", dtypeName(dtype), opt), func(b *testing.B) {
				m := newW1Model(dtype, w1Sizes, w1Batch, 1)
				machine, err := vm.New(m.program(b, opt), vm.WithThreads(1), vm.WithProfile())
				if err != nil {
					b.Fatal(err)
				}
				defer machine.Close()
				benchRuns(b, machine, m.feeds)
				p := machine.Profile()
				var optimizer time.Duration
				for _, e := range p.Entries {
					if e.Node != nil && inOptimizer(e.Node) {
						optimizer += e.Total
					}
				}
				b.ReportMetric(100*float64(optimizer)/float64(p.Total()), "optimizer%")
				b.ReportMetric(fastestOptimizerShare(b, machine, m.feeds, w1FastestRuns), "fastest-optimizer%")
			})
		}
	}
}

// w1FastestRuns is the number of steps fastestOptimizerShare times.
const w1FastestRuns = 200

// fastestOptimizerShare runs the machine's step runs times, after the
// timed ones, and returns the optimiser's share of the instructions' time
// where each instruction counts its fastest run: a share that other
// processes on a loaded machine move less than optimizer%, which counts
// every run's time, stalls included.
func fastestOptimizerShare(b *testing.B, machine *vm.Machine, feeds vm.Feeds, runs int) float64 {
	b.Helper()
	var fastest []time.Duration
	var optimizer []bool
	for r := range runs {
		machine.ResetProfile()
		if err := machine.Run(feeds); err != nil {
			b.Fatal(err)
		}
		entries := machine.Profile().Entries
		if r == 0 {
			fastest, optimizer = make([]time.Duration, len(entries)), make([]bool, len(entries))
			for i, e := range entries {
				fastest[i], optimizer[i] = e.Total, e.Node != nil && inOptimizer(e.Node)
			}
		}
		for i, e := range entries {
			fastest[i] = min(fastest[i], e.Total)
		}
	}
	var all, opt time.Duration
	for i, d := range fastest {
		all += d
		if optimizer[i] {
			opt += d
		}
	}
	return 100 * float64(opt) / float64(all)
}

// The optimiser's share in BenchmarkW1Profile counts some of the step's
// instructions, not none or all: with SGD, one update (p − lr·g) per
// parameter, with Adam more.
func TestW1OptimizerInstructions(t *testing.T) {
	counts := map[string]int{}
	for _, opt := range w1Optimizers {
		m := newW1Model(graph.Float64, []int{12, 8, 8, 3}, 5, 2)
		machine, err := vm.New(m.program(t, opt), vm.WithThreads(1), vm.WithProfile())
		if err != nil {
			t.Fatal(err)
		}
		if err := machine.Run(m.feeds); err != nil {
			t.Fatal(err)
		}
		entries := machine.Profile().Entries
		for _, e := range entries {
			if e.Node != nil && inOptimizer(e.Node) {
				counts[opt]++
			}
		}
		machine.Close()
		if params := 2 * len(m.layers); counts[opt] < params || counts[opt] >= len(entries) {
			t.Errorf("%s: %d of %d instructions are the optimiser's, want at least one per parameter (%d) and not all",
				opt, counts[opt], len(entries), params)
		}
	}
	if counts["adam"] <= counts["sgd"] {
		t.Errorf("Adam's update has %d instructions, SGD's %d: want more for Adam", counts["adam"], counts["sgd"])
	}
}

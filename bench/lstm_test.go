package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// LSTM: the forward and backward pass of one nn.LSTM layer (input and
// hidden size 128) over a sequence of 50 steps and a batch of 32, time
// major, from zero states: loss = the sum of the outputs, and its gradient
// with respect to every parameter. The input is random (a fixed seed).
// bench/torch/lstm.py is the same in PyTorch (nn.LSTM, out.sum().backward()).
const (
	lstmIn, lstmHidden, lstmSteps, lstmBatch = 128, 128, 50, 32
)

// lstmProblem is LSTM's program and its input.
type lstmProblem struct {
	prog  *compile.Program
	loss  *graph.Node
	grads []*graph.Node
	feeds vm.Feeds
}

func newLSTMProblem(tb testing.TB, dtype tensor.Dtype) *lstmProblem {
	tb.Helper()
	g := graph.New()
	m := nn.NewLSTM(g, "lstm", lstmIn, lstmHidden, nn.RecurrentConfig{}, nn.WithDType(dtype), nn.WithRand(rand.New(rand.NewPCG(1, 2))))
	x := g.Input("x", dtype, lstmSteps, lstmBatch, lstmIn)
	loss := ops.Sum(m.Forward(x))
	grads, err := compile.Grad(loss, nn.Parameters(m)...)
	if err != nil {
		tb.Fatal(err)
	}
	prog, err := compile.Compile(append([]*graph.Node{loss}, grads...))
	if err != nil {
		tb.Fatal(err)
	}
	return &lstmProblem{
		prog: prog, loss: loss, grads: grads,
		feeds: vm.Feeds{x: mustDense(dtype, uniform(3, lstmSteps*lstmBatch*lstmIn, 1), lstmSteps, lstmBatch, lstmIn)},
	}
}

// TestLSTMStepDoesNotAllocate asserts that the LSTM's forward and backward
// pass allocates nothing after its first run, on one thread and on two.
func TestLSTMStepDoesNotAllocate(t *testing.T) {
	p := newLSTMProblem(t, graph.Float32)
	for _, threads := range []int{1, 2} {
		machine := newMachine(t, p.prog, threads)
		if err := machine.Run(p.feeds); err != nil {
			t.Fatal(err)
		}
		var err error
		allocs := testing.AllocsPerRun(2, func() {
			if e := machine.Run(p.feeds); e != nil {
				err = e
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if allocs != 0 {
			t.Errorf("threads=%d: got %v allocations per step, want 0", threads, allocs)
		}
		machine.Close()
	}
}

// BenchmarkLSTM times the LSTM's forward and backward pass in float32 on 1
// and GOMAXPROCS threads.
func BenchmarkLSTM(b *testing.B) {
	p := newLSTMProblem(b, graph.Float32)
	for _, threads := range benchThreads() {
		b.Run(fmt.Sprintf("f32/threads=%d", threads), func(b *testing.B) {
			machine := newMachine(b, p.prog, threads)
			defer machine.Close()
			benchRuns(b, machine, p.feeds)
			reportTime(b, 1e6, "ms/step")
		})
	}
}

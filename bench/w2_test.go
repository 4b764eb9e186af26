package bench

import (
	"math"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// W2: a chain of 200 elementwise ops on a 16-element vector, forward and
// backward (the gradient of the sum of its output with respect to its
// input): what it measures is the cost of an op, not of its arithmetic.
// The ops cycle through tanh, ·c, sin, +c, exp and ·0.5, which keeps the
// values bounded however long the chain. bench/torch/w2.py is the same
// chain in PyTorch.

const w2Length = 200

// w2Step is one of the chain's ops, applied to a graph node and to a
// float64 (the test's reference).
type w2Step struct {
	node  func(y, c *graph.Node) *graph.Node
	value func(y, c float64) float64
}

var w2Steps = []w2Step{
	{func(y, _ *graph.Node) *graph.Node { return ops.Tanh(y) }, func(y, _ float64) float64 { return math.Tanh(y) }},
	{ops.Mul, func(y, c float64) float64 { return y * c }},
	{func(y, _ *graph.Node) *graph.Node { return ops.Sin(y) }, func(y, _ float64) float64 { return math.Sin(y) }},
	{ops.Add, func(y, c float64) float64 { return y + c }},
	{func(y, _ *graph.Node) *graph.Node { return ops.Exp(y) }, func(y, _ float64) float64 { return math.Exp(y) }},
	{func(y, _ *graph.Node) *graph.Node { return ops.Scale(y, 0.5) }, func(y, _ float64) float64 { return 0.5 * y }},
}

// w2Chain is W2's graph: the input, the loss sum(chain(x)) and its
// gradient with respect to x.
type w2Chain struct {
	x, loss, grad *graph.Node
}

func newW2Chain(dtype tensor.Dtype, length int) (*w2Chain, error) {
	g := graph.New()
	x := g.Input("x", dtype, chainWidth)
	c := g.Const(mustDense(dtype, chainConst, chainWidth))
	y := x
	for i := range length {
		y = w2Steps[i%len(w2Steps)].node(y, c)
	}
	loss := ops.Sum(y)
	grads, err := compile.Grad(loss, x)
	if err != nil {
		return nil, err
	}
	return &w2Chain{x: x, loss: loss, grad: grads[0]}, nil
}

func (w *w2Chain) machine(tb testing.TB) (*vm.Machine, vm.Feeds) {
	tb.Helper()
	prog, err := compile.Compile([]*graph.Node{w.loss, w.grad})
	if err != nil {
		tb.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		tb.Fatal(err)
	}
	return m, vm.Feeds{w.x: mustDense(w.x.DType(), uniform(12, chainWidth, 1), chainWidth)}
}

// w2Reference is the chain's loss in plain Go on float64s.
func w2Reference(x []float64, length int) float64 {
	sum := 0.0
	for i, v := range x {
		for j := range length {
			v = w2Steps[j%len(w2Steps)].value(v, chainConst[i])
		}
		sum += v
	}
	return sum
}

// TestW2Gradient checks W2's loss against the chain computed in plain Go,
// and its gradient against central differences of it.
func TestW2Gradient(t *testing.T) {
	w, err := newW2Chain(graph.Float64, w2Length)
	if err != nil {
		t.Fatal(err)
	}
	m, feeds := w.machine(t)
	defer m.Close()
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	x := graph.Float64s(feeds[w.x])
	assertClose(t, "loss", []float64{loss(t, m, w.loss)}, []float64{w2Reference(x, w2Length)}, 1e-12)
	const h = 1e-6
	want := make([]float64, len(x))
	for i := range x {
		xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
		xp[i] += h
		xm[i] -= h
		want[i] = (w2Reference(xp, w2Length) - w2Reference(xm, w2Length)) / (2 * h)
	}
	got, err := m.Value(w.grad)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "gradient", graph.Float64s(got), want, 1e-7)
}

// BenchmarkW2 times W2's forward and backward run; ns/graphop is the time
// divided by the chain's 200 ops (the backward's work is in the time, not
// in the count).
func BenchmarkW2(b *testing.B) {
	for _, dtype := range dtypes {
		b.Run(dtypeName(dtype), func(b *testing.B) {
			w, err := newW2Chain(dtype, w2Length)
			if err != nil {
				b.Fatal(err)
			}
			m, feeds := w.machine(b)
			defer m.Close()
			benchRuns(b, m, feeds)
			reportTime(b, w2Length, "ns/graphop")
			b.ReportMetric(float64(len(m.Program().Instructions())), "instructions")
		})
	}
}

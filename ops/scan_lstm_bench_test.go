package ops_test

import (
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

func BenchmarkScanLSTM(b *testing.B) {
	const T, B, I, H = 50, 32, 128, 128
	g := graph.New()
	rng := rand.New(rand.NewPCG(1, 1))
	p := func(name string, shape ...int) *graph.Node {
		d := graph.NewDense(graph.Float32, shape...)
		for i := range d.Float32s() {
			d.Float32s()[i] = float32(rng.Float64()-0.5) * 0.1
		}
		return g.Param(name, d)
	}
	wih, whh, bias := p("wih", 4*H, I), p("whh", 4*H, H), p("b", 4*H)
	xs := g.Input("xs", graph.Float32, T, B, I)
	h0, c0 := g.Const(graph.NewDense(graph.Float32, B, H)), g.Const(graph.NewDense(graph.Float32, B, H))
	_, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		gates := ops.Add(ops.Add(ops.MatMulT(x[0], wih, false, true), ops.MatMulT(c[0], whh, false, true)), bias)
		i := ops.Sigmoid(ops.Slice(gates, 1, 0, H))
		f := ops.Sigmoid(ops.Slice(gates, 1, H, 2*H))
		gg := ops.Tanh(ops.Slice(gates, 1, 2*H, 3*H))
		o := ops.Sigmoid(ops.Slice(gates, 1, 3*H, 4*H))
		cell := ops.Add(ops.Mul(f, c[1]), ops.Mul(i, gg))
		h := ops.Mul(o, ops.Tanh(cell))
		return []*graph.Node{h, cell}, []*graph.Node{h}
	}, []*graph.Node{h0, c0}, []*graph.Node{xs})
	loss := ops.Sum(ys[0])
	grads, err := compile.Grad(loss, wih, whh, bias)
	if err != nil {
		b.Fatal(err)
	}
	prog, err := compile.Compile(append([]*graph.Node{loss}, grads...))
	if err != nil {
		b.Fatal(err)
	}
	m, err := vm.New(prog, vm.WithThreads(1))
	if err != nil {
		b.Fatal(err)
	}
	feeds := vm.Feeds{xs: graph.NewDense(graph.Float32, T, B, I)}
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Run(feeds); err != nil {
			b.Fatal(err)
		}
	}
}

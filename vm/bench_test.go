package vm_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/testnet"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// passConfigs are the compilations the benchmarks compare: every pass,
// all but fusion, all but memory planning (each value in a slot of its
// own), and none of the optional passes.
var passConfigs = []struct {
	name string
	opts []compile.Option
}{
	{"all", nil},
	{"nofuse", []compile.Option{compile.WithoutPass("fuse")}},
	{"nomemory", []compile.Option{compile.WithoutPass("memory")}},
	{"none", []compile.Option{compile.WithoutPass("constfold"), compile.WithoutPass("simplify"),
		compile.WithoutPass("cse"), compile.WithoutPass("matmuladd"), compile.WithoutPass("late deadcode"),
		compile.WithoutPass("fuse"), compile.WithoutPass("memory")}},
}

// computedBytes is the storage of a program's computed slots.
func computedBytes(p *compile.Program) int {
	n := 0
	for _, s := range p.Slots() {
		if s.Kind == graph.KindOp {
			n += s.Type.Size() * int(s.Type.DType.Size())
		}
	}
	return n
}

// BenchmarkMLPStep runs one training step (forward, backward, SGD
// update) of a two-layer perceptron, reporting the program's instruction
// count, slots and bytes of computed slots for each compilation.
func BenchmarkMLPStep(b *testing.B) {
	sizes := []struct{ batch, in, hidden, out int }{{16, 32, 64, 10}, {64, 64, 128, 10}}
	for _, sz := range sizes {
		net, err := testnet.NewMLP(rand.New(rand.NewPCG(1, 1)), sz.batch, sz.in, sz.hidden, sz.out)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range passConfigs {
			b.Run(fmt.Sprintf("%dx%d-%d-%d/%s", sz.batch, sz.in, sz.hidden, sz.out, c.name), func(b *testing.B) {
				p, err := compile.Compile([]*graph.Node{net.Loss}, append(c.opts, compile.WithUpdates(net.Updates))...)
				if err != nil {
					b.Fatal(err)
				}
				m, err := vm.New(p)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := m.Run(net.Feeds); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(p.Instructions())), "instrs")
				b.ReportMetric(float64(len(p.Slots())), "slots")
				b.ReportMetric(float64(computedBytes(p)), "slot-bytes")
			})
		}
	}
}

// TestRunDoesNotAllocate: a training step over a memory plan whose slots
// hold values of several shapes allocates nothing after the first run.
func TestRunDoesNotAllocate(t *testing.T) {
	net, err := testnet.NewMLP(rand.New(rand.NewPCG(1, 2)), 8, 5, 6, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range passConfigs {
		m := machine(t, []*graph.Node{net.Loss}, append(c.opts, compile.WithUpdates(net.Updates))...)
		if err := m.Run(net.Feeds); err != nil {
			t.Fatal(err)
		}
		if got := testing.AllocsPerRun(10, func() { _ = m.Run(net.Feeds) }); got != 0 {
			t.Errorf("case %s: got %v allocations per run, want 0", c.name, got)
		}
	}
}

// BenchmarkProfile runs a training step of a small perceptron and a chain
// of 100 elementwise ops on 16 values (where dispatch dominates), with
// profiling off and on: off costs nothing, on one clock reading per
// instruction; neither allocates.
func BenchmarkProfile(b *testing.B) {
	net, err := testnet.NewMLP(rand.New(rand.NewPCG(1, 1)), 16, 32, 64, 10)
	if err != nil {
		b.Fatal(err)
	}
	g := graph.New()
	x := g.Input("x", graph.Float64, 16)
	y := x
	for i := range 100 {
		if i%2 == 0 {
			y = ops.Tanh(y)
		} else {
			y = ops.Scale(y, 1.5)
		}
	}
	programs := []struct {
		name    string
		outputs []*graph.Node
		opts    []compile.Option
		feeds   vm.Feeds
	}{
		{"mlp", []*graph.Node{net.Loss}, []compile.Option{compile.WithUpdates(net.Updates)}, net.Feeds},
		{"chain", []*graph.Node{y}, nil, vm.Feeds{x: graph.NewDense(graph.Float64, 16)}},
	}
	for _, prog := range programs {
		p, err := compile.Compile(prog.outputs, prog.opts...)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name string
			opts []vm.Option
		}{{"off", nil}, {"on", []vm.Option{vm.WithProfile()}}} {
			b.Run(prog.name+"/"+c.name, func(b *testing.B) {
				m, err := vm.New(p, c.opts...)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := m.Run(prog.feeds); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(p.Instructions())), "instrs")
			})
		}
	}
}

package fuzztest

import (
	"fmt"
	"math"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// vmapAgrees checks that compile.Vmap of fn over the examples equals fn
// run on each example separately, bit for bit. examples[b][i] is example
// b's input i where batched[i], and every example's input i (example 0's
// is read) elsewhere; all are float64.
func vmapAgrees(t *testing.T, fn func(x []*graph.Node) *graph.Node, examples [][]*tensor.Dense, batched []bool) {
	t.Helper()
	first := examples[0]
	// The separate runs, of one program.
	g := graph.New()
	in := make([]*graph.Node, len(first))
	for i, x := range first {
		in[i] = g.Input(fmt.Sprint("x", i), x.Dtype(), x.Shape()...)
	}
	y := fn(in)
	want := make([][]float64, len(examples))
	m := machine(t, y)
	defer m.Close()
	for b, ex := range examples {
		feeds := vm.Feeds{}
		for i := range in {
			feeds[in[i]] = ex[i]
			if !batched[i] {
				feeds[in[i]] = first[i]
			}
		}
		want[b] = runOn(t, m, feeds, y)
	}

	// The batch, of stacked examples.
	gb := graph.New()
	bin := make([]*graph.Node, len(first))
	axes := make([]int, len(first))
	feeds := vm.Feeds{}
	for i, x := range first {
		if !batched[i] {
			axes[i] = compile.NotBatched
			bin[i] = gb.Input(fmt.Sprint("x", i), x.Dtype(), x.Shape()...)
			feeds[bin[i]] = x
			continue
		}
		var all []float64
		for _, ex := range examples {
			all = append(all, graph.Float64s(ex[i])...)
		}
		stacked, err := graph.FromFloat64s(x.Dtype(), all, append([]int{len(examples)}, x.Shape()...)...)
		if err != nil {
			t.Fatal(err)
		}
		bin[i] = gb.Input(fmt.Sprint("x", i), x.Dtype(), stacked.Shape()...)
		feeds[bin[i]] = stacked
	}
	ys, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node { return []*graph.Node{fn(ex)} }, bin, axes, nil)
	if err != nil {
		t.Fatalf("Vmap: %v", err)
	}
	mb := machine(t, ys[0])
	defer mb.Close()
	got := runOn(t, mb, feeds, ys[0])
	n := len(got) / len(examples)
	for b, w := range want {
		for k, v := range w {
			if u := got[b*n+k]; math.Float64bits(u) != math.Float64bits(v) {
				t.Fatalf("Vmap: example %d, element %d: got %v, want %v (its separate run's)", b, k, u, v)
			}
		}
	}
}

// machine compiles y and returns a machine for it.
func machine(t *testing.T, y *graph.Node) *vm.Machine {
	t.Helper()
	p, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// runOn runs m on feeds and returns y's values.
func runOn(t *testing.T, m *vm.Machine, feeds vm.Feeds, y *graph.Node) []float64 {
	t.Helper()
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	v, err := m.Value(y)
	if err != nil {
		t.Fatal(err)
	}
	return graph.Float64s(v)
}

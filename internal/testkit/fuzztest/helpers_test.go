package fuzztest

import (
	"strconv"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// outputs is the last few nodes built, the graph's outputs.
func outputs(b *Builder) []*graph.Node {
	var outs []*graph.Node
	for i := len(b.Nodes) - 1; i >= 0 && len(outs) < 3; i-- {
		if n := b.Nodes[i]; n != nil && n.Graph() == b.G && n.Kind() == graph.KindOp {
			outs = append(outs, n)
		}
	}
	return outs
}

// feeds gives every input of p a value, the same for equal bytes.
func feeds(b *Builder, p *compile.Program) vm.Feeds {
	rng := b.Rand()
	f := vm.Feeds{}
	for _, n := range b.Leaves { // in a fixed order
		if n.Kind() != graph.KindInput {
			continue
		}
		v := b.ValuesFrom(rng, n.Type()) // drawn whether fed or not, so that each input's value is fixed
		if _, ok := p.SlotOf(n); ok {
			f[n] = v
		}
	}
	return f
}

// noPanic fails t when err is a recovered panic: the machine and the
// compiler turn panics into errors, which would hide a bug from the fuzzer.
func noPanic(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "panic") {
		t.Fatalf("%s: %v", what, err)
	}
}

// run compiles outs with opts and runs them once; it returns the values,
// or the error of a run that fails (an index out of range, say).
func run(t *testing.T, b *Builder, outs []*graph.Node, opts ...compile.Option) ([]*tensor.Dense, error) {
	t.Helper()
	p, err := compile.Compile(outs, opts...)
	switch {
	case err != nil && strings.Contains(err.Error(), "folding constant") && !strings.Contains(err.Error(), "panic"):
		return nil, err // the data of a constant is wrong (an index out of range), as a run would say
	case err != nil:
		t.Fatalf("compiling a valid graph: %v", err)
	}
	m, err := vm.New(p, vm.WithThreads(1))
	switch {
	case err != nil && strings.Contains(err.Error(), "over the memory limit"):
		return nil, err // a graph built to need petabytes, refused as it should be
	case err != nil:
		t.Fatalf("vm.New: %v", err)
	}
	if err := m.Run(feeds(b, p)); err != nil {
		noPanic(t, "Run", err)
		return nil, err
	}
	vals := make([]*tensor.Dense, len(outs))
	for i, o := range outs {
		v, err := m.Value(o)
		if err != nil {
			t.Fatalf("Value: %v", err)
		}
		vals[i], _ = graph.CloneDense(v)
	}
	return vals, nil
}

func itoa(i int) string     { return strconv.Itoa(i) }
func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// fuzzMemoryLimit bounds what one input may allocate, well under what the
// fuzzer's worker processes share: the default, half the machine's memory,
// lets two workers run it out.
const fuzzMemoryLimit = 256 << 20

// limitMemory sets graph.MemoryLimit for f's inputs and restores it after.
func limitMemory(f *testing.F) {
	prev := graph.SetMemoryLimit(fuzzMemoryLimit)
	f.Cleanup(func() { graph.SetMemoryLimit(prev) })
}

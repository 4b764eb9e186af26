package fuzztest

import (
	"fmt"
	"slices"
	"strings"
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
	axes := make([]int, len(batched))
	for i, on := range batched {
		if !on {
			axes[i] = compile.NotBatched
		}
	}
	vmapCompare(t, vmapCheck{
		fn:       func(x []*graph.Node) []*graph.Node { return []*graph.Node{fn(x)} },
		examples: examples, inAxes: axes, outAxes: []int{0}, same: sameBits,
	})
}

// vmapCheck is a function, its examples and how Vmap lays them out.
type vmapCheck struct {
	fn       func(x []*graph.Node) []*graph.Node
	examples [][]*tensor.Dense // examples[b][i]: example b's input i (example 0's where not batched)
	inAxes   []int             // the axis each input's examples lie along, or compile.NotBatched
	outAxes  []int             // the axis each output's examples lie along
	same     func(a, b *tensor.Dense) string
}

// vmapCompare checks that compile.Vmap of c.fn over c.examples equals
// c.fn run on each example separately, as c.same judges. An example whose
// separate run fails (an index out of range) must fail the batch's run
// too; a batch of examples that each run must run. Vmap may refuse a
// function holding values of rank 8 or more, which the batch's axis takes
// past the ops' limit, with that error.
func vmapCompare(t *testing.T, c vmapCheck) {
	t.Helper()
	first := c.examples[0]
	// The separate runs, of one program.
	g := graph.New()
	in := make([]*graph.Node, len(first))
	for i, x := range first {
		in[i] = g.Input(fmt.Sprint("x", i), x.Dtype(), x.Shape()...)
	}
	ys := c.fn(in)
	m, ok := machineFor(t, ys)
	if !ok {
		return
	}
	defer m.Close()
	want := make([][]*tensor.Dense, len(c.examples))
	var failed error
	for b, ex := range c.examples {
		feeds := vm.Feeds{}
		for i := range in {
			feeds[in[i]] = ex[i]
			if c.inAxes[i] == compile.NotBatched {
				feeds[in[i]] = first[i]
			}
		}
		if want[b], failed = runValues(t, m, feeds, ys); failed != nil {
			break
		}
	}

	// The batch, of stacked examples.
	gb := graph.New()
	bin := make([]*graph.Node, len(first))
	feeds := vm.Feeds{}
	for i, x := range first {
		v := x
		if a := c.inAxes[i]; a != compile.NotBatched {
			parts := make([]*tensor.Dense, len(c.examples))
			for b, ex := range c.examples {
				parts[b] = ex[i]
			}
			v = stack(t, parts, a)
		}
		bin[i] = gb.Input(fmt.Sprint("x", i), v.Dtype(), v.Shape()...)
		feeds[bin[i]] = v
	}
	yb, err := compile.Vmap(c.fn, bin, c.inAxes, c.outAxes)
	if err != nil && strings.Contains(err.Error(), "above the supported 8") && slices.ContainsFunc(g.Nodes(), func(n *graph.Node) bool { return len(n.Shape()) >= 8 }) {
		return // a value of rank 8 or more (Gather's), which the batch's axis takes past the ops' limit
	}
	if err != nil {
		t.Fatalf("Vmap of a function whose separate runs build: %v", err)
	}
	mb, ok := machineFor(t, yb)
	if !ok {
		t.Fatalf("the batch's program does not compile where the separate one does")
	}
	defer mb.Close()
	got, err := runValues(t, mb, feeds, yb)
	switch {
	case failed != nil && err == nil:
		t.Fatalf("Vmap: the batch ran where an example's separate run fails: %v", failed)
	case failed == nil && err != nil:
		t.Fatalf("Vmap: the batch fails where every example's separate run runs: %v", err)
	case err != nil:
		return
	}
	for o := range yb {
		rows := unstack(got[o], c.outAxes[o])
		for b := range c.examples {
			msg := c.same(rows[b], want[b][o])
			if !slices.Equal(rows[b].Shape(), want[b][o].Shape()) {
				msg = fmt.Sprintf("shapes %v and %v", rows[b].Shape(), want[b][o].Shape())
			}
			if msg != "" {
				t.Fatalf("Vmap: output %d (%v), example %d: %s in the batch and its separate run", o, ys[o], b, msg)
			}
		}
	}
}

// machineFor compiles ys and returns a machine for them, or false for a
// program refused for its size or its constants' data (as a run would).
func machineFor(t *testing.T, ys []*graph.Node) (*vm.Machine, bool) {
	t.Helper()
	p, err := compile.Compile(ys)
	if err != nil {
		noPanic(t, "Compile", err)
		if !isDataError(err) {
			t.Fatalf("compiling a valid graph: %v", err)
		}
		return nil, false
	}
	m, err := vm.New(p, vm.WithThreads(1))
	if err != nil {
		if !isDataError(err) {
			t.Fatalf("vm.New: %v", err)
		}
		return nil, false
	}
	return m, true
}

// runValues runs m on feeds and returns copies of ys's values, or the
// run's error (never a recovered panic).
func runValues(t *testing.T, m *vm.Machine, feeds vm.Feeds, ys []*graph.Node) ([]*tensor.Dense, error) {
	t.Helper()
	if err := m.Run(feeds); err != nil {
		noPanic(t, "Run", err)
		return nil, err
	}
	vals := make([]*tensor.Dense, len(ys))
	for i, y := range ys {
		v, err := m.Value(y)
		if err != nil {
			t.Fatal(err)
		}
		if vals[i], err = graph.CloneDense(v); err != nil {
			t.Fatal(err)
		}
	}
	return vals, nil
}

// stack lays the parts, of one type, along a new axis a.
func stack(t *testing.T, parts []*tensor.Dense, a int) *tensor.Dense {
	t.Helper()
	var all []float64
	for _, p := range parts {
		all = append(all, graph.Float64s(p)...)
	}
	shape := append([]int{len(parts)}, parts[0].Shape()...)
	all, shape = moveAxis(all, shape, 0, a)
	d, err := graph.FromFloat64s(parts[0].Dtype(), all, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// unstack splits x along axis a.
func unstack(x *tensor.Dense, a int) []*tensor.Dense {
	vals, shape := moveAxis(graph.Float64s(x), x.Shape(), a, 0)
	n := shape[0]
	parts := make([]*tensor.Dense, n)
	size := graph.ShapeSize(shape[1:])
	for b := range parts {
		parts[b], _ = graph.FromFloat64s(x.Dtype(), vals[b*size:(b+1)*size], shape[1:]...)
	}
	return parts
}

// moveAxis moves axis from of a row-major array of shape to position to.
func moveAxis(vals []float64, shape []int, from, to int) ([]float64, []int) {
	perm := make([]int, 0, len(shape))
	for i := range shape {
		if i != from {
			perm = append(perm, i)
		}
	}
	perm = slices.Insert(perm, to, from)
	strides := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = s
		s *= shape[i]
	}
	outShape := make([]int, len(shape))
	for i, p := range perm {
		outShape[i] = shape[p]
	}
	out := make([]float64, len(vals))
	idx := make([]int, len(shape))
	for k := range out {
		src := 0
		for i, p := range perm {
			src += idx[i] * strides[p]
		}
		out[k] = vals[src]
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < outShape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out, outShape
}

// sameValue is sameBits, or sameToRounding where the bits may differ.
func sameValue(bits bool) func(a, b *tensor.Dense) string {
	if bits {
		return sameBits
	}
	return sameToRounding
}

// isDataError reports whether err refuses a program for its size or its
// constants' data (an index out of range), as a run would.
func isDataError(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "folding constant") || strings.Contains(msg, "over the memory limit")
}

package fuzztest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// FuzzRunnerSizes runs random graphs of the ops' builders, whose inputs
// share a leading batch axis, by vm.Runner at random batch sizes, and
// checks each run against the graph the same bytes decode for that size:
// where it applies the same ops with the same parameters (none bakes the
// batch size in), the Runner gives the same values bit for bit (or fails
// where that program's run fails, an index out of range); where that
// graph cannot be built for the size, the Runner's run is an error; and
// no run panics.
func FuzzRunnerSizes(f *testing.F) {
	for _, seed := range graphSeeds {
		f.Add(append([]byte{1, 2, 0}, seed...))
	}
	limitMemory(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := NewBytes(data)
		built := 1 + in.IntN(3)
		sizes := []int{1 + in.IntN(4), built, 1 + in.IntN(4)}
		code := data[min(in.pos, len(data)):]
		g, outs := decodeBatched(code, built)
		if len(outs) == 0 || g.Err() != nil {
			return
		}
		r, err := vm.NewRunner(outs, nil, nil, vm.WithThreads(1))
		if err != nil {
			noPanic(t, "NewRunner", err)
			if !isDataError(err) {
				t.Fatalf("NewRunner of a valid graph: %v", err)
			}
			return
		}
		inputs := inputsOf(g)
		rng := rand.New(rand.NewPCG(in.Seed(), 4))
		for _, size := range sizes {
			feeds := vm.Feeds{}
			vals := make([]*tensor.Dense, len(inputs))
			for i, x := range inputs {
				vals[i] = Values(rng, graph.TypeOf(x.DType(), append([]int{size}, x.Shape()[1:]...)...))
				feeds[x] = vals[i]
			}
			runErr := r.Run(feeds)
			noPanic(t, "Runner.Run", runErr)
			g1, outs1 := decodeBatched(code, size)
			if !sameOps(g, g1) {
				continue // the bytes decode another graph at this size: nothing to compare with
			}
			if g1.Err() != nil {
				if runErr == nil {
					t.Fatalf("batch size %d (built for %d): the Runner ran a graph that cannot be built for it (%v)", size, built, g1.Err())
				}
				continue
			}
			m, ok := machineFor(t, outs1)
			if !ok {
				continue
			}
			ref := vm.Feeds{}
			for i, x := range inputsOf(g1) {
				ref[x] = vals[i]
			}
			want, refErr := runValues(t, m, ref, outs1)
			m.Close()
			switch {
			case runErr != nil && refErr == nil:
				t.Fatalf("batch size %d (built for %d): the Runner fails where the graph built for the size runs: %v", size, built, runErr)
			case runErr == nil && refErr != nil:
				t.Fatalf("batch size %d (built for %d): the Runner ran where the graph built for the size fails: %v", size, built, refErr)
			case runErr != nil:
				continue
			}
			for o, y := range outs {
				got, err := r.Value(y)
				if err != nil {
					t.Fatalf("Runner.Value: %v", err)
				}
				msg := sameBits(got, want[o])
				if !slices.Equal(got.Shape(), want[o].Shape()) {
					msg = fmt.Sprintf("shape %v, want %v", got.Shape(), want[o].Shape())
				}
				if msg != "" {
					t.Fatalf("batch size %d (built for %d): output %d (%v): %s by the Runner and by the graph built for the size", size, built, o, y, msg)
				}
			}
		}
	})
}

// decodeBatched decodes code into a graph whose inputs have a leading
// axis of batch (parameters do not), and returns it and its outputs.
func decodeBatched(code []byte, batch int) (*graph.Graph, []*graph.Node) {
	g := graph.New()
	b := NewBuilder(NewBytes(code), Mode{MaxRank: 3, MaxOps: 10}, g)
	b.Leaf = func(i int, t graph.Type) *graph.Node {
		if i%3 == 2 {
			return g.Param(fmt.Sprint("p", i), b.Values(t))
		}
		return g.Input(fmt.Sprint("x", i), t.DType, append([]int{batch}, t.Shape...)...)
	}
	b.Build()
	return g, outputs(b)
}

// inputsOf lists g's inputs in order.
func inputsOf(g *graph.Graph) []*graph.Node {
	var in []*graph.Node
	for _, n := range g.Nodes() {
		if n.Kind() == graph.KindInput {
			in = append(in, n)
		}
	}
	return in
}

// sameOps reports whether g and h apply the same ops, with the same
// parameters, to the same operands, in the same order: h is g built for
// another batch size. Constants and parameters must hold the same bits.
func sameOps(g, h *graph.Graph) bool {
	a, b := g.Nodes(), h.Nodes()
	if len(a) != len(b) {
		return false
	}
	for i, n := range a {
		m := b[i]
		if n.Kind() != m.Kind() || n.OpName() != m.OpName() || len(n.Inputs()) != len(m.Inputs()) {
			return false
		}
		for j, x := range n.Inputs() {
			if x.ID() != m.Inputs()[j].ID() {
				return false
			}
		}
		switch n.Kind() {
		case graph.KindOp:
			if !reflect.DeepEqual(n.Op(), m.Op()) {
				return false
			}
		case graph.KindConst, graph.KindParam:
			if !n.Type().Equal(m.Type()) || !sameDense(n.Value(), m.Value()) {
				return false
			}
		}
	}
	return true
}

// sameDense reports whether a and b hold the same bits.
func sameDense(a, b *tensor.Dense) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := graph.Float64s(a), graph.Float64s(b)
	return slices.EqualFunc(x, y, func(u, v float64) bool { return math.Float64bits(u) == math.Float64bits(v) })
}

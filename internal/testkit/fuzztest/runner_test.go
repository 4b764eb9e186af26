package fuzztest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
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
// graph broadcasts the batch against a size that does not follow it (a
// parameter shaped like the built batch), the Runner refuses the size,
// naming the op, and nowhere else; where that graph cannot be built for
// the size, the Runner's run is an error; and no run panics.
func FuzzRunnerSizes(f *testing.F) {
	for _, seed := range append(graphSeeds, spreadSeeds...) {
		f.Add(append([]byte{1, 2, 0}, seed...)) // built for 2 rows, run at 3, 2 and 1
	}
	limitMemory(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := NewBytes(data)
		built := 1 + in.IntN(3)
		sizes := []int{1 + in.IntN(4), built, 1 + in.IntN(4)}
		code := data[min(in.pos, len(data)):]
		checkRunnerSizes(t, in.Seed(), built, sizes, func(batch int) (*graph.Graph, []*graph.Node) {
			return decodeBatched(code, batch)
		})
	})
}

// checkRunnerSizes runs the graph decode gives for the built batch size
// by vm.Runner at each of sizes, and checks each run against the graph
// decode gives for that size (see FuzzRunnerSizes). seed seeds the
// inputs' values.
func checkRunnerSizes(t *testing.T, seed uint64, built int, sizes []int, decode func(batch int) (*graph.Graph, []*graph.Node)) {
	g, outs := decode(built)
	if len(outs) == 0 || g.Err() != nil {
		return
	}
	decoded := g.Nodes() // the Runner adds the nodes of other sizes to g
	r, err := vm.NewRunner(outs, nil, nil, vm.WithThreads(1))
	if err != nil {
		noPanic(t, "NewRunner", err)
		if !isDataError(err) {
			t.Fatalf("NewRunner of a valid graph: %v", err)
		}
		return
	}
	inputs := inputsOf(g)
	rng := rand.New(rand.NewPCG(seed, 4))
	for _, size := range sizes {
		feeds := vm.Feeds{}
		vals := make([]*tensor.Dense, len(inputs))
		for i, x := range inputs {
			vals[i] = Values(rng, graph.TypeOf(x.DType(), append([]int{size}, x.Shape()[1:]...)...))
			feeds[x] = vals[i]
		}
		runErr := r.Run(feeds)
		noPanic(t, "Runner.Run", runErr)
		g1, outs1 := decode(size)
		if !sameOps(decoded, g1.Nodes()) {
			continue // the bytes decode another graph at this size: nothing to compare with
		}
		spread, keep := spreadsBatch(decoded, g1, outs), keepsBatch(decoded, g1, outs, built, size)
		if spread != nil || keep != nil {
			// The graph built for the size gives the built batch's rows
			// at spread, or rows not the examples' at keep: the Runner
			// refuses it, naming the op (either where both are found).
			named := func(n *graph.Node) bool { return n != nil && strings.Contains(runErr.Error(), n.OpName()+" at ") }
			if runErr == nil || !strings.Contains(runErr.Error(), "follows the batch") || !named(spread) && !named(keep) {
				t.Fatalf("batch size %d (built for %d): %v spreads the batch over a built size, or %v keeps it, and the Runner gives %v", size, built, spread, keep, runErr)
			}
			continue
		}
		if runErr != nil && strings.Contains(runErr.Error(), "follows the batch") {
			t.Fatalf("batch size %d (built for %d): the Runner refuses a broadcast or a reshape that the graph built for the size neither spreads nor keeps the batch in: %v", size, built, runErr)
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
}

// spreadsBatch returns the first of a, the nodes of a graph built for one
// batch size, whose op broadcasts and, in h (that graph built for another
// size, applying the same ops), has an input axis that matched the
// output's axis aligned with it in a and no longer does, the output's
// axis keeping its size: a batch broadcast against a size that did not
// follow it. The bodies of loops and conditionals are searched too,
// after the graph. Nil if none.
func spreadsBatch(a []*graph.Node, h *graph.Graph, outs []*graph.Node) *graph.Node {
	if h.Err() != nil {
		return nil
	}
	return findIn(a, h.Nodes(), outs, func(n, m *graph.Node) bool {
		if _, ok := n.Op().(graph.Broadcaster); !ok {
			return false
		}
		out, out1 := n.Shape(), m.Shape()
		for j, x := range n.Inputs() {
			was, is := x.Shape(), m.Inputs()[j].Shape()
			if len(was) > len(out) || len(is) != len(was) {
				continue
			}
			for k := range was {
				o := k + len(out) - len(was)
				if was[k] == out[o] && out1[o] == out[o] && is[k] != was[k] {
					return true
				}
			}
		}
		return false
	})
}

// keepsBatch returns the first of a, the nodes of a graph built for batch
// size built, that is a Reshape whose input's leading axis is the batch
// and, in h (that graph built for size, applying the same ops), follows
// it, while its output's keeps the built size: its rows are not the
// examples', and the Runner refuses it. Nil if none, or if size is built.
func keepsBatch(a []*graph.Node, h *graph.Graph, outs []*graph.Node, built, size int) *graph.Node {
	if h.Err() != nil || size == built {
		return nil
	}
	return findIn(a, h.Nodes(), outs, func(n, m *graph.Node) bool {
		if n.OpName() != "Reshape" {
			return false
		}
		was, is, out, out1 := n.Inputs()[0].Shape(), m.Inputs()[0].Shape(), n.Shape(), m.Shape()
		return len(was) > 0 && len(out) > 0 && was[0] == built && is[0] == size && out[0] == built && out1[0] == built
	})
}

// findIn returns the first node n of a, the nodes of a graph (or a body)
// read by outs, for which bad(n, m) holds, m its counterpart in b (that
// graph built for another size); then the first in the bodies of a's
// nodes. Nil if none.
func findIn(a, b []*graph.Node, outs []*graph.Node, bad func(n, m *graph.Node) bool) *graph.Node {
	read := readBy(outs)
	for i, n := range a {
		if read[n] && n.Kind() == graph.KindOp && bad(n, b[i]) {
			return n
		}
	}
	for i, n := range a {
		if n.Outputs()[0] != n || !slices.ContainsFunc(n.Outputs(), func(o *graph.Node) bool { return read[o] }) {
			continue // each application once, where an output reads one of its outputs
		}
		for k, s := range subgraphs(n) {
			if found := findIn(subgraphNodes(s), subgraphNodes(subgraphs(b[i])[k]), s.Outputs, bad); found != nil {
				return found
			}
		}
	}
	return nil
}

// subgraphs are the bodies of n's op (graph.SubgraphOp), or nil.
func subgraphs(n *graph.Node) []*graph.Subgraph {
	var op any = n.Op()
	if op == nil {
		op, _ = n.MultiOp()
	}
	if s, ok := op.(graph.SubgraphOp); ok {
		return s.Subgraphs()
	}
	return nil
}

// subgraphNodes are the nodes of the graph of s, a body.
func subgraphNodes(s *graph.Subgraph) []*graph.Node {
	for _, n := range slices.Concat(s.Inputs, s.Outputs) {
		return n.Graph().Nodes()
	}
	return nil
}

// readBy returns the nodes that outs read, outs included.
func readBy(outs []*graph.Node) map[*graph.Node]bool {
	read := map[*graph.Node]bool{}
	stack := append([]*graph.Node(nil), outs...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if read[n] {
			continue
		}
		read[n] = true
		stack = append(stack, n.Inputs()...)
	}
	return read
}

// spreadSeeds decode graphs that, built for 2 rows, broadcast a parameter
// of 2 rows against the batch (a Maximum, a Greater, an Equal): at 1 row
// they would give 2.
var spreadSeeds = [][]byte{
	[]byte("\xe5\x1f\xdbc\u0381n)\x1c\a\xf7\x83\xaa\xcd\xdb5\xb3g\xb8\xe4p"),
	[]byte("\xd1A求f\"\"\xfe1\aOjC\xc6\xc8\t\x94\xa5"),
	[]byte("\x8f|#\x12\xda\xe5\x11\x80\xf5\xed\xfb\xf3e\xdf^\xfdbi6,'\xf3\xe2\xf9\xe2"),
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

// sameOps reports whether a and b, the nodes of two graphs, apply the
// same ops, with the same parameters, to the same operands, in the same
// order, and so do their bodies: b is a's graph built for another batch
// size. Constants and parameters must hold the same bits.
func sameOps(a, b []*graph.Node) bool {
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
			s, t := subgraphs(n), subgraphs(m)
			if len(s) != len(t) {
				return false
			}
			for k := range s {
				if !sameOps(subgraphNodes(s[k]), subgraphNodes(t[k])) {
					return false
				}
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

package fuzztest

import (
	"math"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// FuzzUpdates checks that computing updates in their parameters' slots
// (pass inplace) changes nothing: a random graph whose parameters are each
// updated to a value of the graph of their type (and with a new parameter
// set to each output) gives, over two runs, the same outputs and
// parameters bit for bit with the pass on and off.
func FuzzUpdates(f *testing.F) {
	for _, seed := range graphSeeds {
		f.Add(seed)
	}
	limitMemory(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		b := NewBuilder(NewBytes(data), Mode{MaxRank: 3, MaxOps: 12}, graph.New())
		b.Build()
		outs := outputs(b)
		if len(outs) == 0 || b.G.Err() != nil {
			return
		}
		updates := randomUpdates(b.G, data)
		for _, o := range outs { // and a parameter nothing reads, set to each output
			if graph.IsFloat(o.DType()) {
				if _, err := graph.Bytes(o.DType(), o.Shape(), 1<<20); err == nil {
					updates[b.G.Param("q", b.Values(o.Type()))] = o
				}
			}
		}
		if len(updates) == 0 || b.G.Err() != nil {
			return
		}
		var fed vm.Feeds
		steps := func(opts ...compile.Option) [][]float64 {
			p, err := compile.Compile(outs, append(opts, compile.WithUpdates(updates), compile.WithChecks())...)
			switch {
			case err != nil && strings.Contains(err.Error(), "folding constant") && !strings.Contains(err.Error(), "panic"):
				return nil
			case err != nil:
				t.Fatalf("compiling a valid graph: %v", err)
			}
			m, err := vm.New(p, vm.WithThreads(1))
			if err != nil {
				if strings.Contains(err.Error(), "over the memory limit") {
					return nil
				}
				t.Fatalf("vm.New: %v", err)
			}
			if fed == nil {
				fed = feeds(b, p)
			}
			var vals [][]float64
			for range 2 {
				if err := m.Run(fed); err != nil {
					noPanic(t, "Run", err)
					return nil
				}
				for _, n := range append(append([]*graph.Node(nil), outs...), p.Params()...) {
					v, err := m.Value(n)
					if err != nil {
						t.Fatalf("Value: %v", err)
					}
					vals = append(vals, graph.Float64s(v))
				}
			}
			return vals
		}
		on := steps()
		off := steps(compile.WithoutPass("inplace"))
		if on == nil || off == nil {
			return
		}
		for i := range on {
			for j := range on[i] {
				if math.Float64bits(on[i][j]) != math.Float64bits(off[i][j]) {
					t.Fatalf("value %d element %d: %v with updates in place, %v copied", i, j, on[i][j], off[i][j])
				}
			}
		}
	})
}

// randomUpdates updates each parameter of g (chosen by data) to a
// computed value of g of its type, or to another parameter of its type.
func randomUpdates(g *graph.Graph, data []byte) map[*graph.Node]*graph.Node {
	updates := map[*graph.Node]*graph.Node{}
	var params []*graph.Node
	for _, n := range g.Nodes() {
		if n.Kind() == graph.KindParam && n.Err() == nil && graph.IsFloat(n.DType()) {
			params = append(params, n)
		}
	}
	for i, p := range params {
		var same []*graph.Node
		for _, n := range g.Nodes() {
			if n != p && n.Err() == nil && (n.Kind() == graph.KindOp || n.Kind() == graph.KindParam) && n.Type().Equal(p.Type()) {
				same = append(same, n)
			}
		}
		if len(same) == 0 {
			continue
		}
		pick := i
		if len(data) > 0 {
			pick += int(data[i%len(data)])
		}
		updates[p] = same[pick%len(same)]
	}
	return updates
}

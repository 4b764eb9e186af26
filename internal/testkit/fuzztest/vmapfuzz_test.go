package fuzztest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
)

// FuzzVmap checks compile.Vmap on random graphs of the ops' builders: a
// graph's inputs, each batched along a random axis or shared, and its
// outputs, stacked along random axes, equal the graph run on each example
// separately, bit for bit (at extreme values too: signed zeros, huge and
// subnormal values, infinities and NaN), but to rounding where the graph
// multiplies matrices (a one-example product of a row may take another
// order of sums than the batch's). An example whose separate run fails
// fails the batch's.
func FuzzVmap(f *testing.F) {
	for _, seed := range graphSeeds {
		f.Add(append([]byte{2, 0x5a, 1}, seed...))
	}
	limitMemory(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := NewBytes(data)
		batch := 1 + in.IntN(3)
		mask := in.Byte()
		mode := Mode{MaxRank: 3, MaxOps: 10, Extreme: in.IntN(2) == 1}
		code := data[min(in.pos, len(data)):]
		rng := rand.New(rand.NewPCG(in.Seed(), 3))

		// The graph once, to learn its leaves and outputs.
		var types []graph.Type
		g := graph.New()
		b := NewBuilder(NewBytes(code), mode, g)
		b.Leaf = func(i int, t graph.Type) *graph.Node {
			types = append(types, t)
			return g.Input(fmt.Sprint("x", i), t.DType, t.Shape...)
		}
		b.Build()
		outs := outputs(b)
		if len(outs) == 0 || len(types) == 0 || g.Err() != nil {
			return
		}
		bits := true
		for _, n := range b.Nodes {
			if name := n.OpName(); strings.Contains(name, "MatMul") || strings.Contains(name, "Conv") {
				bits = false
			}
		}
		fn := func(x []*graph.Node) []*graph.Node {
			b := NewBuilder(NewBytes(code), mode, x[0].Graph())
			b.Leaf = func(i int, _ graph.Type) *graph.Node { return x[i] }
			b.Build()
			return outputs(b)
		}

		inAxes := make([]int, len(types))
		for i, t := range types {
			inAxes[i] = rng.IntN(len(t.Shape) + 1)
			if mask>>(i%8)&1 == 0 && i > 0 {
				inAxes[i] = compile.NotBatched
			}
		}
		outAxes := make([]int, len(outs))
		for o, y := range outs {
			outAxes[o] = rng.IntN(len(y.Shape()) + 1)
		}
		examples := make([][]*tensor.Dense, batch)
		for e := range examples {
			examples[e] = make([]*tensor.Dense, len(types))
			for i, t := range types {
				examples[e][i] = b.ValuesFrom(rng, t)
			}
		}
		vmapCompare(t, vmapCheck{fn: fn, examples: examples, inAxes: inAxes, outAxes: outAxes, same: sameValue(bits)})
	})
}

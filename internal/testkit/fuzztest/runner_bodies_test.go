package fuzztest

import (
	"fmt"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// FuzzRunnerBodies is FuzzRunnerSizes with the random graph built inside
// a body: a Scan's or a While's, of two steps, carrying the batched
// inputs, or both branches of a Cond, taking them as operands (the
// parameters are captured). vm.Runner traces the bodies again at each batch size; its
// values, and its refusals of a batch spread over a built size, are
// checked as FuzzRunnerSizes checks them, against the graph the bytes
// decode for each size, bodies included.
func FuzzRunnerBodies(f *testing.F) {
	for _, seed := range append(graphSeeds, spreadSeeds...) {
		for wrap := range byte(4) {
			f.Add(append([]byte{1, 2, 0, wrap}, seed...)) // built for 2 rows, run at 3, 2 and 1
		}
	}
	limitMemory(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := NewBytes(data)
		built := 1 + in.IntN(3)
		sizes := []int{1 + in.IntN(4), built, 1 + in.IntN(4)}
		wrap := in.IntN(4)
		code := data[min(in.pos, len(data)):]
		checkRunnerSizes(t, in.Seed(), built, sizes, func(batch int) (*graph.Graph, []*graph.Node) {
			return decodeInBody(code, batch, wrap)
		})
	})
}

// decodeInBody decodes code as decodeBatched does, for its leaves: the
// inputs (with a leading axis of batch) and parameters; then again inside
// a body reading those leaves, and returns the body's op's outputs. wrap
// chooses the body: 0 a Scan of two steps whose carries are the inputs,
// 1 and 2 the branches of a Cond on the inputs, taking the then or the
// else branch, 3 a While of two steps carrying the inputs and the
// outputs.
func decodeInBody(code []byte, batch, wrap int) (*graph.Graph, []*graph.Node) {
	g := graph.New()
	mode := Mode{MaxRank: 3, MaxOps: 10}
	var leaves []*graph.Node
	b := NewBuilder(NewBytes(code), mode, g)
	b.Leaf = func(i int, t graph.Type) *graph.Node {
		var n *graph.Node
		if i%3 == 2 {
			n = g.Param(fmt.Sprint("p", i), b.Values(t))
		} else {
			n = g.Input(fmt.Sprint("x", i), t.DType, append([]int{batch}, t.Shape...)...)
		}
		leaves = append(leaves, n)
		return n
	}
	b.Build()
	inputs := inputsOf(g)
	if len(outputs(b)) == 0 || g.Err() != nil || len(inputs) == 0 {
		return g, nil
	}
	// The body decodes the same bytes on its operands, the inputs in
	// order, and on the parameters, which it captures.
	body := func(operands []*graph.Node) []*graph.Node {
		bb := NewBuilder(NewBytes(code), mode, operands[0].Graph())
		k := 0
		bb.Leaf = func(i int, t graph.Type) *graph.Node {
			switch {
			case i%3 == 2 && i < len(leaves):
				return leaves[i]
			case i%3 != 2 && k < len(operands):
				k++
				return operands[k-1]
			}
			// Traced again at another size, the bytes may decode more
			// leaves: that graph is not compared with.
			return bb.G.Scalar(0, t.DType)
		}
		bb.Build()
		return outputs(bb)
	}
	switch wrap {
	case 0:
		_, ys := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return c, body(c)
		}, inputs, nil, ops.Steps(2))
		return g, ys
	case 3:
		// Two steps, counted by a carry, each computing the outputs,
		// carried from zeros of their types.
		init := []*graph.Node{g.Scalar(0, graph.Float64)}
		init = append(init, inputs...)
		for _, o := range outputs(b) {
			init = append(init, ops.Scale(ops.StopGradient(o), 0))
		}
		final, _ := ops.While(func(c []*graph.Node) *graph.Node {
			return ops.Less(c[0], c[0].Graph().Scalar(2, graph.Float64))
		}, func(c []*graph.Node) []*graph.Node {
			in := c[1 : 1+len(inputs)]
			next := append([]*graph.Node{ops.Add(c[0], c[0].Graph().Scalar(1, graph.Float64))}, in...)
			return append(next, body(in)...)
		}, init, ops.MaxSteps(3))
		return g, final[1+len(inputs):]
	}
	pred := g.Scalar(float64(2-wrap), graph.Float64)
	return g, ops.Cond(pred, body, body, inputs)
}

package nn

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// scanBody is one step of a recurrent loop: from the carried state and this
// step's slices of the sequences, the new state and this step's outputs.
type scanBody = func(carry, x []*graph.Node) (newCarry, y []*graph.Node)

// scan runs body over the leading axis of every sequence in xs, carrying
// state from init, and returns the final carry and the per-step outputs
// stacked on a new leading axis. It unrolls the loop into the graph.
func scan(body scanBody, init, xs []*graph.Node) (final, ys []*graph.Node) {
	steps := xs[0].Shape()[0]
	carry := init
	var outs [][]*graph.Node
	for t := range steps {
		x := make([]*graph.Node, len(xs))
		for i, s := range xs {
			x[i] = ops.Reshape(ops.Slice(s, 0, t, t+1), s.Shape()[1:]...)
		}
		var y []*graph.Node
		carry, y = body(carry, x)
		for i, v := range y {
			if t == 0 {
				outs = append(outs, make([]*graph.Node, steps))
			}
			outs[i][t] = ops.Reshape(v, append([]int{1}, v.Shape()...)...)
		}
	}
	for _, o := range outs {
		ys = append(ys, ops.Concat(0, o...))
	}
	return carry, ys
}

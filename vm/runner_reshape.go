package vm

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// checkReshapes refuses a replay at batch size size (nodes, from Replay)
// in which a Reshape bakes the built batch into its shape: its input's
// leading axis follows the batch (the built batch as built, size now)
// while its output's leading axis keeps the built batch, as
// Reshape(x, 64, -1) does at 128 rows, giving 64 rows of two examples
// each, silently. The first such node, in build order, is named.
func (r *Runner) checkReshapes(nodes map[*graph.Node]*graph.Node, size int) error {
	if size == r.batch {
		return nil
	}
	var bad *graph.Node
	for n, m := range nodes {
		if n.OpName() != "Reshape" || (bad != nil && n.ID() > bad.ID()) || len(n.Inputs()) != 1 || len(m.Inputs()) != 1 {
			continue
		}
		was, is := n.Inputs()[0].Type().Shape, m.Inputs()[0].Type().Shape
		outWas, outIs := n.Type().Shape, m.Type().Shape
		if len(was) > 0 && len(is) > 0 && len(outWas) > 0 && len(outIs) > 0 &&
			was[0] == r.batch && is[0] == size && outWas[0] == r.batch && outIs[0] == r.batch {
			bad = n
		}
	}
	if bad == nil {
		return nil
	}
	m := nodes[bad]
	return fmt.Errorf("nabla: Runner.Run: Reshape at %s: %s to %s (%s to %s as built): the input's leading axis follows the batch and the output's keeps the built batch %d, so its rows would not be the examples': "+
		"the reshape holds the batch in its shape; give the leading axis as -1 (batch size %d; the graph was built for %d)",
		bad.Site(), graph.ShapeString(m.Inputs()[0].Type().Shape), graph.ShapeString(m.Type().Shape),
		graph.ShapeString(bad.Inputs()[0].Type().Shape), graph.ShapeString(bad.Type().Shape), r.batch, size, r.batch)
}

package ops

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// Batch runs the branch a shared predicate takes once for the whole
// batch: a Cond whose branches are these batched (by the driver's sweep,
// each in a graph of its own nested in the batch's), an output batched in
// either branch broadcast in the other so that their types agree. A
// batched predicate, which may take both branches across the examples,
// runs both and selects (selectBatch). Outputs of every dtype batch, an
// integer's broadcast as it is.
func (op *condOp) Batch(c *graph.BatchContext) []*graph.Node {
	if c.Batched(0) {
		return op.selectBatch(c)
	}
	g := c.Graph()
	N := op.operands
	var subs [2]*graph.Graph
	var operands, outs [2][]*graph.Node
	var flags [2][]bool
	for b, br := range op.branches {
		subs[b] = g.NewSub()
		ins := make([]*graph.Node, len(br.Inputs))
		batched := make([]bool, len(br.Inputs))
		for i, in := range br.Inputs {
			k := op.input(b, i)
			batched[i] = c.Batched(k)
			if i < N {
				shape := in.Shape()
				if batched[i] {
					shape = c.Shape(shape)
				}
				ins[i] = subs[b].Input(fmt.Sprintf("operand%d", i), in.DType(), shape...)
			} else {
				ins[i] = subs[b].Capture(c.Input(k))
			}
		}
		operands[b] = ins[:N]
		var err error
		if outs[b], flags[b], err = c.Sweep(subs[b], br.Outputs, br.Inputs, ins, batched); err != nil || subs[b].Err() != nil {
			c.Decline()
			return nil
		}
	}
	batched := make([]bool, len(outs[0]))
	for j := range outs[0] {
		batched[j] = flags[0][j] || flags[1][j]
		for b := range outs {
			if batched[j] && !flags[b][j] {
				outs[b][j] = broadcastBatch(c, outs[b][j])
			}
		}
	}

	both := &condOp{operands: N}
	in := []*graph.Node{c.Input(0)}
	for i := range N {
		in = append(in, c.Input(1+i))
	}
	var outer []*graph.Node
	for b := range subs {
		o, captured := subs[b].Captures()
		both.branches[b] = &graph.Subgraph{Inputs: slices.Concat(operands[b], captured), Outputs: outs[b]}
		both.captures[b] = len(captured)
		outer = append(outer, o...)
	}
	// A copy: ApplyMulti's slice is the graph's record of the outputs.
	res := slices.Clone(graph.ApplyMulti(both, append(in, outer...)...))
	if res[0].Err() != nil {
		c.Decline()
		return nil
	}
	for j, r := range res {
		if !batched[j] {
			res[j] = broadcastBatch(c, r)
		}
	}
	return res
}

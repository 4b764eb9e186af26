package ops

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// Batch runs the loop once for the whole batch: a Scan of the same steps
// whose body is this body batched (by the driver's sweep, in a graph of
// its own nested in the batch's), each batched sequence's and stored
// output's batch axis behind the step axis. A carry is batched where its
// initial value is, or where the body makes it depend on a batched value
// (a fixed point over the steps). A gradient's loop (sums), While's
// padded loop, and a loop with an integer carry or output that does not
// depend on the batch (it would have to be broadcast, which BroadcastTo
// does not do for integers) decline, and are looped over the batch.
func (op *scanOp) Batch(c *graph.BatchContext) []*graph.Node {
	body := op.body
	if op.sums > 0 || op.until != 0 || op.skipBy != 0 || op.skip != nil || len(body.Inputs) == 0 {
		c.Decline()
		return nil
	}
	C, S := op.carries, op.seqs
	Y := len(body.Outputs) - 2*C
	inB := op.batchedInputs(c)
	for i := range C {
		if inB[i] && !c.Batched(i) && !graph.IsFloat(body.Inputs[i].DType()) {
			c.Decline() // an integer initial value to broadcast
			return nil
		}
	}

	// The batched body's inputs, in a graph nested in the batch's.
	g := c.Graph()
	sub := g.NewSub()
	ins := make([]*graph.Node, len(body.Inputs))
	for i, in := range body.Inputs {
		shape := in.Shape()
		if inB[i] {
			shape = c.Shape(shape)
		}
		switch {
		case i < C:
			ins[i] = sub.Input(fmt.Sprintf("carry%d", i), in.DType(), shape...)
		case i < C+S:
			ins[i] = sub.Input(fmt.Sprintf("x%d", i-C), in.DType(), shape...)
		default:
			ins[i] = sub.Capture(c.Input(i))
		}
	}
	outs, flags, err := c.Sweep(sub, body.Outputs[:C+Y], body.Inputs, ins, inB)
	if err != nil || sub.Err() != nil {
		c.Decline()
		return nil
	}
	for j, o := range outs {
		if !flags[j] && !graph.IsFloat(o.DType()) {
			c.Decline() // an integer to broadcast
			return nil
		}
		if j < C && inB[j] && !flags[j] {
			outs[j] = broadcastBatch(c, o) // a carry the step resets
		}
	}
	_, captured := sub.Captures()
	loop := newScanOp(ins[:C], ins[C:C+S], captured, outs[:C], nil, outs[C:], op.steps, op.reverse)
	in := make([]*graph.Node, 0, len(body.Inputs))
	for i := range C {
		in = append(in, c.Input(i))
		if inB[i] && !c.Batched(i) {
			in[i] = batchedInput(c, i)
		}
	}
	for s := range S {
		x := c.Input(C + s)
		if c.Batched(C + s) {
			x = swapLeading(x) // (T, B, …)
		}
		in = append(in, x)
	}
	outer, _ := sub.Captures()
	// A copy: ApplyMulti's slice is the graph's record of the outputs.
	res := slices.Clone(graph.ApplyMulti(loop, append(in, outer...)...))
	if res[0].Err() != nil {
		c.Decline()
		return nil
	}
	// Every output batched: final carries as they are, stacked outputs and
	// history with the batch axis moved in front of the steps.
	for j, r := range res {
		var b bool
		switch {
		case j < C: // final carry
			b = inB[j]
		case j < C+Y: // stacked output
			b = flags[j]
		default: // history of carry j-C-Y
			b = inB[j-C-Y]
		}
		switch {
		case !b:
			res[j] = broadcastBatch(c, r)
		case j >= C:
			res[j] = swapLeading(r)
		}
	}
	return res
}

// batchedInputs says which body inputs the batched loop batches: the
// sequences and captured values that are batched, and the carries whose
// initial value is or which the body makes depend on a batched input, a
// fixed point over the steps.
func (op *scanOp) batchedInputs(c *graph.BatchContext) []bool {
	body := op.body
	sub := body.Inputs[0].Graph()
	inB := make([]bool, len(body.Inputs))
	for i := range inB {
		inB[i] = c.Batched(i) // op input i feeds body input i: there are no sums
	}
	for changed := true; changed; {
		var from []*graph.Node
		for i, b := range inB {
			if b {
				from = append(from, body.Inputs[i])
			}
		}
		marks := sub.Descendants(from, sub.Len()-1)
		changed = false
		for i := range op.carries {
			if !inB[i] && marks[body.Outputs[i].ID()] {
				inB[i], changed = true, true
			}
		}
	}
	return inB
}

// swapLeading swaps x's first two axes: a loop's steps and a batch's
// examples.
func swapLeading(x *graph.Node) *graph.Node {
	perm := make([]int, x.Type().Rank())
	for i := range perm {
		perm[i] = i
	}
	perm[0], perm[1] = 1, 0
	return Transpose(x, perm...)
}

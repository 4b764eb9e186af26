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
// (a fixed point over the steps); a sum (a gradient's loop adds up terms
// over the steps) where its initial value or its terms are. While's
// padded loop, whose examples may stop at different steps, runs while
// any example does (see skipBatch). Values of every dtype batch, an
// integer's selected, broadcast and moved behind the steps as it is.
func (op *scanOp) Batch(c *graph.BatchContext) []*graph.Node {
	body := op.body
	if op.skip != nil || len(body.Inputs) == 0 {
		c.Decline()
		return nil
	}
	C, A, S := op.carries, op.sums, op.seqs
	Y := len(body.Outputs) - 2*C - A
	inB := op.batchedInputs(c)
	skipB := op.skipBy > 0 && c.Batched(C+A+op.skipBy-1)
	if skipB {
		for i := range C {
			inB[i] = true // each example keeps its carries at its own steps
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
			ins[i] = sub.Capture(c.Input(op.opInput(i)))
		}
	}
	outs, flags, err := c.Sweep(sub, body.Outputs[:C+A+Y], body.Inputs, ins, inB)
	if err != nil || sub.Err() != nil {
		c.Decline()
		return nil
	}
	// Which outputs are batched: a carry as its input, a sum where its
	// initial value or its terms are, a stacked output as swept.
	outB := slices.Clone(flags)
	copy(outB, inB[:C])
	for a := range A {
		outB[C+a] = flags[C+a] || c.Batched(C+a) || skipB
	}
	for j, o := range outs {
		if outB[j] && !flags[j] {
			// A carry the step resets, a sum's shared terms.
			outs[j] = broadcastBatch(c, o)
		}
	}
	steps := ins[C : C+S]
	var stepSeqs []*graph.Node // the loop's sequences beyond the body's
	if skipB {
		var anySeq *graph.Node
		steps, anySeq = op.skipBatch(c, sub, ins, outs)
		stepSeqs = append(stepSeqs, anySeq)
		for j := C + A; j < len(outs); j++ {
			outB[j] = true
		}
	}
	Yb := Y // the batched loop's step outputs
	if op.until > 0 && outB[C+A+op.until-1] {
		outs = append(outs, anyNonzero(outs[C+A+op.until-1], c.Size()))
		Yb++
	}
	_, captured := sub.Captures()
	loop := newScanOp(ins[:C], steps, captured, outs[:C], outs[C:C+A], outs[C+A:], op.steps, op.reverse)
	loop.builder = op.builder
	switch {
	case skipB:
		loop.skipBy = len(steps)
	default:
		loop.skipBy = op.skipBy
	}
	if loop.until = op.until; Yb > Y {
		loop.until = Yb
	}
	in := make([]*graph.Node, 0, len(c.Inputs())+len(stepSeqs))
	for i := range C + A {
		x := c.Input(i)
		if outB[i] && !c.Batched(i) {
			x = broadcastBatch(c, x)
		}
		in = append(in, x)
	}
	for s := range S {
		x := c.Input(C + A + s)
		if c.Batched(C + A + s) {
			x = swapLeading(x) // (T, B, …)
		}
		in = append(in, x)
	}
	in = append(in, stepSeqs...)
	outer, _ := sub.Captures()
	// A copy: ApplyMulti's slice is the graph's record of the outputs.
	res := slices.Clone(graph.ApplyMulti(loop, append(in, outer...)...))
	if res[0].Err() != nil {
		c.Decline()
		return nil
	}
	if Yb > Y {
		res = slices.Delete(res, C+A+Y, C+A+Y+1) // the loop's flag, the examples' own are kept
	}
	// Every output batched: final carries and sums as they are, stacked
	// outputs and history with the batch axis moved in front of the steps.
	for j, r := range res {
		b := j < C+A+Y && outB[j] || j >= C+A+Y && inB[j-C-A-Y] // history reads carry j-C-A-Y
		switch {
		case !b:
			res[j] = broadcastBatch(c, r)
		case j >= C+A:
			res[j] = swapLeading(r)
		}
	}
	return res
}

// opInput is the op input that body input i reads (the body has none
// for the sums).
func (op *scanOp) opInput(i int) int {
	if i < op.carries {
		return i
	}
	return i + op.sums
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
		inB[i] = c.Batched(op.opInput(i))
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

package ops

import (
	"errors"
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// Backward builds the gradient of a Scan as another Scan over the same
// steps in the opposite order. Its body is the vector–Jacobian product of
// this body, built in the body's own graph (so the body's values are
// recomputed from the step's starting carry, which this Scan's history
// outputs hold). It carries the gradient with respect to the carry, sums
// over the steps the gradients with respect to the captured values, and
// outputs at each step the gradients with respect to the sequences'
// slices. A sum's terms are seeded, at every step, with the gradient of
// the sum. Being a Scan, the gradient is differentiated the same way.
func (op *scanOp) Backward(ctx *graph.GradContext, gradOuts []*graph.Node) []*graph.Node {
	body := op.body
	C, A, S := op.carries, op.sums, op.seqs
	inputs, outputs := ctx.Inputs(), ctx.Outputs()
	out := make([]*graph.Node, len(inputs))
	for a := C; a < C+A; a++ {
		if ctx.NeedsGrad(a) {
			out[a] = gradOuts[a] // a sum's initial value
		}
	}
	if len(body.Inputs) == 0 {
		return out // nothing else to differentiate
	}
	sub := body.Inputs[0].Graph()
	g := ctx.Graph()
	isFloat := func(n *graph.Node) bool { return graph.IsFloat(n.DType()) }

	// The body's outputs to differentiate and their seeds: the float
	// carries (seeds are inputs of the backward body), the sums' terms
	// (seeded with the sum's gradient, the same at every step) and the
	// step outputs that have a gradient (seeds are step inputs).
	var ys, seeds []*graph.Node
	var carrySeeds, carryInits []*graph.Node // per float carry
	var floatCarries []int
	for c := range C {
		if !isFloat(body.Inputs[c]) {
			continue
		}
		floatCarries = append(floatCarries, c)
		seed := sub.Input(fmt.Sprintf("grad_carry%d", c), body.Inputs[c].DType(), body.Inputs[c].Shape()...)
		ys, seeds = append(ys, body.Outputs[c]), append(seeds, seed)
		carrySeeds = append(carrySeeds, seed)
		init := gradOuts[c]
		if init == nil {
			init = g.Const(graph.NewDenseOf(outputs[c].Type()))
		}
		carryInits = append(carryInits, init)
	}
	for a := C; a < C+A; a++ {
		if gradOuts[a] != nil {
			ys, seeds = append(ys, body.Outputs[a]), append(seeds, sub.Capture(gradOuts[a]))
		}
	}
	var ySeeds, yGrads []*graph.Node // step inputs of the backward body and their sequences
	for j := C + A; j < len(body.Outputs); j++ {
		if gradOuts[j] == nil || !isFloat(body.Outputs[j]) {
			continue
		}
		seed := sub.Input(fmt.Sprintf("grad_y%d", j-C-A), body.Outputs[j].DType(), body.Outputs[j].Shape()...)
		ys, seeds = append(ys, body.Outputs[j]), append(seeds, seed)
		ySeeds, yGrads = append(ySeeds, seed), append(yGrads, gradOuts[j])
	}

	// What to differentiate with respect to: the float carries (always:
	// the gradient flows through them from step to step), and the
	// sequences and captured values that need a gradient.
	wrt := make([]*graph.Node, 0, len(body.Inputs))
	for _, c := range floatCarries {
		wrt = append(wrt, body.Inputs[c])
	}
	var seqWanted, capWanted []int // op inputs
	for i := C + A; i < len(inputs); i++ {
		if !ctx.NeedsGrad(i) || !isFloat(inputs[i]) {
			continue
		}
		wrt = append(wrt, body.Inputs[op.bodyInput(i)])
		if i < C+A+S {
			seqWanted = append(seqWanted, i)
		} else {
			capWanted = append(capWanted, i)
		}
	}
	wanted := len(seqWanted) + len(capWanted)
	for _, c := range floatCarries {
		if ctx.NeedsGrad(c) {
			wanted++
		}
	}
	if wanted == 0 || len(ys) == 0 {
		return out
	}
	grads, err := ctx.Differentiate(ys, seeds, wrt)
	if err != nil {
		ctx.Errorf("differentiating the body: %w", traced(bodyCause(err)))
		return nil
	}
	gCarry := grads[:len(floatCarries)]
	gSeq := grads[len(floatCarries) : len(floatCarries)+len(seqWanted)]
	gCap := grads[len(floatCarries)+len(seqWanted):]

	// The backward body carries the carries' gradients and sums the
	// captured values'; its step inputs are the forward step's carries and
	// sequence slices that it reads, and the output gradients.
	sumInits := make([]*graph.Node, len(capWanted))
	for n, k := range capWanted {
		sumInits[n] = g.Const(graph.NewDenseOf(inputs[k].Type()))
	}
	read := sub.Ancestors(append(append(append([]*graph.Node(nil), gCarry...), gSeq...), gCap...))
	var bSteps, bSeqs []*graph.Node
	for b, n := range body.Inputs[:C+S] {
		if !read[n.ID()] {
			continue
		}
		bSteps = append(bSteps, n)
		if b < C {
			bSeqs = append(bSeqs, outputs[len(outputs)-C+b]) // the history
		} else {
			bSeqs = append(bSeqs, inputs[b+A])
		}
	}
	bSteps = append(bSteps, ySeeds...)
	bSeqs = append(bSeqs, yGrads...)
	flagIn, flagSeq := op.identityFlag(sub, inputs, outputs)
	if flagIn != nil {
		bSteps, bSeqs = append(bSteps, flagIn), append(bSeqs, flagSeq)
	}
	if err := sub.Err(); err != nil {
		ctx.Errorf("differentiating the body: %w", traced(err))
		return nil
	}
	outer, captured := sub.Captures()
	back := newScanOp(carrySeeds, bSteps, captured, gCarry, gCap, gSeq, op.steps, !op.reverse)
	back.builder = op.userLoop()
	if flagIn != nil {
		back.skipBy = len(bSteps)
	}
	res := graph.ApplyMulti(back, append(append(append(carryInits, sumInits...), bSeqs...), outer...)...)
	if err := res[0].Err(); err != nil {
		ctx.Errorf("%w", traced(err))
		return nil
	}
	for n, c := range floatCarries {
		if ctx.NeedsGrad(c) {
			out[c] = res[n]
		}
	}
	for n, k := range capWanted {
		out[k] = res[len(floatCarries)+n]
	}
	for n, s := range seqWanted {
		out[s] = res[len(floatCarries)+len(capWanted)+n]
	}
	return out
}

// identityFlag is, for a loop whose body is the identity at some steps (a
// While's padding: see until and skipBy), a new input of the body for a
// step's flag and the sequence of flags, zero at those steps, that its
// derivatives' loops read to skip them; nil otherwise.
func (op *scanOp) identityFlag(sub *graph.Graph, inputs, outputs []*graph.Node) (in, seq *graph.Node) {
	body := op.body
	var t graph.Type
	switch {
	case op.until > 0:
		j := op.stepOutputs() + op.until - 1
		t, seq = body.Outputs[j].Type(), outputs[j]
	case op.skipBy > 0:
		t, seq = body.Inputs[op.carries+op.skipBy-1].Type(), inputs[op.stepOutputs()+op.skipBy-1]
	default:
		return nil, nil
	}
	return sub.Input("identity_flag", t.DType, t.Shape...), seq
}

// bodyCause is err, an error differentiating a loop's body, or, for a
// loop whose step is a Cond running the user's body in a branch (a
// While's: see gatedScan), the error differentiating that branch: the
// Cond is no function the user called. The first Cond error on err's
// chain is the step's, whose Backward the body's differentiation calls
// first.
func bodyCause(err error) error {
	var b *branchGradError
	if errors.As(err, &b) && b.gate {
		return b.cause
	}
	return err
}

package ops

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// Backward builds the gradient of a Scan as another Scan over the same
// steps in the opposite order. Its body is the vector–Jacobian product of
// this body, built in the body's own graph (so the body's values are
// recomputed from the step's starting carry, which this Scan's history
// outputs hold). It carries the gradient with respect to the carry and
// the sums, over the steps, of the gradients with respect to the captured
// values; its step outputs are the gradients with respect to the
// sequences' slices. Being a Scan, it is differentiated the same way.
func (op *scanOp) Backward(ctx *graph.GradContext, gradOuts []*graph.Node) []*graph.Node {
	body := op.body
	C, S := op.carries, op.seqs
	if len(body.Inputs) == 0 {
		return make([]*graph.Node, len(ctx.Inputs())) // nothing to differentiate
	}
	sub := body.Inputs[0].Graph()
	g := ctx.Graph()
	inputs, outputs := ctx.Inputs(), ctx.Outputs()
	isFloat := func(n *graph.Node) bool { return graph.IsFloat(n.DType()) }

	// The body's outputs to differentiate and their seeds (inputs of the
	// backward body): the float carries, and the step outputs that have
	// a gradient.
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
	var ySeeds, yGrads []*graph.Node // step inputs of the backward body and their sequences
	for j := C; j < len(body.Outputs); j++ {
		if gradOuts[j] == nil || !isFloat(body.Outputs[j]) {
			continue
		}
		seed := sub.Input(fmt.Sprintf("grad_y%d", j-C), body.Outputs[j].DType(), body.Outputs[j].Shape()...)
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
	var seqWanted, capWanted []int
	for i := C; i < len(body.Inputs); i++ {
		if !ctx.NeedsGrad(i) || !isFloat(body.Inputs[i]) {
			continue
		}
		wrt = append(wrt, body.Inputs[i])
		if i < C+S {
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
		return make([]*graph.Node, len(inputs))
	}
	grads, err := ctx.Differentiate(ys, seeds, wrt)
	if err != nil {
		ctx.Errorf("differentiating the body: %v", err)
		return nil
	}
	gCarry := grads[:len(floatCarries)]
	gSeq := grads[len(floatCarries) : len(floatCarries)+len(seqWanted)]
	gCap := grads[len(floatCarries)+len(seqWanted):]

	// The backward body: carries are the carry gradients and the
	// captured values' running sums; step inputs are the forward step's
	// carries and sequence slices and the output gradients.
	newCarry := append([]*graph.Node(nil), gCarry...)
	bCarries := append([]*graph.Node(nil), carrySeeds...)
	bInits := append([]*graph.Node(nil), carryInits...)
	for n, k := range capWanted {
		acc := sub.Input(fmt.Sprintf("grad_sum%d", k-C-S), body.Inputs[k].DType(), body.Inputs[k].Shape()...)
		bCarries = append(bCarries, acc)
		newCarry = append(newCarry, Add(acc, gCap[n]))
		bInits = append(bInits, g.Const(graph.NewDenseOf(inputs[k].Type())))
	}
	// Step inputs: the forward step's carries (from the history) and
	// sequence slices that the backward body reads, and the output
	// gradients.
	read := ancestors(append(append([]*graph.Node(nil), newCarry...), gSeq...))
	var bSteps, bSeqs []*graph.Node
	for i, n := range body.Inputs[:C+S] {
		if !read[n] {
			continue
		}
		bSteps = append(bSteps, n)
		if i < C {
			bSeqs = append(bSeqs, outputs[len(outputs)-C+i]) // the history
		} else {
			bSeqs = append(bSeqs, inputs[i])
		}
	}
	bSteps = append(bSteps, ySeeds...)
	bSeqs = append(bSeqs, yGrads...)
	if err := sub.Err(); err != nil {
		ctx.Errorf("differentiating the body: %v", err)
		return nil
	}
	outer, captured := sub.Captures()
	back := newScanOp(bCarries, bSteps, captured, append(newCarry, gSeq...), op.steps, !op.reverse)
	res := graph.ApplyMulti(back, append(append(bInits, bSeqs...), outer...)...)
	if err := res[0].Err(); err != nil {
		ctx.Errorf("%v", err)
		return nil
	}
	out := make([]*graph.Node, len(inputs))
	for n, c := range floatCarries {
		if ctx.NeedsGrad(c) {
			out[c] = res[n]
		}
	}
	for n, k := range capWanted {
		out[k] = res[len(floatCarries)+n]
	}
	for n, s := range seqWanted {
		out[s] = res[len(bCarries)+n]
	}
	return out
}

// ancestors marks the nodes the given nodes are computed from, themselves
// included.
func ancestors(nodes []*graph.Node) map[*graph.Node]bool {
	seen := map[*graph.Node]bool{}
	stack := append([]*graph.Node(nil), nodes...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		stack = append(stack, n.Inputs()...)
	}
	return seen
}

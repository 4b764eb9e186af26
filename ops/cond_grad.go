package ops

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// Backward builds the gradient of a Cond as another Cond on the same
// predicate. Each of its branches is the vector–Jacobian product of the
// corresponding branch, built in that branch's own graph (so the branch's
// values are recomputed there rather than stored), seeded with the
// outputs' gradients, which the new Cond takes as operands beside the
// original ones; a branch gives zeros for the values only the other
// branch captured. Being a Cond, the gradient is differentiated the same
// way. The predicate gets no gradient.
func (op *condOp) Backward(ctx *graph.GradContext, gradOuts []*graph.Node) []*graph.Node {
	inputs := ctx.Inputs()
	out := make([]*graph.Node, len(inputs))
	N := op.operands
	var seeded []int // outputs with a gradient
	for j, gOut := range gradOuts {
		if gOut != nil && graph.IsFloat(op.branches[0].Outputs[j].DType()) {
			seeded = append(seeded, j)
		}
	}
	var wanted []int // op inputs that need a gradient
	for i := 1; i < len(inputs); i++ {
		if ctx.NeedsGrad(i) && graph.IsFloat(inputs[i].DType()) {
			wanted = append(wanted, i)
		}
	}
	if len(seeded) == 0 || len(wanted) == 0 {
		return out
	}
	back := &condOp{operands: N + len(seeded), gate: op.gate}
	var outer []*graph.Node
	for b, br := range op.branches {
		sub := br.Outputs[0].Graph()
		var ys, seeds []*graph.Node
		for _, j := range seeded {
			y := br.Outputs[j]
			ys = append(ys, y)
			seeds = append(seeds, sub.Input(fmt.Sprintf("grad_out%d", j), y.DType(), y.Shape()...))
		}
		var wrt []*graph.Node
		var wrtOf []int // per wanted input: its index in wrt, or -1 for another branch's capture
		for _, i := range wanted {
			k := op.branchInput(b, i)
			if k < 0 {
				wrtOf = append(wrtOf, -1)
				continue
			}
			wrtOf = append(wrtOf, len(wrt))
			wrt = append(wrt, br.Inputs[k])
		}
		var grads []*graph.Node
		if len(wrt) > 0 {
			var err error
			if grads, err = ctx.Differentiate(ys, seeds, wrt); err != nil {
				op.branchFailed(ctx, b, err)
				return nil
			}
		}
		outs := make([]*graph.Node, len(wanted))
		for n, i := range wanted {
			if wrtOf[n] < 0 {
				outs[n] = sub.Const(graph.NewDenseOf(inputs[i].Type()))
			} else {
				outs[n] = grads[wrtOf[n]]
			}
		}
		if err := captureOutputs(sub, "the gradient of the "+branchNames[b]+" branch", outs); err != nil {
			ctx.Errorf("%w", traced(err))
			return nil
		}
		if err := sub.Err(); err != nil {
			op.branchFailed(ctx, b, err)
			return nil
		}
		o, captured := sub.Captures()
		back.branches[b] = &graph.Subgraph{Inputs: slices.Concat(br.Inputs[:N], seeds, captured), Outputs: outs}
		back.captures[b] = len(captured)
		outer = append(outer, o...)
	}
	in := append([]*graph.Node{inputs[0]}, inputs[1:1+N]...)
	for _, j := range seeded {
		in = append(in, gradOuts[j])
	}
	res := graph.ApplyMulti(back, append(in, outer...)...)
	if err := res[0].Err(); err != nil {
		ctx.Errorf("%w", traced(err))
		return nil
	}
	for n, i := range wanted {
		out[i] = res[n]
	}
	return out
}

// branchGradError is the error differentiating a Cond's branch: what it
// says, and the branch's own error (cause), which a loop whose step is
// the Cond (gate: a While's) reports as its body's (see scanOp.bodyCause).
type branchGradError struct {
	msg   string
	cause error
	gate  bool
}

func (e *branchGradError) Error() string { return e.msg }

func (e *branchGradError) Unwrap() error { return e.cause }

// branchFailed records on ctx that differentiating branch b failed with
// err.
func (op *condOp) branchFailed(ctx *graph.GradContext, b int, err error) {
	msg := fmt.Sprintf("differentiating the %s branch: %v", branchNames[b], traced(err))
	ctx.Errorf("%w", &branchGradError{msg: msg, cause: err, gate: op.gate})
}

// branchInput is the input of branch b that op input i feeds, or -1 when
// i is a value only the other branch captured (or the predicate).
func (op *condOp) branchInput(b, i int) int {
	for k := range op.branches[b].Inputs {
		if op.input(b, k) == i {
			return k
		}
	}
	return -1
}

// JVP builds a Cond's tangents as another Cond on the same predicate,
// whose branches push tangents through the corresponding branches (built
// in each branch's own graph by the driver's sweep), reading the
// operands, their tangents as further operands, and the captured values'
// tangents. Batched tangents keep their direction axis in front. Being a
// Cond, the result is differentiated again the same way.
func (op *condOp) JVP(ctx *graph.JVPContext) []*graph.Node {
	inputs := ctx.Inputs()
	N := op.operands
	res := make([]*graph.Node, len(op.branches[0].Outputs))
	var floatOuts []int
	for j, y := range op.branches[0].Outputs {
		if graph.IsFloat(y.DType()) {
			floatOuts = append(floatOuts, j)
		}
	}
	var tangentOps []int // operands with a tangent
	for i := range N {
		if t := ctx.Tangent(1 + i); t != nil && graph.IsFloat(inputs[1+i].DType()) {
			tangentOps = append(tangentOps, i)
		}
	}
	if len(floatOuts) == 0 {
		return res
	}
	both := &condOp{operands: N + len(tangentOps)}
	var outer []*graph.Node
	for b, br := range op.branches {
		sub := br.Outputs[0].Graph()
		var xs, ts, tIns []*graph.Node
		for _, i := range tangentOps {
			x := br.Inputs[i]
			t := sub.Input(fmt.Sprintf("tangent_operand%d", i), x.DType(), ctx.Shape(x.Shape())...)
			xs, ts, tIns = append(xs, x), append(ts, t), append(tIns, t)
		}
		for k := N; k < len(br.Inputs); k++ {
			if t := ctx.Tangent(op.input(b, k)); t != nil && graph.IsFloat(br.Inputs[k].DType()) {
				xs, ts = append(xs, br.Inputs[k]), append(ts, sub.Capture(t))
			}
		}
		var ys []*graph.Node
		for _, j := range floatOuts {
			ys = append(ys, br.Outputs[j])
		}
		tys, err := ctx.Sweep(ys, xs, ts)
		if err == nil {
			err = captureOutputs(sub, "the tangents of the "+branchNames[b]+" branch", tys)
		}
		if err != nil || sub.Err() != nil {
			ctx.Decline()
			return nil
		}
		o, captured := sub.Captures()
		both.branches[b] = &graph.Subgraph{Inputs: slices.Concat(br.Inputs[:N], tIns, captured), Outputs: tys}
		both.captures[b] = len(captured)
		outer = append(outer, o...)
	}
	in := append([]*graph.Node{inputs[0]}, inputs[1:1+N]...)
	for _, i := range tangentOps {
		in = append(in, ctx.Tangent(1+i))
	}
	out := graph.ApplyMulti(both, append(in, outer...)...)
	if err := out[0].Err(); err != nil {
		ctx.Decline()
		return nil
	}
	for n, j := range floatOuts {
		res[j] = out[n]
	}
	return res
}

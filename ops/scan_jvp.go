package ops

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// JVP builds a Scan's tangents as another Scan over the same steps, whose
// body runs this body and pushes its tangents forward beside it (built in
// the body's own graph by the driver's sweep): it carries the carries'
// tangents, sums the sums' terms' tangents, and outputs at each step the
// step outputs' tangents, reading each step's slice of the sequences'
// tangents and the captured values' tangents. Batched tangents keep their
// direction axis behind the step axis inside the loop. Being a Scan, the
// result is differentiated again the same way.
func (op *scanOp) JVP(ctx *graph.JVPContext) []*graph.Node {
	body := op.body
	C, A, S := op.carries, op.sums, op.seqs
	Y := len(body.Outputs) - 2*C - A
	inputs, outputs := ctx.Inputs(), ctx.Outputs()
	res := make([]*graph.Node, len(outputs))
	if len(body.Inputs) == 0 {
		return res
	}
	sub := body.Inputs[0].Graph()
	g := ctx.Graph()
	k := ctx.Batch()
	isFloat := func(n *graph.Node) bool { return graph.IsFloat(n.DType()) }
	// shape of a tangent in the body; steps swaps a sequence's batch and
	// step axes, to and from the loop's order.
	bodyShape := func(n *graph.Node) []int { return ctx.Shape(n.Shape()) }
	steps := func(t *graph.Node) *graph.Node {
		if k == 0 {
			return t
		}
		perm := make([]int, t.Type().Rank())
		for i := range perm {
			perm[i] = i
		}
		perm[0], perm[1] = 1, 0
		return Transpose(t, perm...)
	}
	zeros := func(gr *graph.Graph, n *graph.Node) *graph.Node {
		return gr.Const(graph.NewDense(n.DType(), bodyShape(n)...))
	}

	// The body's inputs' tangents: new inputs for the float carries and
	// the sequences that have a tangent, captures of the captured values'.
	var xs, ts []*graph.Node
	var carryIns, carryInits []*graph.Node // per float carry
	var floatCarries []int
	for c := range C {
		if !isFloat(body.Inputs[c]) {
			continue
		}
		floatCarries = append(floatCarries, c)
		t := sub.Input(fmt.Sprintf("tangent_carry%d", c), body.Inputs[c].DType(), bodyShape(body.Inputs[c])...)
		xs, ts = append(xs, body.Inputs[c]), append(ts, t)
		carryIns = append(carryIns, t)
		init := ctx.Tangent(c)
		if init == nil {
			init = zeros(g, body.Inputs[c])
		}
		carryInits = append(carryInits, init)
	}
	var stepIns, seqs []*graph.Node
	for s := range S {
		i, b := C+A+s, C+s
		if ctx.Tangent(i) == nil || !isFloat(body.Inputs[b]) {
			continue
		}
		t := sub.Input(fmt.Sprintf("tangent_x%d", s), body.Inputs[b].DType(), bodyShape(body.Inputs[b])...)
		xs, ts = append(xs, body.Inputs[b]), append(ts, t)
		stepIns, seqs = append(stepIns, t), append(seqs, steps(ctx.Tangent(i)))
	}
	for i := C + A + S; i < len(inputs); i++ {
		if t := ctx.Tangent(i); t != nil && isFloat(inputs[i]) {
			xs, ts = append(xs, body.Inputs[op.bodyInput(i)]), append(ts, sub.Capture(t))
		}
	}

	// The tangents of the new carries, the sums' terms and the float step
	// outputs.
	var ys []*graph.Node
	for _, c := range floatCarries {
		ys = append(ys, body.Outputs[c])
	}
	ys = append(ys, body.Outputs[C:C+A]...)
	var floatYs []int
	for j := C + A; j < C+A+Y; j++ {
		if isFloat(body.Outputs[j]) && !op.skipped(j) {
			floatYs = append(floatYs, j)
			ys = append(ys, body.Outputs[j])
		}
	}
	tys, err := ctx.Sweep(ys, xs, ts)
	if err != nil {
		ctx.Decline()
		return nil
	}
	tCarry, tTerms, tYs := tys[:len(floatCarries)], tys[len(floatCarries):len(floatCarries)+A], tys[len(floatCarries)+A:]
	sumInits := make([]*graph.Node, A)
	for a := range A {
		if sumInits[a] = ctx.Tangent(C + a); sumInits[a] == nil {
			sumInits[a] = zeros(g, body.Outputs[C+a])
		}
	}
	if err := sub.Err(); err != nil {
		ctx.Decline()
		return nil
	}

	// The loop of both: this Scan's inputs and outputs, then the tangents'.
	carries := append(append([]*graph.Node(nil), body.Inputs[:C]...), carryIns...)
	stepNodes := append(append([]*graph.Node(nil), body.Inputs[C:C+S]...), stepIns...)
	newCarry := append(append([]*graph.Node(nil), body.Outputs[:C]...), tCarry...)
	terms := append(append([]*graph.Node(nil), body.Outputs[C:C+A]...), tTerms...)
	stepYs := append(append([]*graph.Node(nil), body.Outputs[C+A:C+A+Y]...), tYs...)
	outer, captured := sub.Captures()
	both := newScanOp(carries, stepNodes, captured, newCarry, terms, stepYs, op.steps, op.reverse)
	both.until, both.skipBy = op.until, op.skipBy // the same step output and sequence
	both.builder = op.userLoop()
	in := append(append([]*graph.Node(nil), inputs[:C]...), carryInits...)
	in = append(append(in, inputs[C:C+A]...), sumInits...)
	in = append(append(in, inputs[C+A:C+A+S]...), seqs...)
	out := graph.ApplyMulti(both, append(in, outer...)...)
	if err := out[0].Err(); err != nil {
		ctx.Decline()
		return nil
	}
	C2, A2, Y2 := C+len(floatCarries), 2*A, Y+len(floatYs)
	for f, c := range floatCarries {
		res[c] = out[C+f]                       // final carry
		res[C+A+Y+c] = steps(out[C2+A2+Y2+C+f]) // history
	}
	for a := range A {
		res[C+a] = out[C2+A+a]
	}
	for n, j := range floatYs {
		res[j] = steps(out[C2+A2+Y+n])
	}
	return res
}

package onnx

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
)

// ONNX's If and Loop. If is ops.Cond: the values of the enclosing graphs
// its branches read by name are passed as the Cond's operands, so that
// only the branch taken computes on them. Loop with a trip count known at
// import is ops.Scan of that many steps, ended by Until when its body's
// condition may turn false.
func init() {
	register(map[string]importFunc{"If": importIf, "Loop": importLoop})
	accept(map[string]attrs{"If": {"then_branch": {}, "else_branch": {}}, "Loop": {"body": {}}})
}

func importIf(c *nodeContext) ([]*graph.Node, error) {
	pred, err := c.input(0)
	if err != nil {
		return nil, err
	}
	then, els := c.attr("then_branch").GetG(), c.attr("else_branch").GetG()
	if then == nil || els == nil {
		return nil, errors.New("then_branch or else_branch is missing")
	}
	if len(then.GetOutput()) != len(els.GetOutput()) {
		return nil, fmt.Errorf("then_branch has %d outputs and else_branch %d", len(then.GetOutput()), len(els.GetOutput()))
	}
	if pred.Type().Size() != 1 {
		return nil, fmt.Errorf("the condition has type %v: it must hold one value", pred.Type())
	}
	names := outerNames(c.im, then, els)
	if pred.Kind() == graph.KindConst { // the branch taken is known: import it alone
		gp := els
		if graph.Float64s(pred.Value())[0] != 0 {
			gp = then
		}
		return c.im.subgraphIn(c.g(), gp, nil)
	}
	if err := sameOutputShapes(then, els); err != nil {
		return nil, err
	}
	// pred is operand 0, so that a branch reading nothing knows its graph.
	operands := []*graph.Node{pred}
	for _, name := range names {
		operands = append(operands, c.im.lookup(name))
	}
	var branchErr error
	branch := func(gp *onnxpb.GraphProto, which string) ops.CondBranch {
		return func(in []*graph.Node) []*graph.Node {
			bound := map[string]*graph.Node{}
			for i, name := range names {
				bound[name] = in[i+1]
			}
			outs, err := c.im.subgraphIn(in[0].Graph(), gp, bound)
			if err != nil && branchErr == nil {
				branchErr = fmt.Errorf("%s: %v", which, err)
			}
			return outs
		}
	}
	outs := ops.Cond(pred, branch(then, "then_branch"), branch(els, "else_branch"), operands)
	if branchErr != nil {
		return nil, branchErr
	}
	if err := c.g().Err(); err != nil {
		return nil, err
	}
	return slices.Clone(outs), nil
}

// sameOutputShapes refuses branches whose outputs' declared shapes differ:
// ONNX allows it, nabla's Cond gives one type per output.
func sameOutputShapes(then, els *onnxpb.GraphProto) error {
	for i, a := range then.GetOutput() {
		da, db := staticDims(a), staticDims(els.GetOutput()[i])
		if da != nil && db != nil && !slices.Equal(da, db) {
			return unsupported("If whose branches give output %d shapes %v (then_branch) and %v (else_branch): nabla's Cond needs both branches to give the same types", i, da, db)
		}
	}
	return nil
}

// staticDims returns a value's declared dimensions, or nil when its shape
// is not declared or not static.
func staticDims(v *onnxpb.ValueInfoProto) []int64 {
	shape := v.GetType().GetTensorType().GetShape()
	if shape == nil {
		return nil
	}
	dims := []int64{}
	for _, d := range shape.GetDim() {
		if _, ok := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); !ok {
			return nil
		}
		dims = append(dims, d.GetDimValue())
	}
	return dims
}

// outerNames returns the names of the enclosing graphs' values the graphs
// read (in their nested graphs too), in the order first read.
func outerNames(im *importer, gps ...*onnxpb.GraphProto) []string {
	var names []string
	seen := map[string]bool{}
	var walk func(gp *onnxpb.GraphProto, local map[string]bool)
	walk = func(gp *onnxpb.GraphProto, outer map[string]bool) {
		local := map[string]bool{}
		for name := range outer {
			local[name] = true
		}
		for _, in := range gp.GetInput() {
			local[in.GetName()] = true
		}
		for _, t := range gp.GetInitializer() {
			local[t.GetName()] = true
		}
		for _, n := range gp.GetNode() {
			for _, o := range n.GetOutput() {
				local[o] = true
			}
		}
		read := func(name string) {
			if name != "" && !local[name] && !seen[name] && im.defines(name) {
				seen[name] = true
				names = append(names, name)
			}
		}
		for _, n := range gp.GetNode() {
			for _, in := range n.GetInput() {
				read(in)
			}
			for _, a := range n.GetAttribute() {
				for _, sub := range append([]*onnxpb.GraphProto{a.GetG()}, a.GetGraphs()...) {
					if sub != nil {
						walk(sub, local)
					}
				}
			}
		}
		for _, o := range gp.GetOutput() {
			read(o.GetName())
		}
	}
	for _, gp := range gps {
		walk(gp, nil)
	}
	return names
}

// importLoop imports Loop (inputs M, cond, the carried values; body
// inputs the iteration number, the condition and the carried values;
// body outputs the condition, the carried values and the scan outputs).
// The body runs while the condition holds: Until's predicate, which ends
// the loop, is its negation.
func importLoop(c *nodeContext) ([]*graph.Node, error) {
	body := c.attr("body").GetG()
	if body == nil {
		return nil, errors.New("no body graph")
	}
	m := c.optional(0)
	if m == nil {
		return nil, unsupported("Loop without a trip count M: nabla's loops need a bound known at import")
	}
	if m.Kind() != graph.KindConst {
		return nil, unsupported("Loop whose trip count M (%v) is computed at run time: nabla's loops need a bound known at import (a constant, or computed from constants and shapes)", m.Type())
	}
	ms := denseInts(m.Value())
	if len(ms) != 1 {
		return nil, fmt.Errorf("the trip count M holds %d values, want 1", len(ms))
	}
	steps := ms[0]
	init := slices.Clone(c.in[min(2, len(c.in)):])
	for i, v := range init {
		if v == nil {
			return nil, fmt.Errorf("loop-carried input %d is missing", i)
		}
	}
	nV := len(init)
	if len(body.GetInput()) != 2+nV || len(body.GetOutput()) < 1+nV {
		return nil, fmt.Errorf("the body has %d inputs and %d outputs for %d loop-carried values", len(body.GetInput()), len(body.GetOutput()), nV)
	}
	nScan := len(body.GetOutput()) - 1 - nV
	until := !alwaysContinues(body)
	if until && nScan > 0 {
		return nil, unsupported("Loop with scan outputs and a condition that may end it early: ONNX stacks as many rows as steps taken, known only at run time, and nabla's stacked outputs need a length known at import")
	}
	cond := c.optional(1)
	if cond == nil || cond.Kind() == graph.KindConst {
		if cond != nil && graph.Float64s(cond.Value())[0] == 0 {
			steps = 0
		}
		return loop(c, c.g(), body, steps, until, init)
	}
	// The first step runs when the initial condition holds: a Cond on it,
	// whose else branch returns the initial values.
	if nScan > 0 {
		return nil, unsupported("Loop with scan outputs whose initial condition is computed at run time: ONNX stacks zero rows or M, and nabla's stacked outputs need a length known at import")
	}
	if cond.Type().Size() != 1 {
		return nil, fmt.Errorf("the initial condition has type %v: it must hold one value", cond.Type())
	}
	// cond is operand 0, so that the branches know their graph.
	var loopErr error
	outs := ops.Cond(cond, func(in []*graph.Node) []*graph.Node {
		outs, err := loop(c, in[0].Graph(), body, steps, until, in[1:])
		if err != nil {
			loopErr = err
		}
		return outs
	}, func(in []*graph.Node) []*graph.Node {
		outs := make([]*graph.Node, len(in)-1)
		for i, v := range in[1:] {
			outs[i] = ops.Identity(v)
		}
		return outs
	}, append([]*graph.Node{cond}, init...))
	if loopErr != nil {
		return nil, loopErr
	}
	if err := c.g().Err(); err != nil {
		return nil, err
	}
	return slices.Clone(outs), nil
}

// loop builds Loop's steps in g from the carried values init: a Scan of
// steps steps over the iteration numbers, ended by Until when the body's
// condition output may turn false.
func loop(c *nodeContext, g *graph.Graph, body *onnxpb.GraphProto, steps int, until bool, init []*graph.Node) ([]*graph.Node, error) {
	nV, nScan := len(init), len(body.GetOutput())-1-len(init)
	if steps <= 0 {
		if nScan > 0 {
			return nil, unsupported("Loop of zero steps with scan outputs (empty outputs of unknown shape)")
		}
		return init, nil
	}
	// The iteration numbers are a constant of steps values: a trip count
	// of 2⁴⁰ must be refused before they are allocated.
	if _, err := shapeOf([]int64{int64(steps)}, graph.Int64); err != nil {
		return nil, fmt.Errorf("trip count %d: %v", steps, err)
	}
	iters := make([]int64, steps)
	for i := range iters {
		iters[i] = int64(i)
	}
	t, err := graph.FromInt64s(graph.Int64, iters, steps)
	if err != nil {
		return nil, err
	}
	var opts []ops.ScanOption
	if until {
		opts = append(opts, ops.Until())
	}
	var bodyErr error
	final, ys := ops.Scan(func(carry, xs []*graph.Node) ([]*graph.Node, []*graph.Node) {
		// The body runs only while the condition holds: its input is true.
		in := append([]*graph.Node{xs[0], xs[0].Graph().Scalar(1, graph.Float32)}, carry...)
		outs, err := c.im.subgraph(body, in)
		if err != nil {
			bodyErr = err
			return carry, nil
		}
		ys := slices.Clone(outs[1+nV:])
		if until {
			ys = append(ys, ops.Equal(outs[0], scalar(outs[0], 0)))
		}
		return outs[1 : 1+nV], ys
	}, init, []*graph.Node{g.Const(t)}, opts...)
	if bodyErr != nil {
		return nil, fmt.Errorf("body: %v", bodyErr)
	}
	if err := g.Err(); err != nil {
		return nil, err
	}
	if until {
		ys = ys[:len(ys)-1] // the number of steps taken
	}
	return slices.Concat(final, ys), nil
}

// alwaysContinues reports whether a Loop body's condition output is
// always true: its condition input passed through, or a true constant.
func alwaysContinues(body *onnxpb.GraphProto) bool {
	condIn, condOut := body.GetInput()[1].GetName(), body.GetOutput()[0].GetName()
	for range body.GetNode() { // follow Identity nodes back
		if condOut == condIn {
			return true
		}
		var from *onnxpb.NodeProto
		for _, n := range body.GetNode() {
			if slices.Contains(n.GetOutput(), condOut) {
				from = n
			}
		}
		if from == nil || from.GetOpType() != "Identity" || len(from.GetInput()) != 1 {
			return false
		}
		condOut = from.GetInput()[0]
	}
	return condOut == condIn
}

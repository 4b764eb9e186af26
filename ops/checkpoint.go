package ops

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// CheckpointFunc is the computation Checkpoint recomputes: its outputs
// from its inputs. It is called once, to build its nodes.
type CheckpointFunc func(inputs []*graph.Node) []*graph.Node

// Checkpoint computes f(inputs) and has reverse mode recompute f's
// intermediate values in the backward pass instead of keeping them from
// the forward pass, as jax.checkpoint and torch.utils.checkpoint do:
// memory for time. A program differentiating through it keeps f's inputs
// and outputs alive between the passes, but none of the values f computes
// in between; the gradient runs f again, from its inputs, just before
// differentiating it. Splitting a deep network into k segments, each a
// Checkpoint, keeps about k segment boundaries and one segment's values
// alive instead of every layer's, for one more forward pass.
//
// f is called once, in the graph of the inputs, and may read any node of
// that graph or of enclosing graphs besides its inputs, parameters
// included: gradients flow to those too. Its values are computed, at the
// forward pass, as if Checkpoint were not there; only the gradient
// differs, by recomputing them (so derivatives of every order, and the
// forward mode, are those of f). Values f computes from the parameters
// it reads alone, none of its inputs, may be kept rather than recomputed.
// f's random ops draw at the same step when recomputed, so they draw the
// same values.
//
// The memory saved is what the compiler's order of instructions leaves:
// a checkpointed segment's values live from its recomputation to the end
// of its gradient. In a training step, compile's fuse pass moves each
// parameter's update (and its gradient's product) up to the gradient it
// reads, so the recomputed values the products read die within their
// segment too; not where every update reads every gradient (clipping by
// their global norm), which keeps the products, and what they read, to
// the end.
//
// Checkpoint returns f's outputs, as many. An f that panics, builds an op
// that fails, returns no output, a nil or poisoned node, or makes
// parameters or inputs, is an error of Checkpoint's recorded on the graph,
// naming f's failing op and the caller's file:line.
func Checkpoint(f CheckpointFunc, inputs ...*graph.Node) []*graph.Node {
	s := graph.CallerSite()
	g := graph.Innermost(inputs...)
	outputs := 1 // how many nodes an error returns: as many as f returned, if more
	fail := func(format string, args ...any) []*graph.Node {
		return repeat(g.Fail(&graph.Error{Op: "Checkpoint", Err: fmt.Errorf(format, args...), Site: s}), outputs)
	}
	if len(inputs) == 0 {
		return fail("no inputs: f's values are recomputed from its inputs, give at least one")
	}
	for i, n := range inputs {
		if n == nil {
			if g == nil {
				g = firstGraph(inputs)
			}
			return fail("input %d is nil", i)
		}
	}
	if p := graph.Poisoned(inputs...); p != nil {
		return []*graph.Node{p}
	}
	if g == nil {
		g = inputs[0].Graph()
		return fail("inputs belong to unrelated graphs")
	}
	if f == nil {
		return fail("f is nil")
	}
	ins := make([]*graph.Node, len(inputs))
	for i, n := range inputs {
		ins[i] = g.Capture(n)
	}
	start := g.Len()
	var outs []*graph.Node
	var err error
	built := caught(g, "f", func() {
		outs, _, err = traceBody(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) { return f(c), nil }, ins, nil)
	})
	outputs = max(outputs, len(outs))
	switch {
	case built != nil:
		return fail("%w", built)
	case err != nil:
		return fail("f %v", err)
	case g.Err() != nil:
		return repeat(g.Fail(g.Err()), outputs)
	case len(outs) == 0:
		return fail("f returns no outputs")
	}
	outs = slices.Clone(outs)
	if err := captureOutputs(g, "f", outs); err != nil {
		return fail("%v", err)
	}
	read, err := tracedReads(g, start, ins, "f", "give values to Checkpoint as inputs, or read inputs made outside f")
	if err != nil {
		return fail("%v", err)
	}
	op := &checkpointOp{outputs: len(outs), inputs: len(ins)}
	return graph.ApplyMulti(op, slices.Concat(outs, ins, read)...)
}

// tracedReads returns the nodes, other than ins, that the nodes a
// function (named what) made from start on read, and the captures of
// values of enclosing graphs it made, refusing parameters and other
// inputs it made (advice says what to do instead of the latter).
func tracedReads(g *graph.Graph, start int, ins []*graph.Node, what, advice string) ([]*graph.Node, error) {
	_, captures := g.Captures()
	var read []*graph.Node
	for _, n := range g.Nodes()[start:] {
		switch {
		case n.Kind() == graph.KindParam:
			return nil, fmt.Errorf("%s makes parameter %v: make parameters outside %s and read them there", what, n, what)
		case n.Kind() == graph.KindInput && !slices.Contains(captures, n):
			return nil, fmt.Errorf("%s makes input %v: %s", what, n, advice)
		case n.Kind() == graph.KindInput:
			read = append(read, n) // a value of an enclosing graph the function read first
		}
		for _, x := range n.Inputs() {
			if x.ID() < start && !slices.Contains(ins, x) && !slices.Contains(read, x) {
				read = append(read, x)
			}
		}
	}
	return read, nil
}

// checkpointOp passes f's outputs through, and differentiates f by
// computing it again. Its inputs are f's outputs (M), its inputs (N) and
// the other nodes f read (K); its outputs are the first M inputs.
type checkpointOp struct {
	outputs, inputs int
}

func (op *checkpointOp) Name() string { return "Checkpoint" }

func (op *checkpointOp) Types(in []graph.Type) ([]graph.Type, error) {
	if len(in) < op.outputs+op.inputs {
		return nil, fmt.Errorf("%d inputs for %d outputs and %d inputs of f", len(in), op.outputs, op.inputs)
	}
	return slices.Clone(in[:op.outputs]), nil
}

func (op *checkpointOp) Forward(out, in []*tensor.Dense) error {
	for j := range out {
		graph.CopyValues(out[j], in[j])
	}
	return nil
}

// Backward computes f again, from its inputs, and differentiates that.
// The copy reads each input through recomputeOp, which also reads the
// outputs' gradient: so the recomputation runs once the gradient reaches
// it, in the backward pass, and shares no value with the forward pass.
// None of f's first values is read. f's outputs get no gradient: the inputs get theirs
// through the copy.
func (op *checkpointOp) Backward(ctx *graph.GradContext, gradOuts []*graph.Node) []*graph.Node {
	inputs := ctx.Inputs()
	M := op.outputs
	out := make([]*graph.Node, len(inputs))
	var ys, seeds []*graph.Node
	for j, gOut := range gradOuts {
		if gOut != nil && graph.IsFloat(inputs[j].DType()) {
			ys, seeds = append(ys, inputs[j]), append(seeds, gOut)
		}
	}
	var wanted []int
	for i := M; i < len(inputs); i++ {
		if ctx.NeedsGrad(i) && graph.IsFloat(inputs[i].DType()) && !slices.Contains(inputs[M:i], inputs[i]) {
			wanted = append(wanted, i)
		}
	}
	if len(ys) == 0 || len(wanted) == 0 {
		return out
	}
	// The copy reads through recomputeOp f's inputs, the computed values
	// it reads, and the leaves those are computed from: so no node of the
	// forward pass depends on a node the copy is differentiated with
	// respect to, and each gets its own partial derivative.
	var cut []*graph.Node
	for i, x := range inputs[M:] {
		if i < op.inputs || x.Kind() == graph.KindOp {
			cut = append(cut, x)
		}
	}
	upstream := ctx.Graph().Ancestors(cut)
	anchor := seeds[0]
	subst := map[*graph.Node]*graph.Node{}
	for _, x := range inputs[M:] {
		if _, ok := subst[x]; !ok && upstream[x.ID()] {
			subst[x] = graph.Apply(recomputeOp{}, x, anchor)
		}
	}
	again, err := graph.Replay(subst, ys...)
	if err != nil {
		ctx.Errorf("computing f again: %v", err)
		return nil
	}
	for j, y := range ys {
		if a, ok := again[y]; ok {
			ys[j] = a
		}
	}
	wrt := make([]*graph.Node, len(wanted))
	for n, i := range wanted {
		if wrt[n] = subst[inputs[i]]; wrt[n] == nil {
			wrt[n] = inputs[i]
		}
	}
	grads, err := ctx.Differentiate(ys, seeds, wrt)
	if err != nil {
		ctx.Errorf("differentiating f: %v", err)
		return nil
	}
	for n, i := range wanted {
		out[i] = grads[n]
	}
	return out
}

// JVP passes f's outputs' tangents through: the forward mode
// differentiates f's nodes themselves.
func (op *checkpointOp) JVP(ctx *graph.JVPContext) []*graph.Node {
	res := make([]*graph.Node, op.outputs)
	for j := range res {
		res[j] = ctx.Tangent(j)
	}
	return res
}

// recomputeOp is its first input, read once the second is computed: a
// recomputation's start, which differentiation passes through to the first
// input (the second gets no gradient). It may take its first input's
// buffer, the last reader of a checkpointed segment's input being its
// recomputation.
type recomputeOp struct{}

func (recomputeOp) Name() string { return "Recompute" }

func (recomputeOp) Type(in []graph.Type) (graph.Type, error) {
	if len(in) != 2 {
		return graph.Type{}, fmt.Errorf("%d inputs, want a value and the value it waits for", len(in))
	}
	return in[0], nil
}

func (recomputeOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return copyForward(out, in[0])
}

func (recomputeOp) InPlace() int { return 0 }

func (recomputeOp) Backward(_ *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{g, nil}
}

func (recomputeOp) JVP(c *graph.JVPContext) *graph.Node { return c.Tangent(0) }

package ops

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// WhileCond says whether a While loop takes another step from the carried
// state: it returns a node holding one value, nonzero to go on. It is
// called once, to build its graph.
type WhileCond func(carry []*graph.Node) *graph.Node

// WhileBody is one step of a While loop: the new state from the carried
// state, of the same types. It is called once, to build its graph.
type WhileBody func(carry []*graph.Node) []*graph.Node

// WhileOption configures While.
type WhileOption func(*whileConfig)

type whileConfig struct {
	maxSteps int
	given    bool
}

// MaxSteps bounds the number of steps a While loop takes; While requires
// it, a positive number.
func MaxSteps(n int) WhileOption { return func(c *whileConfig) { c.maxSteps, c.given = n, true } }

// While runs body on the carried state, from init, for as long as cond
// holds and at most MaxSteps times:
//
//	for steps = 0; steps < n && cond(carry); steps++ { carry = body(carry) }
//
// It returns the final carry (of init's types) and steps, the number of
// steps taken (an int64 scalar). The number of steps is decided at run
// time, by the values; MaxSteps(n), which While requires, bounds it.
// cond and body are built in graphs nested in the caller's, and may read
// any node of the enclosing graphs, as Scan's body does (and as for
// Scan, a vm.Runner traces them again at other batch sizes).
//
// While is a Scan of n steps (padding, as PyTensor's scan with until)
// whose step is a Cond: body while cond holds, else the carry unchanged.
// So it is differentiable to any order, in both modes, and its
// derivatives are those of the loop unrolled to the steps it took; its
// gradient stores n copies of the carry, as a Scan of n steps does. The
// loop stops at the first step where cond fails, its remaining slots
// filled with copies, and the loops of its derivatives (of any order,
// in either mode) skip those steps, knowing them to be the identity: the
// time is that of the steps taken, the memory that of n. Batched by
// compile.Vmap, it is one loop running while any example's cond holds,
// each example's carry frozen once its own cond fails: the time is that
// of the slowest example's steps for every example.
//
// A loop without MaxSteps or with MaxSteps(n ≤ 0), a body returning a
// carry of another type, a carry of rank graph.MaxRank (the loop stacks
// the carries over the steps), or a cond whose result holds more than one
// value is an error recorded on the graph, naming the caller's file:line.
func While(cond WhileCond, body WhileBody, init []*graph.Node, opts ...WhileOption) (final []*graph.Node, steps *graph.Node) {
	var cfg whileConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	s := graph.CallerSite()
	g := graph.Innermost(init...)
	fail := func(format string, args ...any) ([]*graph.Node, *graph.Node) {
		p := g.Fail(&graph.Error{Op: "While", Err: fmt.Errorf(format, args...), Site: s})
		return repeat(p, len(init)), p
	}
	for i, n := range init {
		if n == nil {
			if g == nil {
				g = firstGraph(init)
			}
			return fail("init %d is nil", i)
		}
	}
	if p := graph.Poisoned(init...); p != nil {
		return repeat(p, len(init)), p
	}
	switch {
	case g == nil && len(init) > 0:
		g = init[0].Graph()
		return fail("init belongs to unrelated graphs")
	case g == nil:
		return fail("no carry: give init")
	case !cfg.given:
		return fail("MaxSteps is missing: bound the loop with MaxSteps(n)")
	case cfg.maxSteps <= 0:
		return fail("MaxSteps(%d) is not positive", cfg.maxSteps)
	case flagsFit(cfg.maxSteps) != nil:
		return fail("MaxSteps(%d): %v", cfg.maxSteps, flagsFit(cfg.maxSteps))
	case cond == nil || body == nil:
		return fail("cond or body is nil")
	}
	if err := checkWhile(g, cond, body, typesOf(init)); err != nil {
		return fail("%v", err)
	}
	stay := func(c []*graph.Node) []*graph.Node { return c }
	final, _, steps = gatedScan(cond, CondBranch(body), stay, init, nil, scanConfig{steps: cfg.maxSteps, stepsOK: true, builder: "While"})
	return final, steps
}

// flagsFit says why a loop of up to steps steps cannot be built: the
// loop keeps a flag per step (at least 4 bytes each), which must fit in
// memory.
func flagsFit(steps int) error {
	if _, err := graph.Bytes(graph.Float32, []int{steps}, 0); err != nil {
		return fmt.Errorf("the loop keeps a flag per step: %v", err)
	}
	return nil
}

// checkWhile traces cond and body once in a graph of their own, nested in
// g, to check what they return before they are built into the loop.
func checkWhile(g *graph.Graph, cond WhileCond, body WhileBody, init []graph.Type) error {
	sub := g.NewSub()
	carry := make([]*graph.Node, len(init))
	for i, t := range init {
		carry[i] = sub.Input(fmt.Sprintf("carry%d", i), t.DType, t.Shape...)
	}
	var pred *graph.Node
	_, _, err := traceIn(sub, "cond", func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
		pred = cond(c)
		return nil, nil
	}, carry, nil)
	if err != nil {
		return err
	}
	if err := captureOutputs(sub, "cond", []*graph.Node{pred}); err != nil {
		return err
	}
	if pred.Type().Size() != 1 {
		return fmt.Errorf("cond returns a node of type %v: it must hold one value", pred.Type())
	}
	next, _, err := traceIn(sub, "body", func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) { return body(c), nil }, carry, nil)
	if err != nil {
		return err
	}
	if len(next) != len(init) {
		return fmt.Errorf("body returns %d carries for %d", len(next), len(init))
	}
	next = slices.Clone(next)
	if err := captureOutputs(sub, "body", next); err != nil {
		return err
	}
	for i, n := range next {
		if !n.Type().Equal(init[i]) {
			return fmt.Errorf("body returns carry %d of type %v, want init's %v", i, n.Type(), init[i])
		}
	}
	_, captured := sub.Captures()
	return checkBodyLeaves(sub, "body", "init", slices.Concat(carry, captured))
}

// untilKept marks the last step output of a Scan's body as a flag that,
// when zero, says the step kept its carry, so that every later step would
// compute what it did: the loop stops there, its remaining step outputs
// copies of that step's (the same values, without computing them). The
// derivatives' loops skip the steps flagged (see scanOp.skipBy).
func untilKept() ScanOption { return func(c *scanConfig) { c.until = true } }

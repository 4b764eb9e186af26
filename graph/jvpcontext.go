package graph

import "fmt"

// ForwardDifferentiable is implemented by ops with a forward-mode rule: a
// Jacobian–vector product built with graph ops. Ops without one still have
// forward mode, derived from their Backward (see compile.JVP); a rule is
// for speed, sparing the work that derivation leaves behind.
type ForwardDifferentiable interface {
	// JVP builds the output's tangent, Σ_i ∂out/∂in_i · ctx.Tangent(i),
	// from the inputs' tangents (nil where an input's tangent is zero).
	// It returns nil for a zero tangent. When ctx.Batch() is nonzero every
	// tangent carries a leading axis of that size, one direction per
	// entry; a rule that cannot handle that (or any other case) calls
	// ctx.Decline and the derivation from Backward is used instead.
	JVP(ctx *JVPContext) *Node
}

// MultiForwardDifferentiable is ForwardDifferentiable for multi-output
// ops: JVP returns one tangent per output, nil for a zero one.
type MultiForwardDifferentiable interface {
	JVP(ctx *JVPContext) []*Node
}

// TangentFree is implemented by ops whose outputs' tangents do not depend
// on the tangents of some of their inputs: inputs read for their values
// alone, as Root reads the solution its solve found. Forward mode gives
// such an input no tangent on the op's account, so that what computes it
// (a loop that is never differentiated) need not be differentiable, nor
// is it differentiated in vain.
type TangentFree interface {
	// TangentFree reports whether the tangents of the op's outputs
	// ignore input i's.
	TangentFree(i int) bool
}

// ForwardSweeper pushes tangents forward through any graph: the tangents
// of ys given those of xs (nil for zero), batched as the context's are.
// The forward-mode driver lends one to ops whose rule differentiates a
// subgraph they run (a loop's body).
type ForwardSweeper func(ys, xs, tangents []*Node) ([]*Node, error)

// JVPContext is what an op's forward rule sees: its inputs and output, the
// inputs' tangents, and whether those are batched.
type JVPContext struct {
	node     *Node
	tangents []*Node
	batch    int
	declined bool
	sweep    ForwardSweeper
	err      error
}

// WithSweeper lends s to the op's rule (see Sweep) and returns c. The
// forward-mode driver calls it.
func (c *JVPContext) WithSweeper(s ForwardSweeper) *JVPContext {
	if c != nil {
		c.sweep = s
	}
	return c
}

// Sweep returns the tangents of ys, nodes of any graph, given those of
// xs, through the driver's ForwardSweeper: what an op running a subgraph
// needs to build its rule from its body's tangents.
func (c *JVPContext) Sweep(ys, xs, tangents []*Node) ([]*Node, error) {
	if c == nil || c.sweep == nil {
		return nil, fmt.Errorf("no forward sweeper: build tangents with compile.JVP")
	}
	return c.sweep(ys, xs, tangents)
}

// NewJVPContext is called by the forward-mode driver: node is the op's
// output, tangents the tangents of its inputs (nil for zero), batch the
// number of directions carried along a leading axis (0: none).
func NewJVPContext(node *Node, tangents []*Node, batch int) *JVPContext {
	return &JVPContext{node: node, tangents: tangents, batch: batch}
}

// Graph returns the graph being differentiated (nil for a nil context).
func (c *JVPContext) Graph() *Graph { return c.Output().Graph() }

// Input returns input i (nil when there is none).
func (c *JVPContext) Input(i int) *Node { return nodeAt(c.Inputs(), i) }

// Inputs returns the op's input nodes.
func (c *JVPContext) Inputs() []*Node { return c.Output().Inputs() }

// Output returns the op's output node (the first, for a multi-output op).
func (c *JVPContext) Output() *Node {
	if c == nil {
		return nil
	}
	return c.node
}

// Outputs returns all the op's output nodes.
func (c *JVPContext) Outputs() []*Node { return c.Output().Outputs() }

// Tangent returns input i's tangent, nil where it is zero (or there is no
// input i): of the input's type, or with a leading axis of Batch()
// directions.
func (c *JVPContext) Tangent(i int) *Node {
	if c == nil {
		return nil
	}
	return nodeAt(c.tangents, i)
}

// Batch returns the number of directions the tangents carry along their
// leading axis, or 0 when they have their primal's type.
func (c *JVPContext) Batch() int {
	if c == nil {
		return 0
	}
	return c.batch
}

// Axis maps axis a of a primal value (negative counts from the end of
// rank) to the same axis of its tangent.
func (c *JVPContext) Axis(a, rank int) int {
	if a < 0 {
		a += rank
	}
	if c.Batch() > 0 {
		return a + 1
	}
	return a
}

// Shape returns the shape of a tangent whose primal has shape: shape
// itself, or with the batch size in front.
func (c *JVPContext) Shape(shape []int) []int {
	if c.Batch() == 0 {
		return shape
	}
	return append([]int{c.batch}, shape...)
}

// Decline says the rule cannot build this tangent (a case it does not
// handle, such as batched tangents of an operand of the highest rank the op
// takes): the driver derives it from the op's Backward instead. The rule's
// return value is then ignored.
func (c *JVPContext) Decline() {
	if c != nil {
		c.declined = true
	}
}

// Declined reports whether the rule called Decline (true for a nil
// context, which has no tangent to build).
func (c *JVPContext) Declined() bool { return c == nil || c.declined }

// Errorf records that the tangent cannot be built (what the op
// differentiates has no derivative, say); the driver reports it as its
// error, naming the op, and ignores the rule's return value.
func (c *JVPContext) Errorf(format string, args ...any) {
	if c != nil && c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
}

// Err returns the error recorded by Errorf, if any.
func (c *JVPContext) Err() error {
	if c == nil {
		return nil
	}
	return c.err
}

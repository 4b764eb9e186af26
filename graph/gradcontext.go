package graph

import "fmt"

// GradContext is what an op's Backward sees: its inputs and outputs (the
// forward values it may reuse, PyTorch's saved tensors, are these nodes) and
// which inputs need a gradient.
type GradContext struct {
	node   *Node
	inputs []*Node // the inputs Backward sees: node's, or its first few for a composite
	needs  []bool
	err    error
	diff   Differentiator
}

// Differentiator computes vector–Jacobian products inside any graph: the
// gradients with respect to wrt of sum_i <seeds[i], ys[i]>, zero for a wrt
// node no output depends on. The differentiation driver lends one to ops
// whose gradient differentiates a subgraph they run (a loop's body).
type Differentiator func(ys, seeds, wrt []*Node) ([]*Node, error)

// WithDifferentiator lends d to the op's Backward (see Differentiate) and
// returns c. The differentiation driver calls it.
func (c *GradContext) WithDifferentiator(d Differentiator) *GradContext {
	if c != nil {
		c.diff = d
	}
	return c
}

// Differentiate returns vector–Jacobian products of nodes of any graph,
// through the driver's Differentiator: what an op running a subgraph needs
// to build its gradient from its body's.
func (c *GradContext) Differentiate(ys, seeds, wrt []*Node) ([]*Node, error) {
	if c == nil || c.diff == nil {
		return nil, fmt.Errorf("no differentiator: build gradients with compile.Grad")
	}
	return c.diff(ys, seeds, wrt)
}

// NewGradContext is called by the differentiation driver: node is the op
// node (any output of a multi-output op), needs[i] whether input i needs a
// gradient. For a nil or poisoned node the context has no inputs and its
// Err says so.
func NewGradContext(node *Node, needs []bool) *GradContext {
	if err := node.Err(); err != nil {
		return &GradContext{node: node, needs: needs, err: fmt.Errorf("NewGradContext: %w", err)}
	}
	return &GradContext{node: node, inputs: node.inputs, needs: needs}
}

// Graph returns the graph being differentiated, for building constants
// (nil for a nil context).
func (c *GradContext) Graph() *Graph {
	if c == nil {
		return nil
	}
	return c.node.Graph()
}

// Inputs returns the op's input nodes.
func (c *GradContext) Inputs() []*Node {
	if c == nil {
		return nil
	}
	return c.inputs
}

// Input returns input i (nil when there is none).
func (c *GradContext) Input(i int) *Node { return nodeAt(c.Inputs(), i) }

// Output returns the op's output node (the first, for a multi-output op).
func (c *GradContext) Output() *Node { return c.Outputs()[0] }

// Outputs returns all the op's output nodes.
func (c *GradContext) Outputs() []*Node {
	if c == nil {
		return []*Node{nil}
	}
	return c.node.Outputs()
}

// NeedsGrad reports whether input i needs a gradient; Backward may return
// nil for inputs that do not, and skip building their gradient.
func (c *GradContext) NeedsGrad(i int) bool {
	return c != nil && i >= 0 && i < len(c.needs) && c.needs[i]
}

// Errorf records that the gradient cannot be built (the op cannot be
// differentiated here, say); the driver reports it as its error.
func (c *GradContext) Errorf(format string, args ...any) {
	if c != nil && c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
}

// Err returns the error recorded by Errorf, if any.
func (c *GradContext) Err() error {
	if c == nil {
		return fmt.Errorf("nabla: the gradient context is nil")
	}
	return c.err
}

// nodeAt returns nodes[i], or nil when i is out of range.
func nodeAt(nodes []*Node, i int) *Node {
	if i < 0 || i >= len(nodes) {
		return nil
	}
	return nodes[i]
}

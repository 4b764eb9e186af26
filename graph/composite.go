package graph

import (
	"fmt"

	"gorgonia.org/tensor"
)

// CompositeOp is an op whose forward is a subgraph of existing ops and whose
// gradient is its own (JAX's custom_vjp): a numerically stable gradient
// where differentiating the subgraph would overflow, or a clipped one. It
// needs no kernel: ApplyComposite builds the subgraph with Build.
type CompositeOp interface {
	// Name names the op in errors and DOT; the subgraph is built in a scope
	// of this name.
	Name() string
	// Build builds the forward computation from the inputs with graph ops
	// and returns its output.
	Build(in []*Node) *Node
	// Backward is Differentiable's: it builds, with graph ops, the gradient
	// with respect to each input given gradOut. ctx.Inputs are the inputs
	// Build was given and ctx.Output the composite's output. When it is
	// built from differentiable ops, the composite can be differentiated to
	// any order.
	Backward(ctx *GradContext, gradOut *Node) []*Node
}

// ApplyComposite builds op's subgraph on inputs and returns a node whose
// value is the subgraph's output but whose gradient is op's Backward:
// differentiation never looks inside the subgraph. Errors are sticky, as
// with Apply; a Build that panics or returns nil is reported as an error.
func ApplyComposite(op CompositeOp, inputs ...*Node) *Node {
	s := callers()
	if op == nil || Poisoned(inputs...) != nil {
		// apply reports the nil op or the nil or poisoned input.
		var wrapped Op
		if op != nil {
			wrapped = compositeOp{op}
		}
		return apply(nil, wrapped, nil, inputs, s)[0]
	}
	var g *Graph
	if len(inputs) > 0 {
		g = inputs[0].g
	}
	name, nameErr := opName(compositeOp{op}, nil)
	if g == nil {
		return &Node{err: newError(name, s, "no graph: a composite needs at least one input")}
	}
	if g.err != nil {
		return &Node{g: g, err: g.err}
	}
	if nameErr != nil {
		return g.fail(name, s, "%v", nameErr)
	}
	out, err := buildComposite(g, name, op, inputs)
	if err != nil {
		return g.fail(name, s, "%v", err)
	}
	return apply(g, compositeOp{op}, nil, append(inputs[:len(inputs):len(inputs)], out), s)[0]
}

// buildComposite runs the user's Build in a scope named after the op,
// turning a panic or a nil result into an error.
func buildComposite(g *Graph, name string, op CompositeOp, inputs []*Node) (out *Node, err error) {
	defer g.Scope(name)()
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("Build panicked: %v", r)
		}
	}()
	out = op.Build(append([]*Node(nil), inputs...))
	if out == nil {
		return nil, fmt.Errorf("Build returned a nil node")
	}
	return out, out.Err()
}

// compositeOp is the node ApplyComposite adds over (inputs..., subgraph
// output): its value is the subgraph's output, its gradient the user's
// Backward, and the subgraph gets none.
type compositeOp struct {
	op CompositeOp
}

func (c compositeOp) Name() string { return c.op.Name() }

// Type is the subgraph output's type.
func (c compositeOp) Type(in []Type) (Type, error) {
	if len(in) == 0 {
		return Type{}, fmt.Errorf("no subgraph output")
	}
	return in[len(in)-1], nil
}

// Forward copies the subgraph's output.
func (c compositeOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	if len(in) == 0 {
		return fmt.Errorf("no subgraph output to copy")
	}
	CopyValues(out, in[len(in)-1])
	return nil
}

// Backward calls the user's Backward with a context that shows only the
// inputs Build was given, and returns no gradient for the subgraph output.
func (c compositeOp) Backward(ctx *GradContext, gradOut *Node) []*Node {
	n := len(ctx.Inputs()) - 1
	if n < 0 {
		ctx.Errorf("no subgraph output")
		return nil
	}
	inner := &GradContext{node: ctx.node, inputs: ctx.inputs[:n:n], needs: ctx.needs[:min(n, len(ctx.needs))]}
	grads := c.op.Backward(inner, gradOut)
	if inner.err != nil {
		ctx.Errorf("%v", inner.err)
	}
	if len(grads) != n {
		ctx.Errorf("Backward returned %d gradients for %d inputs", len(grads), n)
		return make([]*Node, n+1)
	}
	return append(grads[:n:n], nil)
}

// IsComposite reports whether op is the op ApplyComposite adds: its last
// input is the subgraph's output, which is its value.
func IsComposite(op Op) bool {
	_, ok := op.(compositeOp)
	return ok
}

package graph

import (
	"errors"
	"fmt"
	"slices"

	"gorgonia.org/tensor"
)

// Node is one value in a graph: a leaf or the result of an op. Nodes are
// immutable once built, except for their name. All methods are safe on a nil
// or poisoned node.
type Node struct {
	g      *Graph
	id     int
	kind   Kind
	op     Op      // single-output op, or nil
	multi  MultiOp // multi-output op, or nil
	index  int     // which output of multi this node is
	group  []*Node // all outputs of a multi-output application
	inputs []*Node
	typ    Type
	name   string
	scope  *Scope
	value  *tensor.Dense // a parameter's initial value or a constant's value
	site   site
	err    error // non-nil for a poisoned node
}

// Graph returns the graph the node belongs to (nil for a nil node).
func (n *Node) Graph() *Graph {
	if n == nil {
		return nil
	}
	return n.g
}

// ID is the node's index in its graph's creation order (-1 if poisoned).
func (n *Node) ID() int {
	if n == nil || n.err != nil {
		return -1
	}
	return n.id
}

// Err returns the error a poisoned node carries: the first error of its
// graph. It is nil for a healthy node.
func (n *Node) Err() error {
	if n == nil {
		return fmt.Errorf("nabla: nil node")
	}
	return n.err
}

// Kind tells whether the node is an input, a parameter, a constant or an op.
func (n *Node) Kind() Kind {
	if n == nil {
		return KindOp
	}
	return n.kind
}

// Op returns the node's single-output op (nil for leaves and outputs of
// multi-output ops).
func (n *Node) Op() Op {
	if n == nil {
		return nil
	}
	return n.op
}

// MultiOp returns the multi-output op this node is an output of, and which
// output it is; (nil, 0) otherwise.
func (n *Node) MultiOp() (MultiOp, int) {
	if n == nil {
		return nil, 0
	}
	return n.multi, n.index
}

// Outputs returns all outputs of the multi-output application this node
// belongs to; for any other node, just the node itself.
func (n *Node) Outputs() []*Node {
	if n == nil || n.group == nil {
		return []*Node{n}
	}
	return n.group
}

// BuilderName is the name of the function that built the node, for
// messages about its place in the user's code: its op's Builder where the
// op has one (ops.While builds a Scan op), else OpName.
func (n *Node) BuilderName() string {
	var op any
	if n != nil && n.op != nil {
		op = n.op
	} else if n != nil {
		op = n.multi
	}
	if b, ok := op.(Builder); ok && b.Builder() != "" {
		return b.Builder()
	}
	return n.OpName()
}

// OpName is the name of the node's op, or its kind for a leaf.
func (n *Node) OpName() string {
	switch {
	case n == nil:
		return "nil"
	case n.op != nil:
		return n.op.Name()
	case n.multi != nil:
		return n.multi.Name()
	}
	return n.kind.String()
}

// Inputs returns the node's inputs. The slice must not be modified.
func (n *Node) Inputs() []*Node {
	if n == nil {
		return nil
	}
	return n.inputs
}

// Type returns the node's dtype and shape (the zero Type if poisoned).
func (n *Node) Type() Type {
	if n == nil {
		return Type{}
	}
	return n.typ
}

// DType returns the node's dtype.
func (n *Node) DType() tensor.Dtype { return n.Type().DType }

// Shape returns a copy of the node's shape, which the caller may keep,
// modify or append to without touching the graph. Code that must not
// allocate (a machine's run) reads Type().Shape, which is shared and must
// not be modified.
func (n *Node) Shape() []int { return slices.Clone(n.Type().Shape) }

// Name returns the name given at build time or with SetName ("" if none).
func (n *Node) Name() string {
	if n == nil {
		return ""
	}
	return n.name
}

// SetName names the node (for DOT, errors and checkpoints) and returns it.
func (n *Node) SetName(name string) *Node {
	if n != nil && n.err == nil {
		n.name = name
	}
	return n
}

// Scope returns the scope the node was built in (nil at top level).
func (n *Node) Scope() *Scope {
	if n == nil {
		return nil
	}
	return n.scope
}

// Value returns a parameter's initial value or a constant's value; nil for
// other nodes. It must not be modified.
func (n *Node) Value() *tensor.Dense {
	if n == nil {
		return nil
	}
	return n.value
}

// Site is the user's file:line where the node was built, e.g. "model.go:42".
func (n *Node) Site() string {
	if n == nil {
		return ""
	}
	return n.site.String()
}

// String describes the node for messages: name or op, id and type.
func (n *Node) String() string {
	switch {
	case n == nil:
		return "<nil node>"
	case n.err != nil:
		return "<poisoned node>"
	case n.name != "":
		return fmt.Sprintf("%s %q #%d %v", n.OpName(), n.name, n.id, n.typ)
	}
	return fmt.Sprintf("%s #%d %v", n.OpName(), n.id, n.typ)
}

// Poisoned returns the first of nodes that is nil or poisoned, as a poisoned
// node carrying its error, or nil when all are healthy. Builders that look at
// their inputs' shapes before calling Apply use it to short-circuit. A nil
// node's error names the function the user called, as the outermost of
// nabla's functions calling Poisoned (else the function calling it), and
// the user's line: "nabla: LogDet: got a nil node for an input at
// model.go:42".
func Poisoned(nodes ...*Node) *Node {
	for _, n := range nodes {
		if n == nil {
			name, site := calledFunction()
			return &Node{err: &Error{Op: name, Err: errNilInput, Site: site}}
		}
		if n.err != nil {
			return n
		}
	}
	return nil
}

// errNilInput is what Poisoned says of a nil node.
var errNilInput = errors.New("got a nil node for an input")

package graph

import (
	"fmt"
	"math"
	"strings"

	"gorgonia.org/tensor"
)

// Graph is a static expression graph: an append-only list of nodes in
// creation (and so topological) order, plus the first build error, if any.
// A Graph is not safe for concurrent building.
type Graph struct {
	nodes []*Node
	err   error
	scope *Scope

	// A nested graph (NewSub) captures the nodes of enclosing graphs its
	// ops read.
	parent     *Graph
	captured   []*Node // nodes of enclosing graphs read, in order
	captureIns []*Node // the inputs standing for them
	captureOf  map[*Node]*Node

	gradients map[*Node]gradientResult // see RecordGradient
}

// New returns an empty graph.
func New() *Graph { return &Graph{} }

// Err returns the first error recorded while building the graph, or nil.
func (g *Graph) Err() error {
	if g == nil {
		return errNilGraph
	}
	return g.err
}

// errNilGraph is what a nil *Graph reports: building on one is a mistake
// to name, not a panic.
var errNilGraph = fmt.Errorf("nabla: the graph is nil: make one with graph.New")

// Nodes returns the graph's nodes in creation order. The slice must not be
// modified; nodes appended later are not in it.
func (g *Graph) Nodes() []*Node {
	if g == nil {
		return nil
	}
	return g.nodes[:len(g.nodes):len(g.nodes)]
}

// Len is the number of nodes in the graph.
func (g *Graph) Len() int {
	if g == nil {
		return 0
	}
	return len(g.nodes)
}

// Node returns the node with the given ID, or nil.
func (g *Graph) Node(id int) *Node {
	if g == nil {
		return nil
	}
	if id < 0 || id >= len(g.nodes) {
		return nil
	}
	return g.nodes[id]
}

// Fail records err on the graph (if it has no error yet) and returns a
// poisoned node carrying the graph's first error. Packages that build on
// the graph (compile, nn) use it to report a mistake found while building.
func (g *Graph) Fail(err error) *Node {
	if g == nil {
		return &Node{err: err}
	}
	if g.err == nil {
		g.err = err
	}
	return &Node{g: g, err: g.err}
}

// Catch calls build, a function of the user's that a builder runs on g
// (ops.Checkpoint's f, ops.Root's solve), and returns the first error
// build's ops recorded on g, or on a graph enclosing it, that had none:
// Catch takes that error off the graphs again, so that the builder
// records its own in its place, naming the user's function ("nabla:
// Checkpoint: f: Add at model.go:43: …"). The nodes build made keep the
// error they carry. Catch returns nil when build recorded none, or when
// the graphs had their error before.
func (g *Graph) Catch(build func()) error {
	var clean []*Graph // the graphs with no error before build
	for h := g; h != nil; h = h.parent {
		if h.err == nil {
			clean = append(clean, h)
		}
	}
	build()
	var err error
	for _, h := range clean {
		if err == nil {
			err = h.err
		}
		h.err = nil
	}
	return err
}

func (g *Graph) fail(op string, s site, format string, args ...any) *Node {
	return g.Fail(newError(op, s, format, args...))
}

// Scope is a named group of nodes, nested by its parent (nn modules and
// differentiation name theirs); DOT export draws scopes as clusters.
type Scope struct {
	Name   string
	Parent *Scope
}

// Path is the scope's full name, outermost first, joined with "/".
func (s *Scope) Path() string {
	if s == nil {
		return ""
	}
	if s.Parent == nil {
		return s.Name
	}
	return s.Parent.Path() + "/" + s.Name
}

// Scope opens a scope named name, nested in the current one: nodes built
// until the returned function is called belong to it.
//
//	defer g.Scope("encoder")()
func (g *Graph) Scope(name string) (end func()) {
	if g == nil {
		return func() {}
	}
	outer := g.scope
	g.scope = &Scope{Name: name, Parent: outer}
	return func() { g.scope = outer }
}

// CurrentScope returns the scope new nodes are recorded in (nil at top level).
func (g *Graph) CurrentScope() *Scope {
	if g == nil {
		return nil
	}
	return g.scope
}

// Kind tells leaves from op nodes.
type Kind uint8

// The kinds of node.
const (
	KindOp    Kind = iota // the result of applying an op
	KindInput             // fed at each run
	KindParam             // lives in the machine across runs
	KindConst             // known when the graph is built
)

// String is the kind's name: "op", "input", "param" or "const".
func (k Kind) String() string {
	names := [...]string{"op", "input", "param", "const"}
	if int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

func (g *Graph) add(n *Node) *Node {
	n.g = g
	n.id = len(g.nodes)
	n.scope = g.scope
	g.nodes = append(g.nodes, n)
	return n
}

// Input adds a node fed with a value of the given dtype and shape at each run.
func (g *Graph) Input(name string, dtype tensor.Dtype, shape ...int) *Node {
	s := callers()
	if g == nil || g.err != nil {
		return &Node{g: g, err: g.Err()}
	}
	t := TypeOf(dtype, shape...)
	if err := checkLeafType(t); err != nil {
		return g.fail("Input", s, "%q: %v", name, err)
	}
	return g.add(&Node{kind: KindInput, typ: t, name: name, site: s})
}

// Param adds a parameter: a value that lives in the machine across runs,
// starting at a copy of init. Parameters are what training updates.
func (g *Graph) Param(name string, init *tensor.Dense) *Node {
	return g.leaf(KindParam, "Param", name, init, callers())
}

// Const adds a constant holding a copy of value.
func (g *Graph) Const(value *tensor.Dense) *Node {
	return g.leaf(KindConst, "Const", "", value, callers())
}

// Scalar adds a scalar constant of the given dtype; for an integer dtype,
// v must be an integer the dtype holds.
func (g *Graph) Scalar(v float64, dtype tensor.Dtype) *Node {
	s := callers()
	if g == nil || g.err != nil {
		return &Node{g: g, err: g.Err()}
	}
	if err := checkDType(dtype); err != nil {
		return g.fail("Scalar", s, "%v", err)
	}
	if IsInteger(dtype) && !fitsInteger(v, dtype) {
		return g.fail("Scalar", s, "%v is not an integer that %v holds", v, dtype)
	}
	t := NewDense(dtype)
	SetFloat(t, 0, v)
	return g.add(&Node{kind: KindConst, typ: TypeOf(dtype), value: t, site: s})
}

func (g *Graph) leaf(kind Kind, builder, name string, value *tensor.Dense, s site) *Node {
	if g == nil || g.err != nil {
		return &Node{g: g, err: g.Err()}
	}
	if value == nil {
		return g.fail(builder, s, "%q: value is nil", name)
	}
	t := TypeOf(value.Dtype(), value.Shape()...)
	if err := checkLeafType(t); err != nil {
		return g.fail(builder, s, "%q: %v", name, err)
	}
	if kind == KindParam && !IsFloat(t.DType) {
		return g.fail(builder, s, "%q is %v: parameters are float32 or float64, since training differentiates them; "+
			"hold integer values in an Input or a Const", name, t)
	}
	if _, err := Bytes(t.DType, t.Shape, 0); err != nil { // the copy would need as much again
		return g.fail(builder, s, "%q: %v", name, err)
	}
	c, err := CloneDense(value)
	if err != nil {
		return g.fail(builder, s, "%q: %v", name, err)
	}
	return g.add(&Node{kind: kind, typ: t, name: name, value: c, site: s})
}

func checkLeafType(t Type) error {
	if err := checkDType(t.DType); err != nil {
		return err
	}
	return checkShape(t.Shape)
}

// checkShape rejects negative dimensions and shapes with more elements
// than an int counts (whose size would wrap around) or more bytes.
func checkShape(shape []int) error {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("negative dimension in shape %s", ShapeString(shape))
		}
		if d != 0 && n > math.MaxInt/d {
			return fmt.Errorf("shape %s has more elements than an int can count", ShapeString(shape))
		}
		n *= d
	}
	if n > math.MaxInt/8 {
		return fmt.Errorf("shape %s needs more bytes than an int can count", ShapeString(shape))
	}
	return nil
}

// String is a one-line description of the graph's size, for debugging.
func (g *Graph) String() string {
	if g == nil {
		return "graph(nil)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "graph(%d nodes", len(g.nodes))
	if g.err != nil {
		fmt.Fprintf(&b, ", error: %v", g.err)
	}
	b.WriteByte(')')
	return b.String()
}

// Descendants marks, by node ID from 0 to last, the nodes that depend on
// some node of from (those nodes included). Creation order is topological,
// so one forward sweep finds them all. A last past the graph's last node
// stands for it, and nodes of from that are nil, poisoned or of another
// graph mark nothing; the result has an entry per node up to last (none
// for a nil graph or a negative last).
func (g *Graph) Descendants(from []*Node, last int) []bool {
	if g == nil || last < 0 {
		return nil
	}
	last = min(last, len(g.nodes)-1)
	marks := make([]bool, last+1)
	for _, n := range from {
		if id := n.ID(); id >= 0 && id <= last && n.g == g {
			marks[id] = true
		}
	}
	for _, n := range g.nodes[:last+1] {
		for _, in := range n.inputs {
			marks[n.id] = marks[n.id] || marks[in.id]
		}
	}
	return marks
}

// Ancestors marks, by node ID, the nodes that some node of of depends on
// (those nodes included): one backward sweep, creation order being
// topological. The result has an entry per node of the graph; nodes of of
// that are nil, poisoned or of another graph mark nothing.
func (g *Graph) Ancestors(of []*Node) []bool {
	if g == nil {
		return nil
	}
	marks := make([]bool, len(g.nodes))
	last := -1
	for _, n := range of {
		if id := n.ID(); id >= 0 && id < len(marks) && n.g == g {
			marks[id] = true
			last = max(last, id)
		}
	}
	for id := last; id >= 0; id-- {
		if marks[id] {
			for _, in := range g.nodes[id].inputs {
				marks[in.id] = true
			}
		}
	}
	return marks
}

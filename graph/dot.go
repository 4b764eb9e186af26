package graph

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DotOptions configures WriteDot. The zero value draws the whole graph.
type DotOptions struct {
	// Outputs, when set, restricts the drawing to the nodes they need
	// (themselves and their ancestors) and styles them as outputs.
	Outputs []*Node
	// EdgeShapes labels every edge with the shape of the value it carries.
	EdgeShapes bool
	// CollapseGradients draws each gradient cluster (a scope whose name
	// starts with GradientScopePrefix, as differentiation builds them) as a
	// single box, for graphs whose gradients dwarf their forward pass.
	// Outputs inside such a cluster stay drawn, beside the box.
	CollapseGradients bool
	// Title, when set, is drawn above the graph.
	Title string
}

// DotLabeler is implemented by ops (Op or MultiOp) that label their nodes in
// DOT themselves, to show a parameter the op's name hides: a custom
// MulConstant op might answer "MulConstant ×2.5". The label replaces the
// op's name; the node's own name and its type are still shown.
type DotLabeler interface {
	DotLabel() string
}

// GradientScopePrefix starts the name of every scope that differentiation
// builds gradient nodes in, e.g. "∇ w.r.t. W, b". DOT export draws those
// scopes as gradient clusters.
const GradientScopePrefix = "∇ "

// IsGradient reports whether s is a scope of gradient nodes: its name starts
// with GradientScopePrefix.
func (s *Scope) IsGradient() bool {
	return s != nil && strings.HasPrefix(s.Name, GradientScopePrefix)
}

// WriteDot writes g as a Graphviz DOT digraph: one node per graph node
// (labelled with its name, op and type, styled by kind), an edge from each
// input to its consumer, and a cluster per scope, nested as the scopes are.
// The same graph and options always give the same bytes. A poisoned graph
// is not drawn: WriteDot returns its error.
func WriteDot(w io.Writer, g *Graph, opts DotOptions) error {
	if g == nil {
		return errors.New("nabla: WriteDot: nil graph")
	}
	if w == nil {
		return errors.New("nabla: WriteDot: nil writer")
	}
	if err := g.Err(); err != nil {
		return err
	}
	d, err := layoutDot(g, opts)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("digraph nabla {\n")
	if opts.Title != "" {
		fmt.Fprintf(&b, "\tlabel=%s;\n\tlabelloc=t;\n", DotQuote(opts.Title))
	}
	d.writeCluster(&b, &d.root, 1)
	d.writeEdges(&b)
	b.WriteString("}\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// dotLayout is what WriteDot draws: the graph's drawn nodes grouped into
// clusters, and the DOT name each graph node is drawn as.
type dotLayout struct {
	g        *Graph
	opts     DotOptions
	drawn    []bool   // by node ID
	output   []bool   // by node ID
	drawnAs  []string // by node ID: its own DOT name, or its collapsed box's
	boxed    []bool   // by node ID: drawn as part of a collapsed box
	root     dotCluster
	clusters map[*Scope]*dotCluster
	boxes    map[*Scope]*dotBox
}

// dotCluster is a scope's cluster; its items are drawn nodes, boxes of
// collapsed gradient scopes and nested clusters, in first-appearance order.
type dotCluster struct {
	id    string // DOT subgraph name; "" for the top level
	scope *Scope
	items []dotItem
}

// dotItem is one entry of a cluster: exactly one field is set.
type dotItem struct {
	node    *Node
	box     *dotBox
	cluster *dotCluster
}

// dotBox stands for a collapsed gradient scope.
type dotBox struct {
	id    string
	scope *Scope
	nodes int
}

func layoutDot(g *Graph, opts DotOptions) (*dotLayout, error) {
	nodes := g.Nodes()
	d := &dotLayout{
		g:        g,
		opts:     opts,
		drawn:    make([]bool, len(nodes)),
		output:   make([]bool, len(nodes)),
		drawnAs:  make([]string, len(nodes)),
		boxed:    make([]bool, len(nodes)),
		clusters: map[*Scope]*dotCluster{},
		boxes:    map[*Scope]*dotBox{},
	}
	if err := d.markDrawn(); err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if !d.drawn[n.id] {
			continue
		}
		d.drawnAs[n.id] = "n" + strconv.Itoa(n.id)
		scope := n.scope
		if outer := outermostGradient(scope); outer != nil && opts.CollapseGradients {
			scope = outer.Parent // the box, or a visible output, sits beside the cluster
			if !d.output[n.id] {
				box := d.boxes[outer]
				if box == nil {
					box = &dotBox{id: "grad" + strconv.Itoa(len(d.boxes)), scope: outer}
					d.boxes[outer] = box
					d.cluster(scope).items = append(d.cluster(scope).items, dotItem{box: box})
				}
				box.nodes++
				d.drawnAs[n.id] = box.id
				d.boxed[n.id] = true
				continue
			}
		}
		c := d.cluster(scope)
		c.items = append(c.items, dotItem{node: n})
	}
	return d, nil
}

// markDrawn marks the nodes to draw: all of them, or the outputs and their
// ancestors. Creation order is topological, so one backward sweep finds the
// ancestors.
func (d *dotLayout) markDrawn() error {
	if len(d.opts.Outputs) == 0 {
		for i := range d.drawn {
			d.drawn[i] = true
		}
		return nil
	}
	for i, n := range d.opts.Outputs {
		switch {
		case n == nil:
			return fmt.Errorf("nabla: WriteDot: output %d is nil", i)
		case n.err != nil:
			return n.err
		case n.g != d.g:
			return fmt.Errorf("nabla: WriteDot: output %d (%v) belongs to another graph", i, n)
		}
		d.drawn[n.id] = true
		d.output[n.id] = true
	}
	for id := len(d.drawn) - 1; id >= 0; id-- {
		if d.drawn[id] {
			for _, in := range d.g.nodes[id].inputs {
				d.drawn[in.id] = true
			}
		}
	}
	return nil
}

// outermostGradient is the outermost gradient scope enclosing s (s itself
// included), or nil.
func outermostGradient(s *Scope) *Scope {
	var outer *Scope
	for ; s != nil; s = s.Parent {
		if s.IsGradient() {
			outer = s
		}
	}
	return outer
}

// cluster returns the cluster of scope s (the top level for nil), creating
// it and its enclosing clusters on first use.
func (d *dotLayout) cluster(s *Scope) *dotCluster {
	if s == nil {
		return &d.root
	}
	if c := d.clusters[s]; c != nil {
		return c
	}
	parent := d.cluster(s.Parent)
	c := &dotCluster{id: "cluster_" + strconv.Itoa(len(d.clusters)), scope: s}
	d.clusters[s] = c
	parent.items = append(parent.items, dotItem{cluster: c})
	return c
}

// Styles of DOT nodes and clusters, as attribute lists in a fixed order.
const (
	dotStyleOp       = `shape=ellipse`
	dotStyleInput    = `shape=invhouse, style=filled, fillcolor="#cfe2ff"`
	dotStyleParam    = `shape=box3d, style=filled, fillcolor="#d1e7dd"`
	dotStyleConst    = `shape=note, style=filled, fillcolor="#e9ecef"`
	dotStyleOutput   = `shape=doubleoctagon, style=filled, fillcolor="#f8d7da"`
	dotStyleGradBox  = `shape=box, style="filled,dashed", color="#fd7e14", fillcolor="#ffe8cc"`
	dotStyleGradient = `style="filled,dashed"; color="#fd7e14"; fillcolor="#fff4e6"`
	dotStyleScope    = `style=rounded; color="#6c757d"`
)

// DotStyle returns the DOT attributes (shape, style, colours) that nodes of
// kind k are drawn with, or outputs when output is set, for packages that
// draw graph values (the compiled program's slots) like WriteDot does.
func DotStyle(k Kind, output bool) string {
	switch {
	case output:
		return dotStyleOutput
	case k == KindInput:
		return dotStyleInput
	case k == KindParam:
		return dotStyleParam
	case k == KindConst:
		return dotStyleConst
	}
	return dotStyleOp
}

// DotOpLabel is the op part of n's label in DOT: its op's DotLabel or name,
// with the output index for an output of a multi-output op ("TopK[1]"); a
// leaf's kind, with the value of a scalar constant ("const 2.5").
func DotOpLabel(n *Node) string {
	if n == nil || n.err != nil {
		return "invalid"
	}
	var op interface{ Name() string }
	switch {
	case n.op != nil:
		op = n.op
	case n.multi != nil:
		op = n.multi
	case n.kind == KindConst && n.typ.IsScalar() && n.value != nil:
		return "const " + ScalarString(n.value)
	default:
		return n.kind.String()
	}
	label := op.Name()
	if l, ok := op.(DotLabeler); ok {
		label = l.DotLabel()
	}
	if n.multi != nil {
		label += "[" + strconv.Itoa(n.index) + "]"
	}
	return label
}

// DotQuoteLimit is about the most bytes DotQuote writes for one string,
// well under the 16384 that Graphviz's parser accepts.
const DotQuoteLimit = 4096

// DotQuote returns s as a quoted DOT string that Graphviz draws as s itself:
// quotes and backslashes are escaped (so "\N" or "\l" in a name stay text)
// and line breaks become centred DOT line breaks. Other control characters,
// bytes that are not UTF-8 and U+FFFD (which some DOT parsers reject) are
// shown as Go escapes ("\t", "\xff"). "&" is written "&amp;", since
// Graphviz decodes HTML entities ("&#9731;" would be drawn as ☃). Braces,
// "<", ">" and "|" need no escape in a quoted string: only record shapes,
// not used here, give them a meaning. Graphviz cannot parse a quoted string
// over 16 kB, so a string whose quoted form would pass DotQuoteLimit bytes
// is cut there and ends in "…".
func DotQuote(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for len(s) > 0 {
		if b.Len() > DotQuoteLimit {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n' || r == '\r':
			b.WriteString(`\n`)
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\\x%02x`, s[0])
		case r == utf8.RuneError || unicode.IsControl(r):
			// Shown, not interpreted: Go's escape, its backslash escaped.
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(strings.ReplaceAll(q[1:len(q)-1], `\`, `\\`))
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	b.WriteByte('"')
	return b.String()
}

// nodeLabel is a node's full label: its name (if any), op and type.
func nodeLabel(n *Node) string {
	label := DotOpLabel(n) + "\n" + n.typ.String()
	if n.name != "" {
		label = n.name + "\n" + label
	}
	return label
}

func (d *dotLayout) writeCluster(b *strings.Builder, c *dotCluster, depth int) {
	indent := strings.Repeat("\t", depth)
	for _, it := range c.items {
		switch {
		case it.node != nil:
			n := it.node
			fmt.Fprintf(b, "%sn%d [label=%s, %s];\n", indent, n.id, DotQuote(nodeLabel(n)), DotStyle(n.kind, d.output[n.id]))
		case it.box != nil:
			label := it.box.scope.Name + "\n" + strconv.Itoa(it.box.nodes) + " nodes"
			fmt.Fprintf(b, "%s%s [label=%s, %s];\n", indent, it.box.id, DotQuote(label), dotStyleGradBox)
		default:
			sub := it.cluster
			style := dotStyleScope
			if sub.scope.IsGradient() {
				style = dotStyleGradient
			}
			fmt.Fprintf(b, "%ssubgraph %s {\n", indent, sub.id)
			fmt.Fprintf(b, "%s\tlabel=%s;\n%s\t%s;\n", indent, DotQuote(sub.scope.Name), indent, style)
			d.writeCluster(b, sub, depth+1)
			fmt.Fprintf(b, "%s}\n", indent)
		}
	}
}

// writeEdges draws an edge from each input to its consumer, in node order.
// Edges inside a collapsed box vanish, and those entering or leaving one
// are drawn once.
func (d *dotLayout) writeEdges(b *strings.Builder) {
	seen := map[string]bool{}
	for _, n := range d.g.nodes {
		if !d.drawn[n.id] {
			continue
		}
		to := d.drawnAs[n.id]
		for _, in := range n.inputs {
			from := d.drawnAs[in.id]
			if from == to {
				continue
			}
			edge := from + " -> " + to
			if d.opts.EdgeShapes {
				edge += " [label=" + DotQuote(ShapeString(in.typ.Shape)) + "]"
			}
			if d.boxed[in.id] || d.boxed[n.id] {
				if seen[edge] {
					continue
				}
				seen[edge] = true
			}
			fmt.Fprintf(b, "\t%s;\n", edge)
		}
	}
}

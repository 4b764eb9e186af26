package compile

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// function is the compiler's own copy of the part of a graph a program
// needs. Passes rewrite it freely; the user's graph is never modified.
type function struct {
	values   []*value // in topological order
	outputs  []*value
	outNodes []*graph.Node // the user's output nodes, parallel to outputs
	updates  []update
	byNode   map[*graph.Node]*value // user node -> the value that computes it
}

// value is one node of a function. It keeps the graph node it came from
// (or that a rewrite replaced), so errors and DOT still name the user's code.
type value struct {
	node  *graph.Node
	kind  graph.Kind
	op    graph.Op      // single-output op
	multi graph.MultiOp // or multi-output op
	index int           // this value's output index of multi
	group []*value      // all outputs of a multi-output application
	args  []*value
	typ   graph.Type
	konst *tensor.Dense // a constant's value
	slot  int
}

// update writes expr into param after a run.
type update struct {
	param, expr *value
}

// opName names the value's op (or its kind, for a leaf).
func (v *value) opName() string {
	switch {
	case v.op != nil:
		return v.op.Name()
	case v.multi != nil:
		return v.multi.Name()
	}
	return v.kind.String()
}

// newFunction copies the nodes of g that outputs and updates may need:
// every node up to the newest one they name, which deadcode then prunes.
func newFunction(outputs []*graph.Node, updates [][2]*graph.Node) *function {
	last := 0
	for _, n := range outputs {
		last = max(last, n.ID())
	}
	for _, u := range updates {
		last = max(last, u[0].ID(), u[1].ID())
	}
	f := &function{byNode: map[*graph.Node]*value{}}
	var g *graph.Graph
	if len(outputs) > 0 {
		g = outputs[0].Graph()
	} else if len(updates) > 0 {
		g = updates[0][0].Graph()
	}
	for _, n := range g.Nodes()[:last+1] {
		v := &value{node: n, kind: n.Kind(), op: n.Op(), typ: n.Type()}
		v.multi, v.index = n.MultiOp()
		if v.kind == graph.KindConst {
			v.konst = n.Value()
		}
		for _, in := range n.Inputs() {
			v.args = append(v.args, f.byNode[in])
		}
		if v.multi != nil && v.index > 0 {
			v.group = f.byNode[n.Outputs()[0]].group
		}
		if v.multi != nil {
			v.group = append(v.group, v)
			for _, sib := range v.group {
				sib.group = v.group
			}
		}
		f.values = append(f.values, v)
		f.byNode[n] = v
	}
	for _, n := range outputs {
		f.outputs = append(f.outputs, f.byNode[n])
	}
	f.outNodes = outputs
	for _, u := range updates {
		f.updates = append(f.updates, update{param: f.byNode[u[0]], expr: f.byNode[u[1]]})
	}
	return f
}

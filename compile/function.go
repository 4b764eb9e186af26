package compile

import (
	"fmt"

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
	slot  int           // -1 until a memory pass places the value
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
	// A multi-output op's outputs come together: one instruction writes
	// them all, later ones included.
	if outs := g.Node(last).Outputs(); len(outs) > 1 {
		last = outs[len(outs)-1].ID()
	}
	for _, n := range g.Nodes()[:last+1] {
		v := &value{node: n, kind: n.Kind(), op: n.Op(), typ: n.Type(), slot: -1}
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

// rewrite visits the values in order. It first points each value's
// arguments at their replacements, then asks fn for the value's own: fn
// returns v to keep it (possibly changed in place, computing the same
// result from arguments before it) or an earlier value of the same type to
// stand for it. Replaced values are dropped; outputs and updates follow
// the replacements.
func (f *function) rewrite(fn func(v *value) *value) {
	// An output must not become a parameter that an update writes: after a
	// run, the parameter's slot holds its new value, not the one the
	// output was computed from.
	output := make(map[*value]bool, len(f.outputs))
	for _, o := range f.outputs {
		output[o] = true
	}
	updated := make(map[*value]bool, len(f.updates))
	for _, u := range f.updates {
		updated[u.param] = true
	}
	repl := map[*value]*value{}
	follow := func(v *value) *value {
		if r, ok := repl[v]; ok {
			return r
		}
		return v
	}
	kept := f.values[:0]
	for _, v := range f.values {
		for j, a := range v.args {
			v.args[j] = follow(a)
		}
		w := fn(v)
		if w != v && !(output[v] && updated[w]) {
			if !w.typ.Equal(v.typ) {
				panic(fmt.Sprintf("%s of type %v replaced by %s of type %v", v.opName(), v.typ, w.opName(), w.typ))
			}
			repl[v] = w
			continue
		}
		kept = append(kept, v)
	}
	clear(f.values[len(kept):])
	f.values = kept
	for i, o := range f.outputs {
		f.outputs[i] = follow(o)
	}
	for i, u := range f.updates {
		f.updates[i].expr = follow(u.expr)
	}
}

// instr returns the value whose position is the instruction computing v:
// the first output of a multi-output op, or v itself.
func (v *value) instr() *value {
	if v.multi != nil {
		return v.group[0]
	}
	return v
}

// results returns the values v's instruction writes: the group of a
// multi-output op, or v alone.
func (v *value) results() []*value {
	if v.multi != nil {
		return v.group
	}
	return []*value{v}
}

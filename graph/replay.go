package graph

import (
	"fmt"
	"slices"
)

// Replay applies again, to other leaves, the ops that roots are computed
// by. subst maps nodes of one graph (inputs, typically) to the nodes that
// take their place: inputs of another batch size, say. Every node between
// the replaced nodes and roots is applied again with the same op to the
// replacements, keeping its site and scope; parameters, constants and
// nodes that depend on no replaced node are shared, not copied. Replay
// returns the map from every node it replaced or replayed to its
// counterpart (subst included); nodes missing from it are shared.
//
// Gradients recorded by the differentiation driver (see RecordGradient:
// compile.Grad records those it builds) are not replayed op by op but
// derived again from the replayed nodes they are gradients of and with
// respect to: their ops hold the shapes they were built for.
//
// When an op does not accept its new input types (a Reshape to a fixed
// batch size, say), Replay returns an error naming the node and its site,
// and adds nothing to the graph: it is not poisoned. Deriving a gradient
// again may still fail (a gradient that cannot be built for the new
// types), with an error naming it, after adding nodes.
func Replay(subst map[*Node]*Node, roots ...*Node) (map[*Node]*Node, error) {
	var g *Graph
	for _, r := range roots {
		if r == nil || r.err != nil {
			return nil, fmt.Errorf("nabla: Replay: root %v is nil or poisoned", r)
		}
		if g == nil {
			g = r.g
		} else if r.g != g {
			return nil, fmt.Errorf("nabla: Replay: roots belong to different graphs")
		}
	}
	if g == nil {
		return map[*Node]*Node{}, nil
	}
	if g.err != nil {
		return nil, g.err
	}
	for from, to := range subst {
		if from == nil || to == nil || from.g != g || to.g != g || from.err != nil || to.err != nil {
			return nil, fmt.Errorf("nabla: Replay: replacement %v → %v is not between healthy nodes of the roots' graph", from, to)
		}
	}
	// The nodes roots depend on, in creation order: inputs come first.
	need := make([]bool, len(g.nodes))
	stack := append([]*Node(nil), roots...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if need[n.id] {
			continue
		}
		need[n.id] = true
		if _, ok := subst[n]; ok {
			continue
		}
		if r, ok := g.gradients[n]; ok {
			stack = append(stack, r.rec.sources()...) // derived again, not replayed
			continue
		}
		stack = append(stack, n.inputs...)
		stack = append(stack, n.group...) // replayed whole
	}
	// First the types, so that a refusal adds nothing.
	types := map[*Node]Type{}
	typeOf := func(n *Node) Type {
		if t, ok := types[n]; ok {
			return t
		}
		return n.typ
	}
	for from, to := range subst {
		types[from] = to.typ
	}
	var replayed []*Node             // first node of each op application to replay
	ops := map[*Node]opPair{}        // ops traced again for their new inputs (Retyper)
	derived := map[*Node]*gradient{} // the first result of each gradient to derive again
	seen := map[*gradient]bool{}
	for _, n := range g.nodes {
		if !need[n.id] || subst[n] != nil {
			continue
		}
		if r, ok := g.gradients[n]; ok {
			if slices.ContainsFunc(r.rec.sources(), func(x *Node) bool { _, ok := types[x]; return ok }) {
				types[n] = typeOf(r.rec.wrt[r.index]) // a gradient has its node's type
				if !seen[r.rec] {
					seen[r.rec] = true
					derived[n] = r.rec
					replayed = append(replayed, n)
				}
			}
			continue
		}
		if len(n.inputs) == 0 {
			continue
		}
		if n.group != nil && n.group[0] != n {
			continue // typed with its group's first output
		}
		changed := false
		in := make([]Type, len(n.inputs))
		fresh := make([]bool, len(n.inputs))
		for i, x := range n.inputs {
			_, fresh[i] = types[x]
			changed = changed || fresh[i]
			in[i] = typeOf(x)
		}
		if !changed {
			continue
		}
		op, multi, retyped, err := retype(n, in, fresh)
		if err != nil {
			return nil, fmt.Errorf("nabla: Replay: %s at %v: %v", built(n), n.site, err)
		}
		if retyped {
			ops[n] = opPair{op, multi}
		}
		out, err := inferTypes(op, multi, in)
		if err != nil {
			return nil, fmt.Errorf("nabla: Replay: %s at %v: %s", built(n), n.site, describeTypeError(err, in))
		}
		group := n.group
		if group == nil {
			group = []*Node{n}
		}
		if len(out) != len(group) { // a body traced again returned more or fewer outputs
			return nil, fmt.Errorf("nabla: Replay: %s at %v: for inputs %s, it has %d outputs, not %d as built", built(n), n.site, TypesString(in), len(out), len(group))
		}
		for i, m := range group {
			types[m] = out[i]
		}
		replayed = append(replayed, n)
	}
	// Then the nodes.
	out := make(map[*Node]*Node, len(subst)+len(replayed))
	for from, to := range subst {
		out[from] = to
	}
	mapped := func(n *Node) *Node {
		if m, ok := out[n]; ok {
			return m
		}
		return n
	}
	scope := g.scope
	defer func() { g.scope = scope }()
	for _, n := range replayed {
		if r, ok := derived[n]; ok {
			if err := r.rederive(g, mapped, out, types); err != nil {
				return nil, err
			}
			continue
		}
		ins := make([]*Node, len(n.inputs))
		for i, x := range n.inputs {
			ins[i] = mapped(x)
		}
		g.scope = n.scope
		op, multi := n.op, n.multi
		if p, ok := ops[n]; ok {
			op, multi = p.op, p.multi
		}
		if op != nil {
			out[n] = g.add(&Node{op: op, inputs: ins, typ: types[n], site: n.site, name: n.name})
			continue
		}
		group := make([]*Node, len(n.group))
		for i, m := range n.group {
			group[i] = g.add(&Node{multi: multi, index: i, inputs: ins, typ: types[m], site: n.site, name: m.name})
			out[m] = group[i]
		}
		for _, m := range group {
			m.group = group
		}
	}
	return out, nil
}

// Retyper is implemented by ops made for their inputs' types (a loop's
// body, traced for them). Replay asks such an op for the op to apply to
// its new inputs: in are their types, and fresh[i] says input i is a new
// node (whose value may differ even where its type does not). Retype
// returns an Op or a MultiOp, as the receiver is, or says why the op
// cannot be replayed.
type Retyper interface {
	Retype(in []Type, fresh []bool) (any, error)
}

type opPair struct {
	op    Op
	multi MultiOp
}

// retype returns the op to apply to node n's new inputs: its own, or what
// its Retype gives (retyped). Ops are not compared: they need not be
// comparable.
func retype(n *Node, in []Type, fresh []bool) (op Op, multi MultiOp, retyped bool, err error) {
	var r Retyper
	switch {
	case n.op != nil:
		r, _ = n.op.(Retyper)
	case n.multi != nil:
		r, _ = n.multi.(Retyper)
	}
	if r == nil {
		return n.op, n.multi, false, nil
	}
	defer func() {
		if p := recover(); p != nil {
			op, multi, retyped, err = nil, nil, false, fmt.Errorf("Retype panicked: %v", p)
		}
	}()
	again, err := r.Retype(in, fresh)
	if err != nil {
		return nil, nil, false, err
	}
	switch a := again.(type) {
	case Op:
		if n.op != nil {
			return a, nil, true, nil
		}
	case MultiOp:
		if n.multi != nil {
			return nil, a, true, nil
		}
	}
	return nil, nil, false, fmt.Errorf("Retype returned %T, not an op of the kind of %s", again, n.OpName())
}

// built is n as Replay's errors name it: the node, after the function
// the user called where another built it ("While (Scan #8 float64(12))").
func built(n *Node) string {
	if b := n.BuilderName(); b != n.OpName() {
		return fmt.Sprintf("%s (%v)", b, n)
	}
	return n.String()
}

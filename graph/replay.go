package graph

import "fmt"

// Replay applies again, to other leaves, the ops that roots are computed
// by. subst maps nodes of one graph (inputs, typically) to the nodes that
// take their place: inputs of another batch size, say. Every node between
// the replaced nodes and roots is applied again with the same op to the
// replacements, keeping its site and scope; parameters, constants and
// nodes that depend on no replaced node are shared, not copied. Replay
// returns the map from every node it replaced or replayed to its
// counterpart (subst included); nodes missing from it are shared.
//
// When an op does not accept its new input types (a Reshape to a fixed
// batch size, say), Replay returns an error naming the node and its site,
// and adds nothing to the graph: it is not poisoned.
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
		if _, ok := subst[n]; !ok {
			stack = append(stack, n.inputs...)
			stack = append(stack, n.group...) // replayed whole
		}
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
	var replayed []*Node // first node of each op application to replay
	for _, n := range g.nodes {
		if !need[n.id] || subst[n] != nil || len(n.inputs) == 0 {
			continue
		}
		if n.group != nil && n.group[0] != n {
			continue // typed with its group's first output
		}
		changed := false
		in := make([]Type, len(n.inputs))
		for i, x := range n.inputs {
			_, changed0 := types[x]
			changed = changed || changed0
			in[i] = typeOf(x)
		}
		if !changed {
			continue
		}
		out, err := inferTypes(n.op, n.multi, in)
		if err != nil {
			return nil, fmt.Errorf("nabla: Replay: %v at %v: %s", n, n.site, describeTypeError(err, in))
		}
		group := n.group
		if group == nil {
			group = []*Node{n}
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
		ins := make([]*Node, len(n.inputs))
		for i, x := range n.inputs {
			ins[i] = mapped(x)
		}
		g.scope = n.scope
		if n.op != nil {
			out[n] = g.add(&Node{op: n.op, inputs: ins, typ: types[n], site: n.site, name: n.name})
			continue
		}
		group := make([]*Node, len(n.group))
		for i, m := range n.group {
			group[i] = g.add(&Node{multi: n.multi, index: i, inputs: ins, typ: types[m], site: n.site, name: m.name})
			out[m] = group[i]
		}
		for _, m := range group {
			m.group = group
		}
	}
	return out, nil
}

package graph

import "fmt"

// gradient is a record of gradients built by a differentiation driver
// (compile.Grad): the gradients of sum_i <seeds[i], ys[i]> with respect to
// wrt. Its nodes hold the shapes they were built for in their ops'
// parameters (a broadcast to the input's shape, a mean's 1/n), so Replay
// derives them again for replayed nodes rather than replaying them.
type gradient struct {
	ys, seeds, wrt []*Node
	results        []*Node // nil where a result was not built by the driver
	derive         Differentiator
	scope          *Scope
	site           site
}

// RecordGradient records that results are the gradients with respect to
// wrt of sum_i <seeds[i], ys[i]> (a nil seed stands for 1), built by
// derive; the differentiation driver calls it. Replay then derives them
// again, with derive, where it replays ys, seeds or wrt: a gradient's ops
// hold the shapes they were built for (a broadcast to the batch's shape,
// a mean's 1/n), so replaying them on inputs of another batch size would
// compute the wrong shapes or values. results[i] nil, or a node of another
// graph or built before ys, seeds and wrt (a seed the gradient is equal
// to, say), is not recorded: Replay replays it as any other node.
func (g *Graph) RecordGradient(ys, seeds, wrt, results []*Node, derive Differentiator) {
	if g == nil || g.err != nil || derive == nil || len(results) != len(wrt) || (seeds != nil && len(seeds) != len(ys)) {
		return
	}
	last := -1
	for _, n := range append(append(append([]*Node(nil), ys...), seeds...), wrt...) {
		switch {
		case n == nil:
			continue // a seed of 1
		case n.err != nil || n.g != g:
			return
		}
		last = max(last, n.id)
	}
	rec := &gradient{ys: ys, seeds: seeds, wrt: wrt, derive: derive, scope: g.scope, site: callers()}
	rec.results = make([]*Node, len(results))
	for i, r := range results {
		if r == nil || r.err != nil || r.g != g || r.id <= last || r.group != nil || !r.typ.Equal(wrt[i].typ) {
			continue
		}
		if g.gradients == nil {
			g.gradients = map[*Node]gradientResult{}
		}
		if _, ok := g.gradients[r]; ok {
			continue // a result of an earlier record
		}
		rec.results[i] = r
		g.gradients[r] = gradientResult{rec, i}
	}
}

// gradientResult is a node's place among a record's results.
type gradientResult struct {
	rec   *gradient
	index int
}

// sources are the nodes the record's gradients are derived from.
func (r *gradient) sources() []*Node {
	var nodes []*Node
	for _, n := range append(append(append([]*Node(nil), r.ys...), r.seeds...), r.wrt...) {
		if n != nil {
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// rederive derives the record's gradients again from the replayed ys,
// seeds and wrt (mapped gives each node's counterpart), in the scope the
// gradients were first built in, and maps its results to the new ones,
// which must have the types replay inferred (types).
func (r *gradient) rederive(g *Graph, mapped func(*Node) *Node, out map[*Node]*Node, types map[*Node]Type) error {
	remap := func(nodes []*Node) []*Node {
		m := make([]*Node, len(nodes))
		for i, n := range nodes {
			if n != nil {
				m[i] = mapped(n)
			}
		}
		return m
	}
	g.scope = r.scope
	grads, err := r.derive(remap(r.ys), remap(r.seeds), remap(r.wrt))
	if err == nil && len(grads) != len(r.wrt) {
		err = fmt.Errorf("%d gradients for %d nodes", len(grads), len(r.wrt))
	}
	for i, n := range r.results {
		if err != nil || n == nil {
			continue
		}
		if t, ok := types[n]; grads[i] == nil || grads[i].err != nil || (ok && !grads[i].typ.Equal(t)) {
			err = fmt.Errorf("the gradient with respect to %v is %v, want %v", r.wrt[i], grads[i], t)
			continue
		}
		out[n] = grads[i]
	}
	if err != nil {
		return fmt.Errorf("nabla: Replay: deriving again the gradient of %v with respect to %v (built at %v): %v",
			r.ys[0], r.wrt[0], r.site, err)
	}
	return nil
}

package ops

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// rootTemplate is F's graph as Root traced it at the solution: the stand-in
// x for the solution, F's output fx there, the nodes F read besides x
// (its parameters) and the nodes F built that fx depends on, in creation
// order. Root's derivatives build F again from it, in whatever graph
// they are built in and from the parameters the op is given there, not
// by calling F: the op may have been applied again elsewhere (Vmap loops
// it over a batch, a Scan body holding one example), where the nodes F
// reads do not exist.
type rootTemplate struct {
	x, fx  *graph.Node
	params []*graph.Node
	nodes  []*graph.Node
}

// newRootTemplate records F's graph, traced in x's graph from node start
// on, with output fx and parameters params.
func newRootTemplate(x, fx *graph.Node, params []*graph.Node, start int) rootTemplate {
	g := x.Graph()
	need := map[*graph.Node]bool{}
	stack := []*graph.Node{fx}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if need[n] || n.Graph() != g || n.ID() < start || n == x {
			continue
		}
		need[n] = true
		stack = append(stack, n.Inputs()...)
	}
	var nodes []*graph.Node
	for _, n := range g.Nodes()[start:] {
		if need[n] {
			nodes = append(nodes, n)
		}
	}
	return rootTemplate{x: x, fx: fx, params: slices.Clone(params), nodes: nodes}
}

// at builds F again in g, at x and with params for its parameters (nodes
// of g or of graphs enclosing it, one per t.params), and returns its
// output.
func (t *rootTemplate) at(g *graph.Graph, x *graph.Node, params []*graph.Node) (*graph.Node, error) {
	if len(params) != len(t.params) {
		return nil, fmt.Errorf("F at the solution: %d parameters for the %d F reads", len(params), len(t.params))
	}
	to := map[*graph.Node]*graph.Node{t.x: x}
	for k, p := range t.params {
		if _, ok := to[p]; !ok {
			to[p] = params[k]
		}
	}
	for _, n := range t.nodes {
		if _, done := to[n]; done {
			continue
		}
		if n.Kind() == graph.KindConst {
			to[n] = g.Const(n.Value())
			continue
		}
		ins := make([]*graph.Node, len(n.Inputs()))
		for i, in := range n.Inputs() {
			if ins[i] = g.Capture(to[in]); ins[i] == nil {
				return nil, fmt.Errorf("F at the solution: %v reads %v, which is neither F's nor given", n, in)
			}
		}
		outs := graph.Reapply(g, n, ins...)
		for k, o := range n.Outputs() {
			to[o] = outs[min(k, len(outs)-1)]
		}
	}
	if err := g.Err(); err != nil {
		return nil, fmt.Errorf("F at the solution: %w", err)
	}
	return g.Capture(to[t.fx]), nil
}

package compile

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// compileBodies compiles, with the same options, the subgraphs that the
// program's ops run (graph.SubgraphOp): each into a program of its own,
// which a machine runs as often as the op asks.
func compileBodies(p *Program, c *config) error {
	for i := range p.instrs {
		in := &p.instrs[i]
		var op any = in.Op
		if in.Op == nil {
			op = in.Multi
		}
		s, ok := op.(graph.SubgraphOp)
		if !ok {
			continue
		}
		for k, sub := range s.Subgraphs() {
			body, err := compileBody(sub, c)
			if err != nil {
				return fmt.Errorf("nabla: Compile: %s (node %v): subgraph %d: %v", in.Name(), in.Node, k, err)
			}
			in.Bodies = append(in.Bodies, body)
		}
	}
	return nil
}

// compileBody compiles one subgraph; its inputs must be input nodes of its
// graph.
func compileBody(sub *graph.Subgraph, c *config) (*Program, error) {
	if sub == nil || len(sub.Outputs) == 0 {
		return nil, fmt.Errorf("no outputs")
	}
	for i, n := range sub.Inputs {
		if n == nil || n.Err() != nil || n.Kind() != graph.KindInput {
			return nil, fmt.Errorf("input %d (%v) is not an input node", i, n)
		}
	}
	g, _, err := checkRequest(sub.Outputs, nil)
	if err != nil {
		return nil, err
	}
	body := *c
	body.updates = nil
	return compileGraph(g, sub.Outputs, nil, &body)
}

package vm

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
)

// Eval computes nodes once from feeds and returns their values, which are
// the caller's to keep: it compiles the nodes, makes a machine, runs it and
// copies the values out. It suits scripts, tests and one-off evaluations;
// a loop that evaluates the same nodes again should compile once and Run a
// Machine instead, which allocates nothing per run. Random ops draw at
// their steps' current values (compile.WithFixedDraws).
func Eval(feeds Feeds, nodes ...*graph.Node) ([]*tensor.Dense, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	p, err := compile.Compile(nodes, compile.WithFixedDraws())
	if err != nil {
		return nil, err
	}
	m, err := New(p, WithThreads(1))
	if err != nil {
		return nil, err
	}
	if err := m.Run(feeds); err != nil {
		return nil, err
	}
	out := make([]*tensor.Dense, len(nodes))
	for i, n := range nodes {
		v, err := m.Value(n)
		if err != nil {
			return nil, err
		}
		if out[i], err = graph.CloneDense(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

package vm

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
)

// Eval computes nodes once from feeds and returns their values, which are
// the caller's to keep: it compiles the nodes, makes a machine, runs it and
// copies the values out. It suits scripts, tests and one-off evaluations;
// a loop that evaluates the same nodes again should compile once and Run a
// Machine instead, which allocates nothing per run.
func Eval(feeds Feeds, nodes ...*graph.Node) ([]*tensor.Dense, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	p, err := compile.Compile(nodes)
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

// Scalar returns the value of a scalar (or one-element) program output,
// input or parameter after the last run, as a float64.
func (m *Machine) Scalar(n *graph.Node) (float64, error) {
	v, err := m.Value(n)
	if err != nil {
		return 0, err
	}
	if size := graph.ShapeSize(v.Shape()); size != 1 {
		return 0, fmt.Errorf("nabla: Scalar: %v has %d elements, not one", n, size)
	}
	return graph.Float(v, 0), nil
}

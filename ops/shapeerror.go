package ops

import (
	"fmt"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// shapeError reports inputs of the wrong shape to a composite builder,
// which cannot build its ops from them.
type shapeError struct{ name, want string }

func (op shapeError) Name() string { return op.name }

func (op shapeError) Type(in []graph.Type) (graph.Type, error) {
	shapes := make([]string, len(in))
	for i, t := range in {
		shapes[i] = graph.ShapeString(t.Shape)
	}
	return graph.Type{}, fmt.Errorf("want %s, got %s", op.want, strings.Join(shapes, " and "))
}

// poisoned is graph.Poisoned for the builder called op: where an input is
// nil it is Apply's error, naming op, the input and the caller's line,
// recorded on the other inputs' graph (graph.Poisoned's names neither).
func poisoned(op string, nodes ...*graph.Node) *graph.Node {
	if graph.Poisoned(nodes...) == nil {
		return nil
	}
	return graph.Apply(shapeError{name: op}, nodes...)
}

// checkAs checks inputs as op's type inference does, for the composite
// builder called name that builds op (among others) from them: a nil
// input, inputs of unrelated graphs, or inputs op refuses are the
// builder's error, in its name rather than op's. It returns nil when op
// takes them.
func checkAs(name string, op graph.Op, inputs ...*graph.Node) *graph.Node {
	if p := poisoned(name, inputs...); p != nil {
		return p
	}
	types := make([]graph.Type, len(inputs))
	for i, n := range inputs {
		if n.Graph() != inputs[0].Graph() {
			return graph.Apply(shapeError{name: name}, inputs...) // Apply's words for it
		}
		types[i] = n.Type()
	}
	if _, err := op.Type(types); err != nil {
		return failBuilder(name, err, inputs...)
	}
	return nil
}

func (op shapeError) Forward(*tensor.Dense, []*tensor.Dense) error {
	return fmt.Errorf("%s: bad shapes", op.name)
}

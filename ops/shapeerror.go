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

func (op shapeError) Forward(*tensor.Dense, []*tensor.Dense) error {
	return fmt.Errorf("%s: bad shapes", op.name)
}

package nn

import (
	"errors"
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// checked is build(inputs) for the function called name, which composes
// ops: the ops' mistakes are its own. A nil input or inputs of different
// graphs are name's error; so is what an op of the build refuses, taken
// back off the graph (graph.Graph.Catch) and recorded in name's name, so
// that the error names name, the op and the caller's line, rather than
// the op alone ("nabla: nn.MSE: Sub: dtypes differ: … at model.go:42").
// names name the inputs in messages.
func checked(name string, names []string, build func(in []*graph.Node) *graph.Node, inputs ...*graph.Node) *graph.Node {
	if bad := checkInputs(name, names, inputs); bad != nil {
		return bad
	}
	g := graph.Innermost(inputs...)
	var out *graph.Node
	if err := g.Catch(func() { out = build(inputs) }); err != nil {
		var gerr *graph.Error
		switch {
		case errors.As(err, &gerr) && gerr.Op == "nn."+name: // its own, already
			err = gerr.Err
		case gerr != nil:
			err = fmt.Errorf("%s: %w", gerr.Op, gerr.Err)
		}
		return failOn(g, name, "%w", err)
	}
	return out
}

// checkInputs returns the first of inputs that is poisoned, or name's
// error for a nil input or for inputs of graphs not nested in one
// another, recorded on the innermost of their graphs; nil when they are
// healthy.
func checkInputs(name string, names []string, inputs []*graph.Node) *graph.Node {
	g := graph.Innermost(inputs...)
	for i, n := range inputs {
		switch {
		case n == nil:
			return failOn(g, name, "%s is nil", names[i])
		case n.Err() != nil:
			return n
		case g == nil:
			return fail(n, name, "the inputs belong to different graphs")
		}
	}
	return nil
}

// unmade is the error of a method of a module of type module called on a
// nil one, or a zero one (a struct literal: nn.LSTM{} panicked, nn.Linear{}
// named LinearFunction's nil input), which constructor makes: "nabla:
// nn.Linear: the module is nil or zero: make it with nn.NewLinear at
// model.go:42".
func unmade(x *graph.Node, module, constructor string) *graph.Node {
	return failOn(x.Graph(), module, "the module is nil or zero: make it with nn.%s", constructor)
}

// fail records a module's error on x's graph, naming the user's code.
func fail(x *graph.Node, module, format string, args ...any) *graph.Node {
	return failOn(x.Graph(), module, format, args...)
}

// failOn records the error of the nn function or module called name on
// g, naming the user's code.
func failOn(g *graph.Graph, name, format string, args ...any) *graph.Node {
	return g.Fail(&graph.Error{Op: "nn." + name, Err: fmt.Errorf(format, args...), Site: graph.CallerSite()})
}

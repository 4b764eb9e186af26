package nn

import (
	"cmp"
	"maps"

	"github.com/nabla-go/nabla/graph"
)

// TrainingSetter is implemented by modules that build a different graph for
// training and for evaluation (Dropout). A graph is static, so the mode
// applies to the Forward calls made after it is set: build the training
// forward pass in training mode and the evaluation pass in evaluation mode,
// in the same graph, and compile one program for each.
type TrainingSetter interface {
	SetTraining(training bool)
}

// SetTraining sets the mode of m and every module in it that has one.
// Modules start in training mode.
func SetTraining(m Module, training bool) {
	for _, nm := range Modules(m) {
		if t, ok := nm.Module.(TrainingSetter); ok {
			t.SetTraining(training)
		}
	}
}

// StateUpdater is implemented by modules whose buffers change at every
// training step (Dropout advances its step counter, so that each step
// draws a fresh mask). The updates are built by Forward in training mode.
type StateUpdater interface {
	StateUpdates() map[*graph.Node]*graph.Node
}

// StateUpdates returns the buffer updates of m and its descendants, for
// compile.WithUpdates beside the optimiser's.
func StateUpdates(m Module) map[*graph.Node]*graph.Node {
	out := map[*graph.Node]*graph.Node{}
	for _, nm := range Modules(m) {
		if u, ok := nm.Module.(StateUpdater); ok {
			maps.Copy(out, u.StateUpdates())
		}
	}
	return out
}

// inScope builds the nodes of a module, of type module and named name
// ("" for a module of no name: an activation's), inside a scope of x's
// graph (for DOT clusters) named name, else module; a poisoned x is
// returned as it is, and a nil x is the module's error (see nilInput).
func inScope(x *graph.Node, module, name string, build func() *graph.Node) *graph.Node {
	if x == nil {
		return nilInput(nil, module, name)
	}
	if x.Err() != nil {
		return x
	}
	defer x.Graph().Scope(cmp.Or(name, module))()
	return build()
}

// nilInput is the error of a module of type module, named name, given a
// nil input, recorded on g (the graph of its weights, where it has
// some): `nabla: nn.Linear: "fc": the input is nil at model.go:42`, as
// every module's is.
func nilInput(g *graph.Graph, module, name string) *graph.Node {
	if name == "" {
		return failOn(g, module, "the input is nil")
	}
	return failOn(g, module, "%q: the input is nil", name)
}

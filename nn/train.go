package nn

import (
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

// inScope builds a module's nodes inside a scope of x's graph named name
// (for DOT clusters); a poisoned x is returned as it is.
func inScope(x *graph.Node, name string, build func() *graph.Node) *graph.Node {
	if p := graph.Poisoned(x); p != nil {
		return p
	}
	defer x.Graph().Scope(name)()
	return build()
}

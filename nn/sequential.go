package nn

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Sequential chains modules: each one's output is the next one's input.
// Its children are named "layers.0", "layers.1", ...
type Sequential struct {
	Layers []Module
	name   string
}

// NewSequential returns the chain of layers, building in a scope named name
// ("Sequential" if empty).
func NewSequential(name string, layers ...Module) *Sequential {
	if name == "" {
		name = "Sequential"
	}
	return &Sequential{Layers: layers, name: name}
}

// Forward applies the layers in order. A nil layer poisons the graph with
// an error saying which.
func (s *Sequential) Forward(x *graph.Node) *graph.Node {
	if s == nil {
		return fail(x, "Sequential", "the module is nil")
	}
	return inScope(x, s.name, func() *graph.Node {
		for i, l := range s.Layers {
			if l == nil {
				return fail(x, "Sequential", "%q: layer %d is nil", s.name, i)
			}
			x = l.Forward(x)
		}
		return x
	})
}

// String prints the module as a tree (see Format).
func (s *Sequential) String() string { return Format(s) }

// fail records a module's error on x's graph, naming the user's code.
func fail(x *graph.Node, module, format string, args ...any) *graph.Node {
	return x.Graph().Fail(&graph.Error{Op: "nn." + module, Err: fmt.Errorf(format, args...), Site: graph.CallerSite()})
}

// Tanh applies the hyperbolic tangent elementwise.
type Tanh struct{}

// Forward returns tanh(x).
func (Tanh) Forward(x *graph.Node) *graph.Node { return activation(x, "Tanh", ops.Tanh) }

// ReLU applies max(x, 0) elementwise.
type ReLU struct{}

// Forward returns max(x, 0).
func (ReLU) Forward(x *graph.Node) *graph.Node { return activation(x, "ReLU", ops.ReLU) }

// Sigmoid applies the logistic function 1/(1+e^-x) elementwise.
type Sigmoid struct{}

// Forward returns 1/(1+e^-x).
func (Sigmoid) Forward(x *graph.Node) *graph.Node { return activation(x, "Sigmoid", ops.Sigmoid) }

func activation(x *graph.Node, name string, f func(*graph.Node) *graph.Node) *graph.Node {
	return inScope(x, name, func() *graph.Node { return f(x) })
}

package nn

import (
	"strconv"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Sequential chains modules: each one's output is the next one's input.
// Each child is named by the name it was given ("fc1"), or by its index
// ("1") when it has none or shares it, as in PyTorch's Sequential; so a
// layer's parameters have one name in the graph, in DOT and in
// checkpoints.
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
		return unmade(x, "Sequential", "NewSequential")
	}
	return inScope(x, "Sequential", s.name, func() *graph.Node {
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

// Name is the name the chain was made with.
func (s *Sequential) Name() string {
	if s == nil {
		return ""
	}
	return s.name
}

// namer is implemented by modules made with a name.
type namer interface{ Name() string }

// members names the layers: by their own names where those are unique
// among the layers, by index otherwise.
func (s *Sequential) members() []member {
	count := map[string]int{}
	for _, l := range s.Layers {
		if n, ok := l.(namer); ok && l != nil {
			count[n.Name()]++
		}
	}
	var out []member
	for i, l := range s.Layers {
		if l == nil {
			continue
		}
		name := strconv.Itoa(i)
		if n, ok := l.(namer); ok && n.Name() != "" && count[n.Name()] == 1 {
			name = n.Name()
		}
		out = append(out, member{name: name, kind: memberModule, module: l})
	}
	return out
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
	return inScope(x, name, "", func() *graph.Node { return f(x) })
}

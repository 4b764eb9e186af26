package nn

import (
	"fmt"
	"math"

	"github.com/nabla-go/nabla/graph"
)

// Linear is a fully connected layer, y = x·Wᵀ + b, built on the custom op
// LinearFunction: it maps (N, in) to (N, out). Its weight is laid out as
// PyTorch's, one row per output.
type Linear struct {
	Weight *graph.Node // (out, in)
	Bias   *graph.Node // (out), or nil without a bias
	in     int
	out    int
	name   string
}

// NewLinear adds to g the parameters of a Linear layer from in to out
// features: "name.weight" (out, in), and "name.bias" (out) when bias is
// true. As in PyTorch, both start uniform in ±1/√in unless WithInit or
// WithBiasInit say otherwise. A bad size or option is recorded on g (see
// graph.Graph.Err) and leaves the layer's parameters poisoned.
func NewLinear(g *graph.Graph, name string, in, out int, bias bool, opts ...Option) *Linear {
	bound := 1 / math.Sqrt(float64(max(in, 1)))
	b := newBuilder(g, "Linear", name, Uniform(-bound, bound), Uniform(-bound, bound), opts)
	l := &Linear{in: in, out: out, name: b.name}
	if in <= 0 || out <= 0 {
		l.Weight = b.fail("in %d and out %d must be positive", in, out)
		return l
	}
	l.Weight = b.param("weight", b.o.weightInit, in, out, out, in)
	if bias {
		l.Bias = b.param("bias", b.o.biasInit, in, out, out)
	}
	return l
}

// Forward returns x·Wᵀ + b for x of shape (N, in).
func (l *Linear) Forward(x *graph.Node) *graph.Node {
	if l == nil || l.Weight == nil {
		return unmade(x, "Linear", "NewLinear")
	}
	return inScope(x, "Linear", l.name, func() *graph.Node {
		return LinearFunc(x, l.Weight, l.Bias)
	})
}

// Describe gives the layer's sizes, as PyTorch prints them.
func (l *Linear) Describe() string {
	return fmt.Sprintf("in_features=%d, out_features=%d, bias=%t", l.in, l.out, l.Bias != nil)
}

// String prints the module as a tree (see Format).
func (l *Linear) String() string { return Format(l) }

// Name is the name the module was made with, which prefixes its
// parameters' names.
func (l *Linear) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

package nn

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// LayerNorm normalises each row of its input over the last axis to zero
// mean and unit variance, then scales and shifts it by learned per-feature
// weight and bias: y = (x - mean) / √(var + eps) · weight + bias, with the
// biased variance, as PyTorch computes it.
type LayerNorm struct {
	Weight   *graph.Node // (features), starts at 1
	Bias     *graph.Node // (features), starts at 0
	features int
	eps      float64
	name     string
}

// NewLayerNorm adds to g the weight ("name.weight") and bias ("name.bias")
// of a LayerNorm over a last axis of the given size. eps (PyTorch uses
// 1e-5) keeps the division finite for constant rows.
func NewLayerNorm(g *graph.Graph, name string, features int, eps float64, opts ...Option) *LayerNorm {
	b := newBuilder(g, "LayerNorm", name, Ones(), Zeros(), opts)
	l := &LayerNorm{features: features, eps: eps, name: b.name}
	if features <= 0 || !(eps >= 0) {
		l.Weight = b.fail("features %d must be positive and eps %v ≥ 0", features, eps)
		return l
	}
	l.Weight = b.param("weight", b.o.weightInit, features, features, features)
	l.Bias = b.param("bias", b.o.biasInit, features, features, features)
	return l
}

// Forward normalises x, of shape (..., features).
func (l *LayerNorm) Forward(x *graph.Node) *graph.Node {
	if l == nil || l.Weight == nil {
		return unmade(x, "LayerNorm", "NewLayerNorm")
	}
	return inScope(x, "LayerNorm", l.name, func() *graph.Node {
		shape := x.Shape()
		if len(shape) == 0 || shape[len(shape)-1] != l.features {
			return fail(x, "LayerNorm", "%q: input %v does not end in %d features", l.name, x.Type(), l.features)
		}
		centred := ops.Sub(x, ops.MeanKeepDims(x, -1))
		variance := ops.MeanKeepDims(ops.Square(centred), -1)
		std := ops.Sqrt(ops.Add(variance, x.Graph().Scalar(l.eps, x.DType())))
		return ops.Add(ops.Mul(ops.Div(centred, std), l.Weight), l.Bias)
	})
}

// Describe gives the normalised size and eps, as PyTorch prints them.
func (l *LayerNorm) Describe() string {
	return fmt.Sprintf("(%d,), eps=%v, elementwise_affine=true", l.features, l.eps)
}

// String prints the module as a tree (see Format).
func (l *LayerNorm) String() string { return Format(l) }

// Name is the name the module was made with, which prefixes its
// parameters' names.
func (l *LayerNorm) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

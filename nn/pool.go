package nn

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// MaxPool2d is max pooling over NCHW images, as PyTorch's nn.MaxPool2d.
type MaxPool2d struct{ Options ops.PoolOptions }

// Forward pools x.
func (p MaxPool2d) Forward(x *graph.Node) *graph.Node {
	return activation(x, "MaxPool2d", func(x *graph.Node) *graph.Node { return ops.MaxPool2D(x, p.Options) })
}

// Describe gives the window, as PyTorch prints it.
func (p MaxPool2d) Describe() string {
	d := "1"
	if len(p.Options.Dilation) > 0 {
		d = describeInts(p.Options.Dilation)
	}
	ceil := "False"
	if p.Options.CeilMode {
		ceil = "True"
	}
	return describePool(p.Options) + fmt.Sprintf(", dilation=%s, ceil_mode=%s", d, ceil)
}

// AvgPool2d is average pooling over NCHW images (padding counted), as
// PyTorch's nn.AvgPool2d.
type AvgPool2d struct{ Options ops.PoolOptions }

// Forward pools x.
func (p AvgPool2d) Forward(x *graph.Node) *graph.Node {
	return activation(x, "AvgPool2d", func(x *graph.Node) *graph.Node { return ops.AvgPool2D(x, p.Options) })
}

// Describe gives the window, as PyTorch prints it.
func (p AvgPool2d) Describe() string { return describePool(p.Options) }

// describePool prints a window's settings as PyTorch's pooling modules do.
func describePool(o ops.PoolOptions) string {
	k, s, p := describeInts(o.Kernel), describeInts(o.Kernel), "0"
	if len(o.Stride) > 0 {
		s = describeInts(o.Stride)
	}
	if len(o.Padding) > 0 {
		p = describeInts(o.Padding)
	}
	return fmt.Sprintf("kernel_size=%s, stride=%s, padding=%s", k, s, p)
}

// describeInts prints one value as itself and two as a pair.
func describeInts(v []int) string {
	if len(v) == 2 {
		return fmt.Sprintf("(%d, %d)", v[0], v[1])
	}
	if len(v) == 1 {
		return fmt.Sprint(v[0])
	}
	return fmt.Sprint(v)
}

// Flatten joins the axes from StartDim on into one, as PyTorch's
// nn.Flatten (whose default StartDim is 1: keep the batch).
type Flatten struct{ StartDim int }

// Forward flattens x.
func (f Flatten) Forward(x *graph.Node) *graph.Node {
	return activation(x, "Flatten", func(x *graph.Node) *graph.Node { return ops.Flatten(x, f.StartDim) })
}

// GELU applies x·Φ(x) elementwise, or PyTorch's tanh approximation when
// Tanh is set.
type GELU struct{ Tanh bool }

// Forward returns GELU(x).
func (g GELU) Forward(x *graph.Node) *graph.Node {
	return activation(x, "GELU", func(x *graph.Node) *graph.Node { return ops.GELU(x, g.Tanh) })
}

// Describe names the tanh approximation, as PyTorch prints it.
func (g GELU) Describe() string {
	if g.Tanh {
		return "approximate='tanh'"
	}
	return ""
}

// SiLU applies x·sigmoid(x) elementwise.
type SiLU struct{}

// Forward returns x·sigmoid(x).
func (SiLU) Forward(x *graph.Node) *graph.Node { return activation(x, "SiLU", ops.SiLU) }

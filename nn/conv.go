package nn

import (
	"fmt"
	"math"
	"strings"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Conv2d is a 2-D convolution layer over NCHW images, y = Conv2D(x, W) + b,
// with PyTorch's parameters: weight (out, in/groups, kH, kW) and bias
// (out), so a state dict saved from torch.nn.Conv2d loads unchanged.
type Conv2d struct {
	Weight  *graph.Node // (out, in/groups, kH, kW)
	Bias    *graph.Node // (out), or nil without a bias
	in, out int
	kernel  [2]int
	conv    ops.ConvOptions
	name    string
}

// NewConv2d adds to g the parameters of a Conv2d from in to out channels
// with a kernel of kernel[0]×kernel[1] (one value: square) and the
// convolution's settings conv: "name.weight", and "name.bias" when bias is
// true. As in PyTorch both start uniform in ±1/√(in/groups·kH·kW) unless
// WithInit or WithBiasInit say otherwise. Bad sizes are recorded on g.
func NewConv2d(g *graph.Graph, name string, in, out int, kernel []int, bias bool, conv ops.ConvOptions, opts ...Option) *Conv2d {
	groups, k := max(conv.Groups, 1), kernelSize(kernel)
	fanIn := max(in/groups*k[0]*k[1], 1)
	bound := 1 / math.Sqrt(float64(fanIn))
	b := newBuilder(g, "Conv2d", name, Uniform(-bound, bound), Uniform(-bound, bound), opts)
	c := &Conv2d{in: in, out: out, kernel: k, conv: conv, name: b.name}
	if bad := b.checkConv(kernel, k, in, out, groups); bad != nil {
		c.Weight = bad
		return c
	}
	c.Weight = b.param("weight", b.o.weightInit, fanIn, out/groups*k[0]*k[1], out, in/groups, k[0], k[1])
	if bias {
		c.Bias = b.param("bias", b.o.biasInit, fanIn, out, out)
	}
	return c
}

// Forward convolves x (N, in, H, W) into (N, out, H', W').
func (c *Conv2d) Forward(x *graph.Node) *graph.Node {
	if c == nil {
		return fail(x, "Conv2d", "the module is nil")
	}
	return inScope(x, c.name, func() *graph.Node {
		y := ops.Conv2D(x, c.Weight, c.conv)
		if c.Bias == nil {
			return y
		}
		return ops.Add(y, ops.Reshape(c.Bias, c.out, 1, 1))
	})
}

// Describe gives the layer's settings, as PyTorch prints them: defaults
// are left out.
func (c *Conv2d) Describe() string {
	var s strings.Builder
	fmt.Fprintf(&s, "%d, %d, kernel_size=(%d, %d)", c.in, c.out, c.kernel[0], c.kernel[1])
	pair := func(v []int, def int) (string, bool) {
		switch len(v) {
		case 0:
			return "", false
		case 1:
			return fmt.Sprintf("(%d, %d)", v[0], v[0]), v[0] != def
		default:
			return fmt.Sprintf("(%s)", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(v)), ", "), "[]")), true
		}
	}
	stride, _ := pair(c.conv.Stride, 1)
	if stride == "" {
		stride = "(1, 1)"
	}
	fmt.Fprintf(&s, ", stride=%s", stride)
	if c.conv.Same {
		s.WriteString(", padding=same")
	} else if p, ok := pair(c.conv.Padding, 0); ok {
		fmt.Fprintf(&s, ", padding=%s", p)
	}
	if d, ok := pair(c.conv.Dilation, 1); ok {
		fmt.Fprintf(&s, ", dilation=%s", d)
	}
	if c.conv.Groups > 1 {
		fmt.Fprintf(&s, ", groups=%d", c.conv.Groups)
	}
	if c.Bias == nil {
		s.WriteString(", bias=False")
	}
	return s.String()
}

// String prints the module as a tree (see Format).
func (c *Conv2d) String() string { return Format(c) }

// Name is the name the module was made with, which prefixes its
// parameters' names.
func (c *Conv2d) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// ConvTranspose2d is a transposed 2-D convolution layer over NCHW images,
// y = ConvTranspose2D(x, W) + b, with PyTorch's parameters: weight (in,
// out/groups, kH, kW) and bias (out), as torch.nn.ConvTranspose2d.
type ConvTranspose2d struct {
	Weight  *graph.Node // (in, out/groups, kH, kW)
	Bias    *graph.Node // (out), or nil without a bias
	in, out int
	kernel  [2]int
	conv    ops.ConvOptions
	name    string
}

// NewConvTranspose2d adds to g the parameters of a ConvTranspose2d from in
// to out channels with a kernel of kernel[0]×kernel[1] (one value:
// square) and the settings conv (OutputPadding included). As in PyTorch
// both start uniform in ±1/√(out/groups·kH·kW).
func NewConvTranspose2d(g *graph.Graph, name string, in, out int, kernel []int, bias bool, conv ops.ConvOptions, opts ...Option) *ConvTranspose2d {
	groups, k := max(conv.Groups, 1), kernelSize(kernel)
	fanIn := max(out/groups*k[0]*k[1], 1) // PyTorch's: the weight's dimension 1 times the kernel
	bound := 1 / math.Sqrt(float64(fanIn))
	b := newBuilder(g, "ConvTranspose2d", name, Uniform(-bound, bound), Uniform(-bound, bound), opts)
	c := &ConvTranspose2d{in: in, out: out, kernel: k, conv: conv, name: b.name}
	if bad := b.checkConv(kernel, k, in, out, groups); bad != nil {
		c.Weight = bad
		return c
	}
	c.Weight = b.param("weight", b.o.weightInit, fanIn, in*k[0]*k[1], in, out/groups, k[0], k[1])
	if bias {
		c.Bias = b.param("bias", b.o.biasInit, fanIn, out, out)
	}
	return c
}

// Forward transposes the convolution of x (N, in, H, W) into (N, out, H', W').
func (c *ConvTranspose2d) Forward(x *graph.Node) *graph.Node {
	if c == nil {
		return fail(x, "ConvTranspose2d", "the module is nil")
	}
	return inScope(x, c.name, func() *graph.Node {
		y := ops.ConvTranspose2D(x, c.Weight, c.conv)
		if c.Bias == nil {
			return y
		}
		return ops.Add(y, ops.Reshape(c.Bias, c.out, 1, 1))
	})
}

// Describe gives the layer's settings as PyTorch prints them: Conv2d's,
// with the output padding where there is one.
func (c *ConvTranspose2d) Describe() string {
	conv := c.conv
	conv.OutputPadding = nil
	d := (&Conv2d{in: c.in, out: c.out, kernel: c.kernel, conv: conv, Bias: c.Bias}).Describe()
	if op := c.conv.OutputPadding; len(op) > 0 && (op[0] != 0 || op[len(op)-1] != 0) {
		p := [2]int{op[0], op[len(op)-1]}
		suffix := fmt.Sprintf(", output_padding=(%d, %d)", p[0], p[1])
		if c.Bias == nil { // PyTorch prints bias=False last
			return strings.TrimSuffix(d, ", bias=False") + suffix + ", bias=False"
		}
		return d + suffix
	}
	return d
}

// String prints the module as a tree (see Format).
func (c *ConvTranspose2d) String() string { return Format(c) }

// Name is the name the module was made with.
func (c *ConvTranspose2d) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// kernelSize reads a kernel size of one value (square) or two; anything
// else gives a zero size, which checkConv refuses.
func kernelSize(kernel []int) [2]int {
	switch len(kernel) {
	case 1:
		return [2]int{kernel[0], kernel[0]}
	case 2:
		return [2]int{kernel[0], kernel[1]}
	}
	return [2]int{}
}

// checkConv records on the graph what is wrong with a convolution layer's
// sizes, returning the poisoned node that stands for its weight, or nil.
func (b *builder) checkConv(kernel []int, k [2]int, in, out, groups int) *graph.Node {
	switch {
	case k[0] <= 0 || k[1] <= 0:
		return b.fail("kernel size %v: want 1 or 2 positive values", kernel)
	case in <= 0 || out <= 0 || in%groups != 0 || out%groups != 0:
		return b.fail("in %d and out %d channels must be positive and divisible by %d groups", in, out, groups)
	}
	return nil
}

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
	c := &Conv2d{in: in, out: out, conv: conv}
	c.Weight, c.Bias, c.kernel, c.name = convParams(g, "Conv2d", name, in, out, kernel, bias, conv, false, opts)
	return c
}

// Forward convolves x (N, in, H, W) into (N, out, H', W').
func (c *Conv2d) Forward(x *graph.Node) *graph.Node {
	if c == nil || c.Weight == nil {
		return unmade(x, "Conv2d", "NewConv2d")
	}
	return convForward(x, "Conv2d", c.name, c.Bias, func(x *graph.Node) *graph.Node { return ops.Conv2D(x, c.Weight, c.conv) })
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
	c := &ConvTranspose2d{in: in, out: out, conv: conv}
	c.Weight, c.Bias, c.kernel, c.name = convParams(g, "ConvTranspose2d", name, in, out, kernel, bias, conv, true, opts)
	return c
}

// Forward transposes the convolution of x (N, in, H, W) into (N, out, H', W').
func (c *ConvTranspose2d) Forward(x *graph.Node) *graph.Node {
	if c == nil || c.Weight == nil {
		return unmade(x, "ConvTranspose2d", "NewConvTranspose2d")
	}
	return convForward(x, "ConvTranspose2d", c.name, c.Bias, func(x *graph.Node) *graph.Node { return ops.ConvTranspose2D(x, c.Weight, c.conv) })
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

// convParams makes a convolution layer's parameters in g, initialised as
// PyTorch does (uniform in ±1/√fan-in): the weight (out, in/groups, kH,
// kW), or (in, out/groups, kH, kW) when transposed, and the bias (out)
// when bias is true. Bad sizes are recorded on g and leave the weight
// poisoned. It returns the kernel's size and the layer's name.
func convParams(g *graph.Graph, kind, name string, in, out int, kernel []int, bias bool, conv ops.ConvOptions, transposed bool, opts []Option) (w, b *graph.Node, k [2]int, scope string) {
	groups, k := max(conv.Groups, 1), kernelSize(kernel)
	shape := []int{out, in / groups, k[0], k[1]}
	if transposed {
		shape = []int{in, out / groups, k[0], k[1]}
	}
	fanIn := max(shape[1]*k[0]*k[1], 1) // PyTorch's: the weight's dimension 1 times the kernel
	bound := 1 / math.Sqrt(float64(fanIn))
	bld := newBuilder(g, kind, name, Uniform(-bound, bound), Uniform(-bound, bound), opts)
	switch {
	case k[0] <= 0 || k[1] <= 0:
		return bld.fail("kernel size %v: want 1 or 2 positive values", kernel), nil, k, bld.name
	case in <= 0 || out <= 0 || in%groups != 0 || out%groups != 0:
		return bld.fail("in %d and out %d channels must be positive and divisible by %d groups", in, out, groups), nil, k, bld.name
	}
	w = bld.param("weight", bld.o.weightInit, fanIn, shape[0]*k[0]*k[1], shape...)
	if bias {
		b = bld.param("bias", bld.o.biasInit, fanIn, out, out)
	}
	return w, b, k, bld.name
}

// convForward builds a layer's convolution of x, plus its bias added to
// each channel (ChannelAffine), in the layer's scope.
func convForward(x *graph.Node, module, scope string, bias *graph.Node, convolve func(*graph.Node) *graph.Node) *graph.Node {
	return inScope(x, module, scope, func() *graph.Node {
		y := convolve(x)
		if bias == nil {
			return y
		}
		return ops.ChannelAffine(y, nil, bias)
	})
}

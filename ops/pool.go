package ops

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Pooling over images in NCHW layout, as PyTorch's max_pool2d and
// avg_pool2d (count_include_pad=True) compute it.
//
// Max pooling selects one element per window, its argmax: the op family
// is the selection's two linear maps with the argmax found from x. The
// gradient of MaxPool2D is MaxPool2DGrad(x, g), which adds g at each
// window's argmax; that is linear in g, and its gradient with respect to
// g is MaxPool2DGather(x, G), which reads G at each argmax; whose
// gradient with respect to G is MaxPool2DGrad again. Neither depends on x
// but through the argmax, which is piecewise constant, so their gradients
// with respect to x are zero away from ties, and the family
// differentiates to any order. Average pooling is linear: its gradient
// spreads each output's gradient over its window (AvgPool2DSpread), whose
// gradient is AvgPool2D again.

// PoolOptions are a pooling's settings, named as PyTorch's nn.MaxPool2d
// names them. Lists give one value for both spatial axes or one per axis.
// Sizes whose arithmetic would overflow an int are refused.
type PoolOptions struct {
	// Kernel is the window's size; required.
	Kernel []int
	// Stride between the windows; nil: the kernel's size.
	Stride []int
	// Padding is added on both sides of each axis, at most half the
	// kernel (rounded down, as PyTorch requires). Max pooling pads with -∞, average pooling with zeros that
	// count in the average. nil: none.
	Padding []int
	// Dilation is the spacing of the window's taps (max pooling only);
	// nil: 1.
	Dilation []int
	// CeilMode rounds the output size up rather than down, so that a
	// last partial window starting inside the input (or its left
	// padding) is kept.
	CeilMode bool
}

// pool2d is PoolOptions checked and normalised; op types hold it, so it is
// comparable. bad, when set, says what was wrong with the options.
type pool2d struct {
	kernel, stride, dilation, pad [2]int
	ceil                          bool
	bad                           string
}

func newPool2d(o PoolOptions, dilated bool) pool2d {
	p := pool2d{ceil: o.CeilMode}
	var err error
	perAxis := func(name string, v []int, def [2]int, least int) [2]int {
		r := def
		switch len(v) {
		case 0:
		case 1:
			r = [2]int{v[0], v[0]}
		case 2:
			r = [2]int{v[0], v[1]}
		default:
			if err == nil {
				err = fmt.Errorf("%s %v: want 1 or 2 values", name, v)
			}
			return r
		}
		if err == nil && min(r[0], r[1]) < least {
			err = fmt.Errorf("%s %v: must be at least %d", name, v, least)
		}
		return r
	}
	if len(o.Kernel) == 0 {
		err = fmt.Errorf("no kernel size")
	}
	p.kernel = perAxis("kernel", o.Kernel, [2]int{1, 1}, 1)
	p.stride = perAxis("stride", o.Stride, p.kernel, 1)
	p.dilation = perAxis("dilation", o.Dilation, [2]int{1, 1}, 1)
	p.pad = perAxis("padding", o.Padding, [2]int{}, 0)
	switch {
	case err != nil:
	case !dilated && p.dilation != [2]int{1, 1}:
		err = fmt.Errorf("dilation %v: average pooling has none", o.Dilation)
	case p.pad[0] > p.kernel[0]/2 || p.pad[1] > p.kernel[1]/2: // PyTorch's rule
		err = fmt.Errorf("padding %v: must be at most half the kernel %v", p.pad, p.kernel)
	}
	if err != nil {
		p.bad = err.Error()
	}
	return p
}

// poolGeom is one pooling's sizes: planes images-times-channels planes of
// h×w pooled to oh×ow.
type poolGeom struct {
	planes, h, w, oh, ow int
	pool2d
}

// geomOf checks an image shape (N,C,H,W) and returns the pooling's sizes.
func (p pool2d) geomOf(x []int) (poolGeom, error) {
	if p.bad != "" {
		return poolGeom{}, fmt.Errorf("%s", p.bad)
	}
	if len(x) != 4 {
		return poolGeom{}, fmt.Errorf("want images (N,C,H,W), got %s", graph.ShapeString(x))
	}
	g := poolGeom{planes: x[0] * x[1], h: x[2], w: x[3], pool2d: p}
	var out [2]int
	for i := range out {
		a := window{in: x[2+i], before: p.pad[i], after: p.pad[i], k: p.kernel[i], stride: p.stride[i], dilation: p.dilation[i]}
		var err error
		if out[i], err = a.poolOut(p.ceil); err != nil {
			return poolGeom{}, fmt.Errorf("%s: %v", axisNames[i], err)
		}
	}
	g.oh, g.ow = out[0], out[1]
	if g.oh == 0 || g.ow == 0 {
		return poolGeom{}, fmt.Errorf("a %v window with dilation %v does not fit images %s padded by %v",
			p.kernel, p.dilation, graph.ShapeString(x), p.pad)
	}
	return g, nil
}

type poolKind uint8

const (
	maxPoolKind       poolKind = iota // x → y
	maxPoolGradKind                   // x, g (y's shape) → x's shape
	maxPoolGatherKind                 // x, G (x's shape) → y's shape
	avgPoolKind                       // x → y
	avgPoolSpreadKind                 // g (y's shape) → x's shape
)

var poolNames = [...]string{
	maxPoolKind:       "MaxPool2D",
	maxPoolGradKind:   "MaxPool2DGrad",
	maxPoolGatherKind: "MaxPool2DGather",
	avgPoolKind:       "AvgPool2D",
	avgPoolSpreadKind: "AvgPool2DSpread",
}

// poolOp is every member of both pooling families; h and w are the
// images' size, which AvgPool2DSpread cannot find from its input.
type poolOp struct {
	kind poolKind
	pool2d
	h, w int
}

// MaxPool2D returns the maximum of each window of images x (N, C, H, W),
// of shape (N, C, H', W'), as PyTorch's max_pool2d: padding counts as -∞,
// and a NaN in a window makes its maximum NaN. Its gradient goes to the
// first maximum of each window, in row-major order, as PyTorch's does.
func MaxPool2D(x *graph.Node, o PoolOptions) *graph.Node {
	return graph.Apply(poolOp{kind: maxPoolKind, pool2d: newPool2d(o, true)}, x)
}

// AvgPool2D returns the mean of each window of images x (N, C, H, W), of
// shape (N, C, H', W'), as PyTorch's avg_pool2d with count_include_pad:
// padding counts as zeros in the mean. It has no dilation.
func AvgPool2D(x *graph.Node, o PoolOptions) *graph.Node {
	return graph.Apply(poolOp{kind: avgPoolKind, pool2d: newPool2d(o, false)}, x)
}

// GlobalAvgPool2D returns the mean of each channel of images x
// (N, C, H, W), of shape (N, C): Mean over the two spatial axes.
func GlobalAvgPool2D(x *graph.Node) *graph.Node {
	if x == nil || x.Type().Rank() != 4 {
		return graph.Apply(shapeError{name: "GlobalAvgPool2D", want: "images (N,C,H,W)"}, x)
	}
	return Mean(x, 2, 3)
}

// Name is the member's name: MaxPool2D, AvgPool2D, or one of their
// gradients.
func (op poolOp) Name() string { return poolNames[op.kind] }

// geom checks the inputs' shapes and returns the pooling's sizes.
func (op poolOp) geom(in [][]int) (poolGeom, error) {
	x := in[0]
	if op.kind == avgPoolSpreadKind && len(x) == 4 {
		x = []int{x[0], x[1], op.h, op.w}
	}
	g, err := op.geomOf(x)
	if err != nil {
		return g, err
	}
	want := []int{x[0], x[1], g.oh, g.ow} // the input that has the output's shape
	var got []int
	switch op.kind {
	case maxPoolGradKind:
		got = in[1]
	case avgPoolSpreadKind:
		got = in[0]
	case maxPoolGatherKind:
		got, want = in[1], x
	}
	if got != nil && !slices.Equal(got, want) {
		return g, fmt.Errorf("%s does not fit the pooling of %s: want %s",
			graph.ShapeString(got), graph.ShapeString(x), graph.ShapeString(want))
	}
	return g, nil
}

func (op poolOp) geomOfTypes(in []graph.Type) (poolGeom, error) {
	shapes := make([][]int, len(in))
	for i, t := range in {
		shapes[i] = t.Shape
	}
	return op.geom(shapes)
}

// arity is the number of inputs.
func (op poolOp) arity() int {
	if op.kind == maxPoolGradKind || op.kind == maxPoolGatherKind {
		return 2
	}
	return 1
}

// pooled reports whether the output is the pooled (smaller) shape.
func (op poolOp) pooled() bool {
	return op.kind == maxPoolKind || op.kind == maxPoolGatherKind || op.kind == avgPoolKind
}

// Type is (N, C, H', W') for the poolings and the gather, (N, C, H, W)
// for the gradients.
func (op poolOp) Type(in []graph.Type) (graph.Type, error) {
	dtype, err := graph.CheckInputs(in, op.arity())
	if err != nil {
		return graph.Type{}, err
	}
	g, err := op.geomOfTypes(in)
	if err != nil {
		return graph.Type{}, err
	}
	n, c := in[0].Shape[0], in[0].Shape[1]
	if op.pooled() {
		return graph.TypeOf(dtype, n, c, g.oh, g.ow), nil
	}
	return graph.TypeOf(dtype, n, c, g.h, g.w), nil
}

// Cost counts one flop per window tap.
func (op poolOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	if g, err := op.geomOfTypes(in); err == nil {
		c.Flops = flops(g.planes, g.oh, g.ow, g.kernel[0], g.kernel[1])
	}
	return c
}

// Backward: MaxPool2D's gradient adds g at the argmaxes; MaxPool2DGrad's
// and MaxPool2DGather's with respect to their second input are each
// other, and with respect to x zero (the argmax is piecewise constant);
// AvgPool2D and AvgPool2DSpread are each other's gradient.
func (op poolOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	x := ctx.Input(0)
	grads := make([]*graph.Node, op.arity())
	last := len(grads) - 1 // the input with a gradient: x, g or G
	if !ctx.NeedsGrad(last) {
		return grads
	}
	o := poolOp{pool2d: op.pool2d}
	in := []*graph.Node{x, g}
	switch op.kind {
	case maxPoolKind, maxPoolGatherKind:
		o.kind = maxPoolGradKind
	case maxPoolGradKind:
		o.kind = maxPoolGatherKind
	case avgPoolKind:
		o.kind, o.h, o.w, in = avgPoolSpreadKind, x.Shape()[2], x.Shape()[3], in[1:]
	case avgPoolSpreadKind:
		o.kind, in = avgPoolKind, in[1:]
	}
	grads[last] = graph.Apply(o, in...)
	return grads
}

// Batch pools each example's images: the batch folds into the images'
// axis.
func (op poolOp) Batch(c *graph.BatchContext) *graph.Node { return rowsBatch(c, op, 0, 1) }

// Forward computes on the calling goroutine; see ForwardExec.
func (op poolOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec spreads the planes over e's threads; each plane is
// computed the same way whatever their number.
func (op poolOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	shapes := make([][]int, 0, 2)
	for _, t := range in {
		shapes = append(shapes, t.Shape())
	}
	g, err := op.geom(shapes)
	if err != nil {
		return err
	}
	return forFloat(out.Dtype(),
		func() error { runPool(e, op.kind, g, out, in, floats[float32]); return nil },
		func() error { runPool(e, op.kind, g, out, in, floats[float64]); return nil })
}

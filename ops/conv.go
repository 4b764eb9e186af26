package ops

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Convolutions, in PyTorch's layouts: images NCHW, weights (out,
// in/groups, kh, kw), so weights move between the two unchanged.
//
// The family is three bilinear ops, each the others' derivative: Conv2D
// (x, w → y), its gradient with respect to the input (gy, w → gx, which is
// also ConvTranspose2D), and its gradient with respect to the weight
// (x, gy → gw). All three are the partial derivatives of one trilinear
// form ⟨Conv2D(x, w), y⟩, so the gradient of each is built from the
// other two and the family differentiates to any order.

// ConvOptions are a convolution's settings, named as PyTorch's nn.Conv2d
// names them. The zero value is stride 1, no padding, dilation 1 and one
// group. Lists give one value for every spatial axis, or one per axis.
// Sizes whose arithmetic would overflow an int are refused.
type ConvOptions struct {
	// Stride between the windows; nil: 1.
	Stride []int
	// Padding is the zeros added around the input: one value for every
	// side, one per axis (both sides), or a before and an after per axis
	// (top, bottom, left, right for images). nil: none.
	Padding []int
	// Same pads so that the output has the input's size, as PyTorch's
	// padding="same" (stride 1 only; an odd total puts the extra zero
	// after). Padding must then be nil.
	Same bool
	// Dilation is the spacing of the kernel's taps; nil: 1.
	Dilation []int
	// Groups splits the channels into groups convolved separately (the
	// input's channel count for a depthwise convolution); 0 means 1.
	Groups int
	// OutputPadding adds rows and columns to one side of a transposed
	// convolution's output (ConvTranspose2D only: the others refuse one
	// that is not zero); each must be smaller than the stride.
	OutputPadding []int
}

// conv2d is ConvOptions checked and normalised for two spatial axes; op
// types hold it, so it is comparable. bad, when set, says what was wrong
// with the options: Type reports it.
type conv2d struct {
	stride, dilation, outPad [2]int
	pad                      [4]int // top, bottom, left, right
	same                     bool
	groups                   int
	bad                      string
}

// newConv2d checks o for a convolution, transposed or not (only a
// transposed one has output padding).
func newConv2d(o ConvOptions, transposed bool) conv2d {
	c := conv2d{groups: max(o.Groups, 1), same: o.Same}
	var err error
	perAxis := func(name string, v []int, def, least int) (r [2]int) {
		switch len(v) {
		case 0:
			return [2]int{def, def}
		case 1:
			r = [2]int{v[0], v[0]}
		case 2:
			r = [2]int{v[0], v[1]}
		default:
			err = fmt.Errorf("%s %v: want 1 or 2 values", name, v)
		}
		if err == nil && min(r[0], r[1]) < least {
			err = fmt.Errorf("%s %v: must be at least %d", name, v, least)
		}
		return r
	}
	c.stride = perAxis("stride", o.Stride, 1, 1)
	c.dilation = perAxis("dilation", o.Dilation, 1, 1)
	c.outPad = perAxis("output padding", o.OutputPadding, 0, 0)
	switch p := o.Padding; len(p) {
	case 0:
	case 1:
		c.pad = [4]int{p[0], p[0], p[0], p[0]}
	case 2:
		c.pad = [4]int{p[0], p[0], p[1], p[1]}
	case 4:
		c.pad = [4]int{p[0], p[1], p[2], p[3]}
	default:
		err = fmt.Errorf("padding %v: want 1, 2 or 4 values", p)
	}
	if err == nil && min(c.pad[0], c.pad[1], c.pad[2], c.pad[3]) < 0 {
		err = fmt.Errorf("padding %v: must not be negative", o.Padding)
	}
	switch {
	case err != nil:
	case o.Groups < 0:
		err = fmt.Errorf("groups %d: must be at least 1", o.Groups)
	case o.Same && len(o.Padding) > 0:
		err = fmt.Errorf("same padding with explicit padding %v", o.Padding)
	case o.Same && c.stride != [2]int{1, 1}:
		err = fmt.Errorf("same padding needs stride 1, got %v", c.stride)
	case !transposed && c.outPad != [2]int{}:
		err = fmt.Errorf("output padding %v: only a transposed convolution has one", o.OutputPadding)
	case c.outPad[0] >= c.stride[0] || c.outPad[1] >= c.stride[1]:
		err = fmt.Errorf("output padding %v must be smaller than the stride %v", c.outPad, c.stride)
	}
	if err != nil {
		c.bad = err.Error()
	}
	return c
}

// geom is one convolution's sizes: n images of c channels h×w, o output
// channels of oh×ow, a kh×kw kernel, in groups of cg input and og output
// channels.
type geom struct {
	n, c, h, w, o, oh, ow, kh, kw int
	groups, cg, og                int
	conv2d
}

// k is the depth of one group's product: a kernel's taps over its
// channels.
func (g geom) k() int { return g.cg * g.kh * g.kw }

// axisNames name the spatial axes in errors.
var axisNames = [2]string{"height", "width"}

// newGeom checks an image shape x (N,C,H,W) against a weight shape
// (O, C/groups, KH, KW) and returns the convolution's sizes.
func (c conv2d) newGeom(x, w []int) (geom, error) {
	if c.bad != "" {
		return geom{}, fmt.Errorf("%s", c.bad)
	}
	if len(x) != 4 || len(w) != 4 {
		return geom{}, fmt.Errorf("want input (N,C,H,W) and weight (out,in/groups,kH,kW), got %s and %s",
			graph.ShapeString(x), graph.ShapeString(w))
	}
	g := geom{n: x[0], c: x[1], h: x[2], w: x[3], o: w[0], cg: w[1], kh: w[2], kw: w[3], groups: c.groups, conv2d: c}
	if cin, ok := mulSizes(g.cg, g.groups); !ok || cin != g.c || g.o%g.groups != 0 || g.kh < 1 || g.kw < 1 {
		return geom{}, fmt.Errorf("input %s and weight %s do not fit %d group(s): want weight (out,in/groups,kH,kW) with out divisible by groups",
			graph.ShapeString(x), graph.ShapeString(w), g.groups)
	}
	g.og = g.o / g.groups
	var out [2]int
	for i, k := range [2]int{g.kh, g.kw} {
		a := window{in: x[2+i], before: g.pad[2*i], after: g.pad[2*i+1], k: k, stride: g.stride[i], dilation: g.dilation[i]}
		var err error
		if g.same { // as much padding as the window reaches, the odd one after
			var reach int
			reach, err = a.reach()
			a.before, a.after = reach/2, reach-reach/2
			g.pad[2*i], g.pad[2*i+1] = a.before, a.after
		}
		if err == nil {
			out[i], err = a.convOut()
		}
		if err != nil {
			return geom{}, fmt.Errorf("%s: %v", axisNames[i], err)
		}
	}
	g.oh, g.ow = out[0], out[1]
	if g.oh == 0 || g.ow == 0 {
		return geom{}, fmt.Errorf("a %d×%d kernel with dilation %v does not fit input %s padded by %v",
			g.kh, g.kw, g.dilation, graph.ShapeString(x), g.pad)
	}
	return g, nil
}

type conv2DOp struct{ conv2d }

// Conv2D returns the 2-D cross-correlation of images x (N, C, H, W) with
// weight w (O, C/groups, kH, kW), of shape (N, O, H', W'), as PyTorch's
// conv2d (without bias: add one of shape (O, 1, 1)).
func Conv2D(x, w *graph.Node, o ConvOptions) *graph.Node {
	return graph.Apply(conv2DOp{newConv2d(o, false)}, x, w)
}

// Conv1D is Conv2D over sequences: x (N, C, L), w (O, C/groups, K), as
// PyTorch's conv1d: Stride and Dilation give one value, Padding one or a
// before and an after; other lengths are refused. It is built from Conv2D
// on images one row high, whose sizes errors give.
func Conv1D(x, w *graph.Node, o ConvOptions) *graph.Node {
	if x == nil || w == nil || x.Graph() != w.Graph() || x.Type().Rank() != 3 || w.Type().Rank() != 3 {
		return graph.Apply(shapeError{name: "Conv1D", want: "input (N,C,L) and weight (out,in/groups,k)"}, x, w)
	}
	xs, ws := x.Shape(), w.Shape()
	x2, w2 := []int{xs[0], xs[1], 1, xs[2]}, []int{ws[0], ws[1], 1, ws[2]}
	o2, err := conv1DOptions(o)
	var g geom
	if err == nil {
		g, err = newConv2d(o2, false).newGeom(x2, w2)
	}
	if err == nil {
		err = g.checkColumns(convForward, x.DType())
	}
	if err != nil {
		return failBuilder("Conv1D", err, x, w)
	}
	y := Conv2D(Reshape(x, x2...), Reshape(w, w2...), o2)
	if y.Type().Rank() != 4 { // poisoned
		return y
	}
	ys := y.Shape()
	return Reshape(y, ys[0], ys[1], ys[3])
}

// conv1DOptions checks the lengths of Conv1D's option lists and moves its
// padding to the width of images one row high. Its one stride and
// dilation stay lists of one value: along the height, one row high with a
// kernel one high, they change nothing.
func conv1DOptions(o ConvOptions) (ConvOptions, error) {
	for _, opt := range []struct {
		name string
		v    []int
	}{{"stride", o.Stride}, {"dilation", o.Dilation}, {"output padding", o.OutputPadding}} {
		if len(opt.v) > 1 {
			return o, fmt.Errorf("%s %v: want one value (Conv1D has one spatial axis)", opt.name, opt.v)
		}
	}
	switch p := o.Padding; len(p) {
	case 0:
	case 1, 2:
		if min(p[0], p[len(p)-1]) < 0 {
			return o, fmt.Errorf("padding %v: must not be negative", p)
		}
		o.Padding = []int{0, 0, p[0], p[len(p)-1]}
	default:
		return o, fmt.Errorf("padding %v: want one value, or a before and an after (Conv1D has one spatial axis)", p)
	}
	return o, nil
}

// Name is "Conv2D".
func (conv2DOp) Name() string { return "Conv2D" }

func (op conv2DOp) geomOf(x, w []int) (geom, error) { return op.newGeom(x, w) }

// Type is (N, O, H', W').
func (op conv2DOp) Type(in []graph.Type) (graph.Type, error) { return convType(op, in) }

// Cost counts 2 flops per multiply-add of the convolution.
func (op conv2DOp) Cost(in []graph.Type, out graph.Type) graph.Cost { return convCost(op, in, out) }

// Backward: the input's gradient is the transposed convolution of g with
// w, the weight's the convolution of x with g.
func (op conv2DOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	x, w := ctx.Input(0), ctx.Input(1)
	grads := make([]*graph.Node, 2)
	if ctx.NeedsGrad(0) {
		grads[0] = convInput(op.conv2d, g, w, x.Shape()[2], x.Shape()[3], false)
	}
	if ctx.NeedsGrad(1) {
		grads[1] = convWeight(op.conv2d, x, g, w.Shape()[2], w.Shape()[3])
	}
	return grads
}

// Batch convolves each example's images with a shared filter as one
// batch of images (the batch folds into the images' axis), and with a
// batched filter as one convolution of B times the groups (the batch
// merges into the channels, each example's a group of its own).
func (op conv2DOp) Batch(c *graph.BatchContext) *graph.Node {
	if !c.Batched(1) {
		return rowsBatch(c, op, 0)
	}
	op.groups *= c.Size()
	return groupedBatch(c, op, 1, false)
}

// Forward computes on the calling goroutine; see ForwardExec.
func (op conv2DOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec spreads the images over e's threads.
func (op conv2DOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	return convExec(op, e, out, in)
}

func (conv2DOp) kind() convKind { return convForward }

// convInputOp is the gradient of Conv2D with respect to its input: from
// gy (N, O, H', W') and w (O, C/groups, kH, kW) to (N, C, H, W). With
// transpose set it is the user's ConvTranspose2D, whose input plays gy.
type convInputOp struct {
	conv2d
	h, w      int
	transpose bool
}

func convInput(c conv2d, gy, w *graph.Node, h, wd int, transpose bool) *graph.Node {
	return graph.Apply(convInputOp{conv2d: c, h: h, w: wd, transpose: transpose}, gy, w)
}

// ConvTranspose2D returns the transposed convolution of x (N, Cin, H, W)
// with w (Cin, Cout/groups, kH, kW), PyTorch's conv_transpose2d: the
// gradient of Conv2D with respect to its input, of shape (N, Cout, H', W')
// with H' = (H-1)·stride - padding (both sides) + dilation·(kH-1) +
// output padding + 1.
func ConvTranspose2D(x, w *graph.Node, o ConvOptions) *graph.Node {
	c := newConv2d(o, true)
	if c.same && c.bad == "" {
		c.bad = "same padding is not defined for a transposed convolution"
	}
	var out [2]int
	if x != nil && w != nil && x.Type().Rank() == 4 && w.Type().Rank() == 4 && c.bad == "" {
		xs, ws := x.Shape(), w.Shape()
		for i := 0; i < len(out) && c.bad == ""; i++ {
			a := window{in: xs[2+i], before: c.pad[2*i], after: c.pad[2*i+1], k: ws[2+i], stride: c.stride[i], dilation: c.dilation[i]}
			var err error
			if out[i], err = a.transposedOut(c.outPad[i]); err != nil {
				c.bad = fmt.Sprintf("%s: %v", axisNames[i], err)
			}
		}
	}
	return convInput(c, x, w, out[0], out[1], true)
}

// Name is "ConvTranspose2D", or "Conv2DInputGrad" in a gradient.
func (op convInputOp) Name() string {
	if op.transpose {
		return "ConvTranspose2D"
	}
	return "Conv2DInputGrad"
}

// geom is the convolution whose input gradient op computes, from gy's
// and w's shapes.
func (op convInputOp) geomOf(gy, w []int) (geom, error) {
	if op.bad != "" {
		return geom{}, fmt.Errorf("%s", op.bad)
	}
	if len(gy) != 4 || len(w) != 4 {
		if op.transpose {
			return geom{}, fmt.Errorf("want input (N,Cin,H,W) and weight (Cin,Cout/groups,kH,kW), got %s and %s",
				graph.ShapeString(gy), graph.ShapeString(w))
		}
		return geom{}, fmt.Errorf("want gradient (N,O,H,W) and weight (O,C/groups,kH,kW), got %s and %s",
			graph.ShapeString(gy), graph.ShapeString(w))
	}
	if op.h < 1 || op.w < 1 {
		return geom{}, fmt.Errorf("output size %d×%d is empty", op.h, op.w)
	}
	c, ok := mulSizes(w[1], op.groups)
	if !ok {
		return geom{}, fmt.Errorf("weight %s in %d groups has more channels than an int can count", graph.ShapeString(w), op.groups)
	}
	g, err := op.newGeom([]int{gy[0], c, op.h, op.w}, w)
	if err != nil {
		return geom{}, err
	}
	if g.o != gy[1] || g.oh != gy[2] || g.ow != gy[3] {
		return geom{}, fmt.Errorf("input %s does not fit weight %s: want (N,%d,%d,%d)",
			graph.ShapeString(gy), graph.ShapeString(w), g.o, g.oh, g.ow)
	}
	return g, nil
}

// Type is (N, C, H, W).
func (op convInputOp) Type(in []graph.Type) (graph.Type, error) { return convType(op, in) }

// Cost counts 2 flops per multiply-add of the convolution.
func (op convInputOp) Cost(in []graph.Type, out graph.Type) graph.Cost { return convCost(op, in, out) }

// Backward: with G the gradient of the output (x's shape), gy's gradient
// is Conv2D(G, w) and w's the weight gradient of G and gy.
func (op convInputOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	gy, w := ctx.Input(0), ctx.Input(1)
	grads := make([]*graph.Node, 2)
	if ctx.NeedsGrad(0) {
		grads[0] = graph.Apply(conv2DOp{op.conv2d}, g, w)
	}
	if ctx.NeedsGrad(1) {
		grads[1] = convWeight(op.conv2d, g, gy, w.Shape()[2], w.Shape()[3])
	}
	return grads
}

// Batch is Conv2D's: the batch folds into the images' axis of gy where
// the filter is shared, and into the channels, as groups, where it is
// batched.
func (op convInputOp) Batch(c *graph.BatchContext) *graph.Node {
	if !c.Batched(1) {
		return rowsBatch(c, op, 0)
	}
	op.groups *= c.Size()
	return groupedBatch(c, op, 1, false)
}

// Forward computes on the calling goroutine; see ForwardExec.
func (op convInputOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec spreads the images over e's threads.
func (op convInputOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	return convExec(op, e, out, in)
}

func (convInputOp) kind() convKind { return convInputGrad }

// convWeightOp is the gradient of Conv2D with respect to its weight:
// from x (N, C, H, W) and gy (N, O, H', W') to (O, C/groups, kH, kW).
type convWeightOp struct {
	conv2d
	kh, kw int
}

func convWeight(c conv2d, x, gy *graph.Node, kh, kw int) *graph.Node {
	return graph.Apply(convWeightOp{conv2d: c, kh: kh, kw: kw}, x, gy)
}

// Name is "Conv2DWeightGrad".
func (convWeightOp) Name() string { return "Conv2DWeightGrad" }

func (op convWeightOp) geomOf(x, gy []int) (geom, error) {
	if len(x) != 4 || len(gy) != 4 {
		return geom{}, fmt.Errorf("want input (N,C,H,W) and gradient (N,O,H,W), got %s and %s",
			graph.ShapeString(x), graph.ShapeString(gy))
	}
	if x[1]%op.groups != 0 {
		return geom{}, fmt.Errorf("input %s: channels not divisible by %d groups", graph.ShapeString(x), op.groups)
	}
	g, err := op.newGeom(x, []int{gy[1], x[1] / op.groups, op.kh, op.kw})
	if err != nil {
		return geom{}, err
	}
	if g.n != gy[0] || g.oh != gy[2] || g.ow != gy[3] {
		return geom{}, fmt.Errorf("gradient %s does not fit input %s: want (%d,%d,%d,%d)",
			graph.ShapeString(gy), graph.ShapeString(x), g.n, g.o, g.oh, g.ow)
	}
	return g, nil
}

// Type is (O, C/groups, kH, kW).
func (op convWeightOp) Type(in []graph.Type) (graph.Type, error) { return convType(op, in) }

// Cost counts 2 flops per multiply-add of the convolution.
func (op convWeightOp) Cost(in []graph.Type, out graph.Type) graph.Cost { return convCost(op, in, out) }

// Backward: with G the gradient of the output (w's shape), x's gradient
// is the input gradient of gy through G, and gy's is Conv2D(x, G).
func (op convWeightOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	x, gy := ctx.Input(0), ctx.Input(1)
	grads := make([]*graph.Node, 2)
	if ctx.NeedsGrad(0) {
		grads[0] = convInput(op.conv2d, gy, g, x.Shape()[2], x.Shape()[3], false)
	}
	if ctx.NeedsGrad(1) {
		grads[1] = graph.Apply(conv2DOp{op.conv2d}, x, g)
	}
	return grads
}

// Batch takes each example's filter gradient as one of B times the
// groups: the batch merges into the channels of x and gy, each example's
// a group of its own, and the filter's rows are the examples' filters.
func (op convWeightOp) Batch(c *graph.BatchContext) *graph.Node {
	op.groups *= c.Size()
	return groupedBatch(c, op, -1, true)
}

// Forward computes on the calling goroutine; see ForwardExec.
func (op convWeightOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec sums over the images in order, each product on e's
// threads, so the sum does not depend on their number.
func (op convWeightOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	return convExec(op, e, out, in)
}

func (convWeightOp) kind() convKind { return convWeightGrad }

// convMember is what the three ops of the family share: each finds the
// convolution from its two inputs' shapes and runs one of its kernels.
type convMember interface {
	geomOf(a, b []int) (geom, error)
	kind() convKind
}

// out is the shape of kind's result.
func (g geom) out(kind convKind) []int {
	switch kind {
	case convInputGrad:
		return []int{g.n, g.c, g.h, g.w}
	case convWeightGrad:
		return []int{g.o, g.cg, g.kh, g.kw}
	}
	return []int{g.n, g.o, g.oh, g.ow}
}

func convType[M convMember](m M, in []graph.Type) (graph.Type, error) {
	dtype, err := graph.CheckInputs(in, 2)
	if err != nil {
		return graph.Type{}, err
	}
	g, err := m.geomOf(in[0].Shape, in[1].Shape)
	if err != nil {
		return graph.Type{}, err
	}
	if err := g.checkColumns(m.kind(), dtype); err != nil {
		return graph.Type{}, err
	}
	return graph.TypeOf(dtype, g.out(m.kind())...), nil
}

// checkColumns refuses a convolution whose kernel for kind would unfold
// an image into more columns (k×oh×ow, in dtype) than the memory limit
// allows (graph.Bytes); it unfolds none when the image is its own
// unfolding or there is nothing to compute.
func (g geom) checkColumns(kind convKind, dtype tensor.Dtype) error {
	if g.idle(kind) || g.direct() {
		return nil
	}
	if _, err := graph.Bytes(dtype, []int{g.k(), g.oh, g.ow}, 0); err != nil {
		return fmt.Errorf("unfolding the input: %v", err)
	}
	return nil
}

// convCost is the default estimate with 2 flops per multiply-add,
// N·O·H'·W'·C/groups·kH·kW of them, for every member.
func convCost[M convMember](m M, in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	if g, err := m.geomOf(in[0].Shape, in[1].Shape); err == nil {
		c.Flops = flops(2, g.n, g.o, g.oh, g.ow, g.k())
	}
	return c
}

// convExec runs m's kernel, placing its inputs and output as runConv's
// images x, weight w and output-side images y.
func convExec[M convMember](m M, e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	g, err := m.geomOf(in[0].Shape(), in[1].Shape())
	if err != nil {
		return err
	}
	x, w, y := in[0], in[1], out // Conv2D
	switch m.kind() {
	case convInputGrad:
		x, w, y = out, in[1], in[0]
	case convWeightGrad:
		x, w, y = in[0], out, in[1]
	}
	return forFloat(out.Dtype(),
		func() error {
			runConv(e, m.kind(), g, floats[float32](x), floats[float32](w), floats[float32](y))
			return nil
		},
		func() error {
			runConv(e, m.kind(), g, floats[float64](x), floats[float64](w), floats[float64](y))
			return nil
		})
}

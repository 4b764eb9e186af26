package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
)

// Convolutions, pooling, normalisation, padding and dropout.
func init() {
	register(map[string]importFunc{
		"Conv":               one(importConv),
		"ConvTranspose":      one(importConvTranspose),
		"MaxPool":            one(func(c *nodeContext) (*graph.Node, error) { return importPool(c, true) }),
		"AveragePool":        one(func(c *nodeContext) (*graph.Node, error) { return importPool(c, false) }),
		"GlobalAveragePool":  one(func(c *nodeContext) (*graph.Node, error) { return importGlobalPool(c, ops.MeanKeepDims) }),
		"GlobalMaxPool":      one(func(c *nodeContext) (*graph.Node, error) { return importGlobalPool(c, ops.MaxKeepDims) }),
		"BatchNormalization": one(importBatchNorm),
		"LayerNormalization": importLayerNorm,
		"Pad":                one(importPad),
		"Dropout":            one(importDropout),
	})
	window := attrs{"auto_pad": onlyStrings("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"), "dilations": {}, "kernel_shape": {}, "pads": {}, "strides": {}}
	conv := with(window, attrs{"group": atLeast(1)})
	accept(map[string]attrs{
		"Conv":          conv,
		"ConvTranspose": with(conv, attrs{"output_padding": {}, "output_shape": {}}),
		"MaxPool":       with(window, attrs{"ceil_mode": {from: 10}, "dilations": {from: 10}, "storage_order": onlyInts(0).opsets(8, 0)}),
		"AveragePool":   with(window, attrs{"ceil_mode": {from: 10}, "count_include_pad": {from: 7}, "dilations": allOnes.opsets(19, 0)}),
		// momentum updates the running statistics in training mode.
		"BatchNormalization": {"epsilon": {}, "momentum": {}, "training_mode": onlyInts(0), "spatial": onlyInts(1).opsets(0, 8), "is_test": inference},
		"LayerNormalization": {"axis": {}, "epsilon": {}, "stash_type": onlyInts(int(onnxpb.TensorProto_FLOAT), int(onnxpb.TensorProto_DOUBLE))},
		// Opset 1's paddings became pads at opset 2, and pads and value
		// inputs at opset 11.
		"Pad": {"mode": onlyStrings("constant", "edge", "reflect"), "paddings": {to: 1}, "pads": {from: 2, to: 10}, "value": {to: 10}},
		// ratio and seed say what training drops.
		"Dropout": {"is_test": inference, "ratio": {to: 11}, "seed": {from: 12}},
	})
}

// window is a convolution's or pooling's geometry along its spatial axes,
// as ONNX gives it.
type window struct {
	kernel, stride, dilation []int
	pads                     []int // begin of each axis, then end of each
}

// readWindow reads kernel_shape (or the weight's), strides, dilations,
// pads and auto_pad for an input of spatial size in.
func readWindow(c *nodeContext, in, kernel []int) (window, error) {
	d := len(in)
	w := window{kernel: kernel, stride: c.attrInts("strides"), dilation: c.attrInts("dilations"), pads: c.attrInts("pads")}
	if k := c.attrInts("kernel_shape"); k != nil {
		if kernel != nil && !slices.Equal(k, kernel) { // a convolution's weight gives its kernel
			return w, fmt.Errorf("kernel_shape %v differs from the weight's spatial shape %v", k, kernel)
		}
		w.kernel = k
	}
	fill := func(v []int, def, n int) []int {
		if v == nil {
			v = make([]int, n)
			for i := range v {
				v[i] = def
			}
		}
		return v
	}
	w.stride, w.dilation, w.pads = fill(w.stride, 1, d), fill(w.dilation, 1, d), fill(w.pads, 0, 2*d)
	if len(w.kernel) != d || len(w.stride) != d || len(w.dilation) != d || len(w.pads) != 2*d {
		return w, fmt.Errorf("kernel %v, strides %v, dilations %v and pads %v do not fit %d spatial axes", w.kernel, w.stride, w.dilation, w.pads, d)
	}
	for i := range d {
		if w.stride[i] < 1 || w.dilation[i] < 1 || w.kernel[i] < 1 {
			return w, fmt.Errorf("kernel %v, strides %v and dilations %v must be positive", w.kernel, w.stride, w.dilation)
		}
	}
	switch pad := c.attrString("auto_pad", "NOTSET"); pad {
	case "NOTSET":
	case "VALID":
		w.pads = make([]int, 2*d)
	case "SAME_UPPER", "SAME_LOWER":
		for i := range d {
			out := (in[i] + w.stride[i] - 1) / w.stride[i]
			total := max((out-1)*w.stride[i]+(w.kernel[i]-1)*w.dilation[i]+1-in[i], 0)
			small := total / 2
			if pad == "SAME_UPPER" {
				w.pads[i], w.pads[d+i] = small, total-small
			} else {
				w.pads[i], w.pads[d+i] = total-small, small
			}
		}
	default:
		return w, unsupported("auto_pad %q", pad)
	}
	return w, nil
}

// to2D makes a 1-D window 2-D, one row high.
func (w window) to2D() window {
	if len(w.kernel) == 2 {
		return w
	}
	return window{kernel: []int{1, w.kernel[0]}, stride: []int{1, w.stride[0]}, dilation: []int{1, w.dilation[0]},
		pads: []int{0, w.pads[0], 0, w.pads[1]}}
}

// convPadding is a 2-D window's padding as ops.ConvOptions orders it.
func (w window) convPadding() []int { return []int{w.pads[0], w.pads[2], w.pads[1], w.pads[3]} }

// spatial returns x with one spatial axis made two (a row one high) and
// a function undoing that on the result.
func spatial(x *graph.Node) (*graph.Node, func(*graph.Node) *graph.Node, error) {
	switch x.Type().Rank() {
	case 4:
		return x, func(y *graph.Node) *graph.Node { return y }, nil
	case 3:
		s := x.Shape()
		return ops.Reshape(x, s[0], s[1], 1, s[2]), func(y *graph.Node) *graph.Node {
			ys := y.Shape()
			if len(ys) != 4 { // the node of an op refused, whose error the graph holds
				return y
			}
			return ops.Reshape(y, ys[0], ys[1], ys[3])
		}, nil
	}
	return nil, nil, unsupported("input %v: 1-D and 2-D convolutions and poolings only, (N,C,L) or (N,C,H,W)", x.Type())
}

// addChannelBias adds a (C) bias to y (N, C, ...).
func addChannelBias(y, b *graph.Node) *graph.Node {
	if b == nil {
		return y
	}
	if y.Type().Rank() < 2 {
		return ops.Add(y, channelVector(b, y.Type().Rank()))
	}
	return ops.ChannelAffine(y, nil, b)
}

// channelVector reshapes v (C) to (C, 1, ...) for an input of rank.
func channelVector(v *graph.Node, rank int) *graph.Node {
	shape := []int{v.Type().Size()}
	for len(shape) < rank-1 {
		shape = append(shape, 1)
	}
	return ops.Reshape(v, shape...)
}

// transposedPads computes a ConvTranspose's pads from output_shape or
// auto_pad SAME (an output stride times the input), as ONNX's definition
// does: the total padding that gives that shape, split with the odd one
// at the end for SAME_UPPER (and at the start otherwise).
func transposedPads(c *nodeContext, win window, in []int) (window, []int, error) {
	mode := c.attrString("auto_pad", "NOTSET")
	out := c.attrInts("output_shape")
	if len(out) > len(in) {
		out = out[len(out)-len(in):] // the full shape, batch and channels included
	}
	if out == nil && (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
		for i, d := range in {
			out = append(out, d*win.stride[i])
		}
	}
	outPad := c.attrInts("output_padding")
	if outPad != nil && len(outPad) != len(in) {
		return win, nil, fmt.Errorf("output_padding %v for %d spatial axes", outPad, len(in))
	}
	if out == nil {
		return win, outPad, nil
	}
	if len(out) != len(in) {
		return win, nil, fmt.Errorf("output_shape %v and output_padding %v for %d spatial axes", c.attrInts("output_shape"), outPad, len(in))
	}
	d := len(in)
	pad := make([]int, d)
	for i := range in {
		if outPad != nil {
			pad[i] = outPad[i]
		}
		total := win.stride[i]*(in[i]-1) + pad[i] + (win.kernel[i]-1)*win.dilation[i] + 1 - out[i]
		if total < 0 { // a larger output than the convolution spans: padding after it
			pad[i], total = pad[i]-total, 0
		}
		if mode == "SAME_UPPER" {
			win.pads[i], win.pads[d+i] = total/2, total-total/2
		} else {
			win.pads[i], win.pads[d+i] = total-total/2, total/2
		}
	}
	return win, pad, nil
}

func importConv(c *nodeContext) (*graph.Node, error) { return conv(c, false) }

func importConvTranspose(c *nodeContext) (*graph.Node, error) { return conv(c, true) }

// conv imports Conv and ConvTranspose, with an optional bias.
func conv(c *nodeContext, transposed bool) (*graph.Node, error) {
	in, err := c.inputs(2)
	if err != nil {
		return nil, err
	}
	x, wt := in[0], in[1]
	x2, back, err := spatial(x)
	if err != nil {
		return nil, err
	}
	if wt.Type().Rank() != x.Type().Rank() {
		return nil, fmt.Errorf("weight %v does not fit input %v", wt.Type(), x.Type())
	}
	win, err := readWindow(c, x.Shape()[2:], wt.Shape()[2:])
	if err != nil {
		return nil, err
	}
	var outPad []int
	if transposed {
		if win, outPad, err = transposedPads(c, win, x.Shape()[2:]); err != nil {
			return nil, err
		}
	}
	w2, _, _ := spatial(wt)
	win = win.to2D()
	o := ops.ConvOptions{Stride: win.stride, Dilation: win.dilation, Padding: win.convPadding(), Groups: c.attrInt("group", 1)}
	var y *graph.Node
	if transposed {
		if outPad != nil {
			o.OutputPadding = outPad
			if len(outPad) == 1 {
				o.OutputPadding = []int{0, outPad[0]}
			}
		}
		y = ops.ConvTranspose2D(x2, w2, o)
	} else {
		y = ops.Conv2D(x2, w2, o)
	}
	out := addChannelBias(back(y), c.optional(2))
	if !transposed {
		if c.im.convs == nil {
			c.im.convs = map[*graph.Node]convParts{}
		}
		c.im.convs[out] = convParts{x: x2, w: wt, bias: c.optional(2), opts: o, back: back}
	}
	return out, nil
}

// convParts is what an imported Conv was built from: its input (made 2-D),
// weight (as in the model), optional bias and options, and the function
// giving its result the input's rank.
type convParts struct {
	x, w, bias *graph.Node
	opts       ops.ConvOptions
	back       func(*graph.Node) *graph.Node
}

// foldIntoConv returns the convolution of p with its output channels
// scaled by s and then shifted by shift, built as a convolution with the
// weight w·s and the bias bias·s + shift, or nil when p's weight, bias, s
// or shift are not all computed from constants (from). With constant weights (Options.Frozen),
// the compiler folds the new weight and bias, so that an inference batch
// norm after a convolution costs nothing at run time, as ONNX Runtime
// makes it; the values differ from the two passes' by float rounding.
func foldIntoConv(p convParts, s, shift *graph.Node, from ...*graph.Node) *graph.Node {
	for _, n := range append(from, p.w, p.bias) {
		if n != nil && n.Kind() != graph.KindConst {
			return nil
		}
	}
	w := ops.Mul(p.w, channelVector(s, p.w.Type().Rank()+1))
	bias := shift
	if p.bias != nil {
		bias = ops.Add(ops.Mul(p.bias, s), shift)
	}
	w2, _, _ := spatial(w)
	return addChannelBias(p.back(ops.Conv2D(p.x, w2, p.opts)), bias)
}

// importPool imports MaxPool and AveragePool (1-D or 2-D). Padding the
// pooling ops take (the same on both sides, at most half the kernel) is
// passed to them; other padding is added explicitly: the lowest finite
// value for MaxPool, zeros for AveragePool. AveragePool without
// count_include_pad divides by the count of real elements in each window,
// the average pooling of a constant one padded alike.
func importPool(c *nodeContext, isMax bool) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	if len(c.proto.GetOutput()) > 1 && c.proto.GetOutput()[1] != "" {
		return nil, unsupported("the indices output")
	}
	x2, back, err := spatial(x)
	if err != nil {
		return nil, err
	}
	win, err := readWindow(c, x.Shape()[2:], nil)
	if err != nil {
		return nil, err
	}
	win = win.to2D()
	o := ops.PoolOptions{Kernel: win.kernel, Stride: win.stride, Padding: win.pads[:2], CeilMode: c.attrInt("ceil_mode", 0) != 0}
	explicit := win.pads[0] != win.pads[2] || win.pads[1] != win.pads[3] || 2*win.pads[0] > win.kernel[0] || 2*win.pads[1] > win.kernel[1]
	if explicit {
		if o.CeilMode {
			return nil, unsupported("ceil_mode with pads %v", win.pads)
		}
		o.Padding = nil
	}
	// padded pads v explicitly when needed, with fill outside.
	padded := func(v *graph.Node, fill float64) *graph.Node {
		if !explicit {
			return v
		}
		return padConstant(v, []int{2, 3}, []int{win.pads[0], win.pads[1]}, []int{win.pads[2], win.pads[3]}, fill)
	}
	if isMax { // storage_order 0: the table refuses 1
		o.Dilation = win.dilation
		lowest := -math.MaxFloat64
		if x.DType() == graph.Float32 {
			lowest = -math.MaxFloat32
		}
		return back(ops.MaxPool2D(padded(x2, lowest), o)), nil
	}
	y := ops.AvgPool2D(padded(x2, 0), o) // dilations 1: the table refuses others
	if c.attrInt("count_include_pad", 0) == 0 && (win.pads[0]+win.pads[1]+win.pads[2]+win.pads[3] > 0 || o.CeilMode) {
		s := x2.Shape()
		count := ops.AvgPool2D(padded(ops.BroadcastTo(scalar(x, 1), 1, 1, s[2], s[3]), 0), o)
		y = ops.Div(y, count)
	}
	return back(y), nil
}

// padConstant pads v along axes by before and after elements of value
// fill: Pad's zeros, plus fill·(1 - the padded ones) where fill is not 0,
// which leaves v's elements exact.
func padConstant(v *graph.Node, axes, before, after []int, fill float64) *graph.Node {
	y, mask := v, ops.BroadcastTo(scalar(v, 1), v.Shape()...)
	for i, a := range axes {
		if before[i] == 0 && after[i] == 0 {
			continue
		}
		y = ops.Pad(y, a, before[i], after[i])
		mask = ops.Pad(mask, a, before[i], after[i])
	}
	if fill == 0 || y == v {
		return y
	}
	return ops.Add(y, ops.Scale(ops.Sub(scalar(v, 1), mask), fill))
}

// importGlobalPool reduces every spatial axis, keeping them.
func importGlobalPool(c *nodeContext, f func(*graph.Node, ...int) *graph.Node) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	var axes []int
	for i := 2; i < x.Type().Rank(); i++ {
		axes = append(axes, i)
	}
	if len(axes) == 0 {
		return nil, fmt.Errorf("input %v has no spatial axes", x.Type())
	}
	return f(x, axes...), nil
}

// importBatchNorm is inference: (x - mean)/√(var + ε)·scale + B, built as
// x·s + (B - mean·s) with s = scale/√(var + ε), so that every input stays
// differentiable.
func importBatchNorm(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(5)
	if err != nil {
		return nil, err
	}
	if len(c.proto.GetOutput()) > 1 && c.proto.GetOutput()[1] != "" { // training_mode 0: the table refuses 1
		return nil, unsupported("training mode (import for inference)")
	}
	x, scale, bias, mean, variance := in[0], in[1], in[2], in[3], in[4]
	s := ops.Div(scale, ops.Sqrt(ops.Add(variance, scalar(variance, c.attrFloat("epsilon", 1e-5)))))
	shift := ops.Sub(bias, ops.Mul(mean, s))
	if r := x.Type().Rank(); r < 2 {
		return ops.Add(ops.Mul(x, channelVector(s, r)), channelVector(shift, r)), nil
	}
	if p, ok := c.im.convs[x]; ok {
		if y := foldIntoConv(p, s, shift, in[1:]...); y != nil {
			return y, nil
		}
	}
	return ops.ChannelAffine(x, s, shift), nil // one pass, with its own kernel
}

// importLayerNorm normalises over the axes from axis on; its optional
// outputs are the mean and the inverse standard deviation, of the dtype
// they are computed in.
func importLayerNorm(c *nodeContext) ([]*graph.Node, error) {
	in, err := c.inputs(2)
	if err != nil {
		return nil, err
	}
	x, scale, bias := in[0], in[1], c.optional(2)
	axis, err := graph.NormalizeAxis(c.attrInt("axis", -1), max(x.Type().Rank(), 1))
	if err != nil {
		return nil, err
	}
	var axes []int
	for i := axis; i < x.Type().Rank(); i++ {
		axes = append(axes, i)
	}
	// The statistics are computed in stash_type: in float64 for DOUBLE;
	// FLOAT, the default, is taken as the input's own dtype, so that a
	// float64 input keeps its precision.
	xs := x
	if c.attrInt("stash_type", 1) == int(onnxpb.TensorProto_DOUBLE) {
		xs = ops.Cast(x, graph.Float64)
	}
	mean := ops.MeanKeepDims(xs, axes...)
	d := ops.Sub(xs, mean)
	inv := ops.Div(scalar(xs, 1), ops.Sqrt(ops.Add(ops.MeanKeepDims(ops.Square(d), axes...), scalar(xs, c.attrFloat("epsilon", 1e-5)))))
	y := ops.Mul(ops.Cast(ops.Mul(d, inv), x.DType()), scale)
	if bias != nil {
		y = ops.Add(y, bias)
	}
	return []*graph.Node{y, mean, inv}, nil
}

// importPad pads with a constant, the edge values or their reflection;
// negative pads crop.
// padsOf reads Pad's pads: an input from opset 11 on, an attribute
// before, named paddings at opset 1. Opset 1's paddings are counts of
// values added, in pads's order (each axis's begin, then each axis's
// end, as its description says; the example beside it, [0, 0, 2, 0] for
// 2 before axis 1, is written in another order, which opset 2 corrected
// to [0, 2, 0, 0]); opset 2's pads may be negative, removing values.
func padsOf(c *nodeContext) ([]int, error) {
	if c.im.opset >= 2 {
		pads, _, err := c.intsFrom("pads", 1)
		return pads, err
	}
	pads := c.attrInts("paddings")
	if slices.ContainsFunc(pads, func(p int) bool { return p < 0 }) {
		return nil, fmt.Errorf("paddings %v: opset 1's paddings count the values added, at least 0 (negative pads, removing values, came at opset 2)", pads)
	}
	return pads, nil
}

func importPad(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	mode := c.attrString("mode", "constant")
	if mode != "constant" && mode != "edge" && mode != "reflect" {
		return nil, unsupported("mode %q", mode)
	}
	pads, err := padsOf(c)
	if err != nil {
		return nil, err
	}
	value := c.attrFloat("value", 0)
	if c.optional(2) != nil {
		v, err := c.known(2)
		if err != nil {
			return nil, err
		}
		if v.Shape().TotalSize() != 1 {
			return nil, fmt.Errorf("constant_value holds %d values, want 1", v.Shape().TotalSize())
		}
		value = graph.Float(v, 0)
	}
	rank := x.Type().Rank()
	axes := make([]int, rank)
	for i := range axes {
		axes[i] = i
	}
	if c.optional(3) != nil {
		if axes, err = c.knownInts(3); err != nil {
			return nil, err
		}
	}
	if len(pads) != 2*len(axes) {
		return nil, fmt.Errorf("pads %v: want %d values for axes %v", pads, 2*len(axes), axes)
	}
	before, after := make([]int, len(axes)), make([]int, len(axes))
	shape := append([]int(nil), x.Shape()...)
	for i, a := range axes {
		if axes[i], err = graph.NormalizeAxis(a, rank); err != nil {
			return nil, err
		}
		a, n := axes[i], x.Shape()[axes[i]]
		b, e := pads[i], pads[len(axes)+i]
		if b < 0 || e < 0 { // crop first
			start, end := max(-b, 0), n-max(-e, 0)
			if start > end {
				return nil, fmt.Errorf("pads %v crop axis %d of size %d to nothing", pads, a, n)
			}
			x = viaFloat1(x, func(x *graph.Node) *graph.Node { return ops.Slice(x, a, start, end) })
		}
		before[i], after[i] = max(b, 0), max(e, 0)
		shape[a] = x.Shape()[a] + before[i] + after[i]
	}
	if _, err := shapeOf(int64s(shape), x.DType()); err != nil {
		return nil, err
	}
	if mode == "constant" {
		return viaFloat1(x, func(x *graph.Node) *graph.Node { return padConstant(x, axes, before, after, value) }), nil
	}
	for i, a := range axes {
		n := x.Shape()[a]
		// The copies are gathered by index: 2⁴⁰ of them would take
		// 8 TiB even where another axis is empty and the output none.
		if _, err := shapeOf([]int64{int64(max(before[i], after[i]))}, graph.Int64); err != nil {
			return nil, fmt.Errorf("%s padding (%d, %d) of axis %d: %v", mode, before[i], after[i], a, err)
		}
		if mode == "reflect" && (before[i] >= n || after[i] >= n) {
			return nil, unsupported("reflect pads %v on axis %d of size %d", pads, a, n)
		}
		if n == 0 && before[i]+after[i] > 0 {
			return nil, fmt.Errorf("%s padding of an empty axis %d", mode, a)
		}
		x = viaFloat1(x, func(x *graph.Node) *graph.Node { return padCopies(x, a, before[i], after[i], mode == "reflect") })
	}
	return x, nil
}

// padCopies pads axis a with copies of the edge values, or with their
// reflection (not repeating the edge).
func padCopies(x *graph.Node, a, before, after int, reflect bool) *graph.Node {
	n := x.Shape()[a]
	index := func(k int) int { // the source of the k-th padded element, counted outwards
		if reflect {
			return k + 1
		}
		return 0
	}
	pick := func(count int, from func(k int) int) *graph.Node {
		idx := make([]int64, count)
		for k := range idx {
			idx[k] = int64(from(k))
		}
		t, _ := graph.FromInt64s(graph.Int64, idx, count)
		return gather(x, x.Graph().Const(t), a)
	}
	parts := []*graph.Node{}
	if before > 0 {
		parts = append(parts, pick(before, func(k int) int { return index(before - 1 - k) }))
	}
	parts = append(parts, x)
	if after > 0 {
		parts = append(parts, pick(after, func(k int) int { return n - 1 - index(k) }))
	}
	if len(parts) == 1 {
		return x
	}
	return ops.Concat(a, parts...)
}

// importDropout is the identity of inference; its mask is not supported.
func importDropout(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	if c.optional(2) != nil {
		if t, err := c.known(2); err != nil || graph.Float(t, 0) != 0 {
			return nil, unsupported("training mode")
		}
	}
	if len(c.proto.GetOutput()) > 1 && c.proto.GetOutput()[1] != "" {
		return nil, unsupported("the mask output")
	}
	return ops.Identity(x), nil
}

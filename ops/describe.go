package ops

// Attributes are a built-in op's parameters, for packages that translate
// graphs into other formats (package onnx writes ONNX models with them).
// Describe sets the fields the op has and leaves the others zero; an op's
// name (graph.Op's Name) tells which it has.
type Attributes struct {
	// Axis is the axis of Slice, Pad, Concat, Softmax and LogSoftmax, in
	// [0, rank).
	Axis int
	// Axes are a reduction's axes (Sum, Mean, Max, LogSumExp), ascending.
	Axes []int
	// KeepDims tells whether a reduction keeps its axes as size-1
	// dimensions.
	KeepDims bool
	// Start and End bound Slice's range along Axis.
	Start, End int
	// Before and After are Pad's zeros along Axis.
	Before, After int
	// Perm is Transpose's permutation.
	Perm []int
	// C is Scale's factor and PowConst's exponent.
	C float64
	// TransA and TransB are MatMul's and MatMulAdd's transpose flags.
	TransA, TransB bool
	// Conv holds the settings of a Conv2D, of a transposed convolution or
	// of Conv2D's gradient with respect to its weight, with
	// Padding as top, bottom, left, right (zero when Same) and every list
	// per axis.
	Conv ConvOptions
	// Transposed tells a transposed convolution (ConvTranspose2D, or
	// Conv2D's gradient with respect to its input) from Conv2D.
	Transposed bool
	// Pool holds the settings of MaxPool2D, AvgPool2D and their gradients,
	// every list per axis, Padding as top and left (applied on both sides).
	Pool PoolOptions
	// Terms counts a ChannelAffine's (input, scale) pairs, Shift tells
	// whether it adds a shift, and Unit whether its first term scales by 1
	// (no scale input): its inputs are the terms' inputs, their scales and
	// the shift.
	Terms       int
	Shift, Unit bool
	// Centred tells a ChannelDot of three inputs, Σ u·(v - m), from Σ u·v.
	Centred bool
	// Eps is BatchNorm's, whose inputs are x, its mean and variance, the
	// weight and the bias.
	Eps float64
	// Carries, Sums and Sequences count a Scan's carried states, the sums
	// it adds up over the steps (a gradient's) and its sequences; Steps is
	// its length and Reverse tells a loop from the last step to the first.
	// Its body is the op's graph.SubgraphOp subgraph, with inputs the
	// carries, the sequences' slices and the values it reads from
	// enclosing graphs (the op's inputs after its carries, sums and
	// sequences, in order), and outputs the new carries, the sums' terms,
	// the step outputs and the carries each step began with; the op's
	// outputs are the final carries and sums and the stacked step outputs
	// and carries.
	Carries, Sums, Sequences, Steps int
	Reverse                         bool
}

// Describe returns the parameters of a built-in op (a graph.Op, or a
// graph.MultiOp such as Scan's); ok is false for an op that is not
// built-in or whose parameters Attributes cannot express (fused ops, a
// Scan a compiler pruned).
func Describe(op any) (a Attributes, ok bool) {
	switch o := op.(type) {
	case *scanOp:
		return Attributes{Carries: o.carries, Sums: o.sums, Sequences: o.seqs, Steps: o.steps, Reverse: o.reverse}, o.skip == nil
	case sliceOp:
		return Attributes{Axis: o.axis, Start: o.start, End: o.end}, true
	case padOp:
		return Attributes{Axis: o.axis, Before: o.before, After: o.after}, true
	case concatOp:
		return Attributes{Axis: o.axis}, true
	case softmaxOp:
		return Attributes{Axis: o.axis}, true
	case transposeOp:
		perm, ok := IsTranspose(o)
		return Attributes{Perm: perm}, ok
	case reduceOp:
		for i := 0; i < 64; i++ {
			if o.axes&(1<<i) != 0 {
				a.Axes = append(a.Axes, i)
			}
		}
		a.KeepDims = o.keep
		return a, true
	case unary:
		return Attributes{C: o.c}, true
	case MatMulOp:
		return Attributes{TransA: o.TransA, TransB: o.TransB}, true
	case MatMulAddOp:
		return Attributes{TransA: o.TransA, TransB: o.TransB}, true
	case conv2DOp:
		return Attributes{Conv: o.conv2d.options()}, o.bad == ""
	case convInputOp:
		return Attributes{Conv: o.conv2d.options(), Transposed: true}, o.bad == ""
	case convWeightOp:
		return Attributes{Conv: o.conv2d.options()}, o.bad == ""
	case poolOp:
		p := o.pool2d
		return Attributes{Pool: PoolOptions{
			Kernel: p.kernel[:], Stride: p.stride[:], Padding: p.pad[:], Dilation: p.dilation[:], CeilMode: p.ceil,
		}}, p.bad == ""
	case channelOp:
		return Attributes{Terms: o.terms, Shift: o.bias, Unit: o.unit, Centred: o.centred, Eps: o.eps}, true
	case binary, identityOp, stopGradientOp, gradGateOp, reshapeOp, broadcastToOp, sumToOp, castOp, gatherOp, whereOp,
		scatterAddOp, oneHotOp, crossEntropyOp, crossEntropyOneHotOp:
		return Attributes{}, true
	}
	return Attributes{}, false
}

// options returns c's settings as ConvOptions, every list per axis.
func (c conv2d) options() ConvOptions {
	return ConvOptions{
		Stride: c.stride[:], Padding: c.pad[:], Dilation: c.dilation[:],
		Same: c.same, Groups: c.groups, OutputPadding: c.outPad[:],
	}
}

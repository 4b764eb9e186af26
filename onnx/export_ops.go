package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
)

// step is what an op's exporter sees: the node, its inputs' value names,
// the name its value must take, and its parameters.
type step struct {
	e   *exporter
	n   *graph.Node
	in  []string
	out string
	a   ops.Attributes
}

// tmp emits an intermediate node and returns its value's name.
func (s *step) tmp(opType string, ins []string, attrs ...*onnxpb.AttributeProto) string {
	name := s.e.fresh(s.out + "/" + opType)
	s.e.emit(s.n, opType, ins, name, attrs)
	return name
}

// final emits the node computing the op's value.
func (s *step) final(opType string, ins []string, attrs ...*onnxpb.AttributeProto) error {
	s.e.emit(s.n, opType, ins, s.out, attrs)
	return nil
}

// inType is input i's type.
func (s *step) inType(i int) graph.Type { return s.n.Inputs()[i].Type() }

// axesInput passes a reduction's axes as an input (ReduceSum from opset
// 13, the others from 18) or an attribute.
func (s *step) reduce(opType string, x string, axes []int, keep bool) error {
	attrs := []*onnxpb.AttributeProto{attrInt("keepdims", map[bool]int{false: 0, true: 1}[keep])}
	if opType == "ReduceSum" || s.e.opset >= 18 {
		return s.final(opType, []string{x, s.e.ints(s.out+"/axes", axes)}, attrs...)
	}
	return s.final(opType, []string{x}, append(attrs, attrInts("axes", axes))...)
}

// exportFunc writes one built-in op.
type exportFunc func(s *step) error

// same writes an op that ONNX has under the given name, with no
// attributes.
func same(opType string) exportFunc { return func(s *step) error { return s.final(opType, s.in) } }

// exports is the table of built-in ops Export writes, by op name.
var exports = map[string]exportFunc{
	"Add": same("Add"), "Sub": same("Sub"), "Mul": same("Mul"), "Div": same("Div"), "Pow": same("Pow"),
	"Maximum": same("Max"), "Minimum": same("Min"),
	"Greater": comparison("Greater"), "Less": comparison("Less"), "Equal": comparison("Equal"),
	"Neg": same("Neg"), "Exp": same("Exp"), "Log": same("Log"), "Sqrt": same("Sqrt"), "Abs": same("Abs"),
	"Sign": same("Sign"), "Sin": same("Sin"), "Cos": same("Cos"), "Tanh": same("Tanh"), "Sigmoid": same("Sigmoid"),
	"ReLU": same("Relu"), "Softplus": same("Softplus"), "Erf": same("Erf"),
	"Identity": same("Identity"), "StopGradient": same("Identity"),
	"GradGate": func(s *step) error { return s.final("Identity", s.in[:1]) }, // its value; the flags only gate derivatives
	"Square":   func(s *step) error { return s.final("Mul", []string{s.in[0], s.in[0]}) },
	"Log1p":    exportLog1p,
	"PowConst": exportPowConst,
	"Scale": func(s *step) error {
		return s.final("Mul", []string{s.in[0], s.e.scalarConst(s.out+"/factor", s.n.Type(), s.a.C)})
	},
	"SiLU":     func(s *step) error { return s.final("Mul", []string{s.in[0], s.tmp("Sigmoid", s.in)}) },
	"GELU":     exportGELU,
	"GELUTanh": exportGELUTanh,
	"MatMul":   exportMatMul,
	"MatMulAdd": func(s *step) error {
		if s.inType(0).Rank() == 2 && s.inType(1).Rank() == 2 && s.inType(2).Rank() <= 2 {
			return s.final("Gemm", s.in, attrInt("transA", b2i(s.a.TransA)), attrInt("transB", b2i(s.a.TransB)))
		}
		prod := s.tmp("MatMul", []string{s.transposed(0, s.a.TransA), s.transposed(1, s.a.TransB)})
		return s.final("Add", []string{prod, s.in[2]})
	},
	"Reshape": func(s *step) error {
		return s.reshape(s.in[0], s.inType(0), s.n.Shape())
	},
	"BroadcastTo": func(s *step) error {
		return s.final("Expand", []string{s.in[0], s.e.ints(s.out+"/shape", s.n.Shape())})
	},
	"SumTo":     exportSumTo,
	"Transpose": func(s *step) error { return s.final("Transpose", s.in, attrInts("perm", s.a.Perm)) },
	"Slice": func(s *step) error {
		return s.final("Slice", []string{s.in[0], s.e.ints(s.out+"/starts", []int{s.a.Start}),
			s.e.ints(s.out+"/ends", []int{s.a.End}), s.e.ints(s.out+"/axes", []int{s.a.Axis})})
	},
	"Pad": func(s *step) error {
		pads := make([]int, 2*s.inType(0).Rank())
		pads[s.a.Axis], pads[s.inType(0).Rank()+s.a.Axis] = s.a.Before, s.a.After
		return s.final("Pad", []string{s.in[0], s.e.ints(s.out+"/pads", pads)})
	},
	"Concat":     func(s *step) error { return s.final("Concat", s.in, attrInt("axis", s.a.Axis)) },
	"Softmax":    func(s *step) error { return s.final("Softmax", s.in, attrInt("axis", s.a.Axis)) },
	"LogSoftmax": func(s *step) error { return s.final("LogSoftmax", s.in, attrInt("axis", s.a.Axis)) },
	"Sum":        reduceExport("ReduceSum"),
	"Mean":       reduceExport("ReduceMean"),
	"Max":        reduceExport("ReduceMax"),
	"LogSumExp":  reduceExport("ReduceLogSumExp"),
	"Cast":       func(s *step) error { return s.final("Cast", s.in, attrInt("to", int(elemType(s.n.DType())))) },
	"Gather": func(s *step) error {
		idx := s.in[1]
		if graph.IsFloat(s.inType(1).DType) {
			idx = s.tmp("Cast", []string{idx}, attrInt("to", int(onnxpb.TensorProto_INT64)))
		}
		return s.final("Gather", []string{s.in[0], idx}, attrInt("axis", 0))
	},
	"Where": func(s *step) error {
		cond := s.tmp("Cast", []string{s.in[0]}, attrInt("to", int(onnxpb.TensorProto_BOOL)))
		return s.final("Where", []string{cond, s.in[1], s.in[2]})
	},
	"Conv2D":             exportConv,
	"Conv2DInputGrad":    exportConv,
	"ConvTranspose2D":    exportConv,
	"Conv2DWeightGrad":   exportConvWeightGrad,
	"AvgPool2DSpread":    exportAvgPoolSpread,
	"MaxPool2D":          exportPool("MaxPool"),
	"OneHot":             exportOneHot,
	"MaxPool2DGrad":      exportMaxPoolSelection,
	"MaxPool2DGather":    exportMaxPoolSelection,
	"ScatterAdd":         exportScatterAdd,
	"CrossEntropy":       exportCrossEntropy,
	"CrossEntropyOneHot": exportCrossEntropy,
	"AvgPool2D":          exportPool("AveragePool"),
	"ChannelAffine":      exportChannel, "ChannelSum": exportChannel, "ChannelMean": exportChannel,
	"ChannelDot": exportChannel, "ChannelCov": exportChannel, "BatchNorm": exportChannel,
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// comparison writes a comparison, whose bool result nabla holds as a mask
// of the inputs' dtype.
func comparison(opType string) exportFunc {
	return func(s *step) error {
		return s.final("Cast", []string{s.tmp(opType, s.in)}, attrInt("to", int(elemType(s.n.DType()))))
	}
}

func reduceExport(opType string) exportFunc {
	return func(s *step) error {
		if len(s.a.Axes) == 0 {
			return s.final("Identity", s.in)
		}
		return s.reduce(opType, s.in[0], s.a.Axes, s.a.KeepDims)
	}
}

// transposed returns input i, its last two axes swapped when trans.
func (s *step) transposed(i int, trans bool) string {
	if !trans {
		return s.in[i]
	}
	r := s.inType(i).Rank()
	perm := make([]int, r)
	for j := range perm {
		perm[j] = j
	}
	perm[r-2], perm[r-1] = r-1, r-2
	return s.tmp("Transpose", []string{s.in[i]}, attrInts("perm", perm))
}

func exportMatMul(s *step) error {
	if s.inType(0).Rank() == 2 && s.inType(1).Rank() == 2 && (s.a.TransA || s.a.TransB) {
		return s.final("Gemm", s.in, attrInt("transA", b2i(s.a.TransA)), attrInt("transB", b2i(s.a.TransB)))
	}
	return s.final("MatMul", []string{s.transposed(0, s.a.TransA), s.transposed(1, s.a.TransB)})
}

// exportGELU is x·(1 + erf(x/√2))/2 (ONNX's Gelu op comes in opset 20).
func exportGELU(s *step) error {
	t := s.n.Type()
	if s.e.opset >= 20 {
		return s.final("Gelu", s.in)
	}
	scaled := s.tmp("Mul", []string{s.in[0], s.e.scalarConst(s.out+"/inv_sqrt2", t, 1/math.Sqrt2)})
	onePlus := s.tmp("Add", []string{s.tmp("Erf", []string{scaled}), s.e.scalarConst(s.out+"/one", t, 1)})
	half := s.tmp("Mul", []string{s.in[0], s.e.scalarConst(s.out+"/half", t, 0.5)})
	return s.final("Mul", []string{half, onePlus})
}

// exportGELUTanh is x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))/2.
func exportGELUTanh(s *step) error {
	t := s.n.Type()
	if s.e.opset >= 20 {
		return s.final("Gelu", s.in, &onnxpb.AttributeProto{Name: ptr("approximate"), Type: ptr(onnxpb.AttributeProto_STRING), S: []byte("tanh")})
	}
	x := s.in[0]
	cube := s.tmp("Mul", []string{s.tmp("Mul", []string{x, x}), x})
	inner := s.tmp("Add", []string{x, s.tmp("Mul", []string{cube, s.e.scalarConst(s.out+"/c", t, 0.044715)})})
	th := s.tmp("Tanh", []string{s.tmp("Mul", []string{inner, s.e.scalarConst(s.out+"/k", t, math.Sqrt(2/math.Pi))})})
	onePlus := s.tmp("Add", []string{th, s.e.scalarConst(s.out+"/one", t, 1)})
	half := s.tmp("Mul", []string{x, s.e.scalarConst(s.out+"/half", t, 0.5)})
	return s.final("Mul", []string{half, onePlus})
}

func ptr[T any](v T) *T { return &v }

// exportSumTo sums the broadcast axes, keeping them, and reshapes to the
// target shape.
func exportSumTo(s *step) error {
	from, to := s.inType(0).Shape, s.n.Shape()
	lead := len(from) - len(to)
	var axes []int
	for i := range from {
		if i < lead || to[i-lead] == 1 && from[i] != 1 {
			axes = append(axes, i)
		}
	}
	if len(axes) == 0 {
		return s.reshape(s.in[0], s.inType(0), to)
	}
	sum := s.e.fresh(s.out + "/ReduceSum")
	inner := &step{e: s.e, n: s.n, in: s.in, out: sum}
	if err := inner.reduce("ReduceSum", s.in[0], axes, true); err != nil {
		return err
	}
	kept := slices.Clone(from)
	for _, a := range axes {
		kept[a] = 1
	}
	return s.reshape(sum, s.inType(0).WithShape(kept...), to)
}

// reshape writes x, of type in, reshaped to shape as the op's value.
// ONNX's Reshape reads a 0 in the shape as the input's dimension there:
// a zero dimension of an empty value that is not the input's is written
// with allowzero (opset 14 on) or, below, as the empty constant the value
// is.
func (s *step) reshape(x string, in graph.Type, shape []int) error {
	copies := false
	for i, d := range shape {
		if d == 0 && (i >= in.Rank() || in.Shape[i] != 0) {
			copies = true
		}
	}
	switch {
	case !copies:
		return s.final("Reshape", []string{x, s.e.ints(s.out+"/shape", shape)})
	case s.e.opset >= 14:
		return s.final("Reshape", []string{x, s.e.ints(s.out+"/shape", shape)}, attrInt("allowzero", 1))
	}
	t := in.WithShape(shape...)
	return s.final("Identity", []string{s.e.constant(s.out+"/empty", t, graph.NewDenseOf(t), s.n.Site())})
}

// exportConv writes Conv2D as Conv and its transposed forms
// (ConvTranspose2D, Conv2D's input gradient) as ConvTranspose, whose
// output padding comes from the output's shape.
func exportConv(s *step) error {
	o := s.a.Conv
	x, w := s.inType(0).Shape, s.inType(1).Shape
	pads := convPads(o, w[2:])
	attrs := []*onnxpb.AttributeProto{
		attrInts("strides", o.Stride), attrInts("dilations", o.Dilation), attrInts("pads", pads), attrInt("group", o.Groups),
		attrInts("kernel_shape", w[2:]),
	}
	if !s.a.Transposed {
		return s.final("Conv", s.in, attrs...)
	}
	y := s.n.Shape()
	outPad := make([]int, 2)
	for i := range 2 {
		natural := (x[2+i]-1)*o.Stride[i] - pads[i] - pads[2+i] + o.Dilation[i]*(w[2+i]-1) + 1
		outPad[i] = y[2+i] - natural
		if outPad[i] < 0 {
			return fmt.Errorf("%s: output size %d below the natural %d", s.n.OpName(), y[2+i], natural)
		}
	}
	return s.final("ConvTranspose", s.in, append(attrs, attrInts("output_padding", outPad))...)
}

// convPads returns a convolution's pads in ONNX's order (begins, then
// ends), resolving Same from the kernel's size.
func convPads(o ops.ConvOptions, kernel []int) []int {
	pads := []int{o.Padding[0], o.Padding[2], o.Padding[1], o.Padding[3]}
	if o.Same {
		for i := range 2 {
			total := o.Dilation[i] * (kernel[i] - 1)
			pads[i], pads[2+i] = total/2, total-total/2
		}
	}
	return pads
}

// exportConvWeightGrad writes Conv2D's gradient with respect to its
// weight, dW[o,c,p,q] = Σ gy[n,o,i,j]·x[n,c,i·s+p·d,j·s+q·d], as a Conv of
// x with gy, batch and channels swapped, strides and dilations swapped,
// cropped to the kernel; one per group.
func exportConvWeightGrad(s *step) error {
	o := s.a.Conv
	w := s.n.Shape()
	x, gy := s.inType(0).Shape, s.inType(1).Shape
	swap := []int{1, 0, 2, 3}
	xt := s.tmp("Transpose", s.in[:1], attrInts("perm", swap))  // (C, N, H, W)
	gyt := s.tmp("Transpose", s.in[1:], attrInts("perm", swap)) // (O, N, oh, ow)
	cg, og := x[1]/o.Groups, gy[1]/o.Groups
	slice := func(v string, axes, starts, ends []int) string {
		return s.tmp("Slice", []string{v, s.e.ints(s.out+"/starts", starts), s.e.ints(s.out+"/ends", ends), s.e.ints(s.out+"/axes", axes)})
	}
	var parts []string
	for k := range o.Groups {
		xk, gk := xt, gyt
		if o.Groups > 1 {
			xk = slice(xt, []int{0}, []int{k * cg}, []int{(k + 1) * cg})
			gk = slice(gyt, []int{0}, []int{k * og}, []int{(k + 1) * og})
		}
		full := s.tmp("Conv", []string{xk, gk}, attrInts("strides", o.Dilation), attrInts("dilations", o.Stride),
			attrInts("pads", convPads(o, w[2:])), attrInts("kernel_shape", gy[2:])) // (C/g, O/g, ≥ kh, ≥ kw)
		parts = append(parts, s.tmp("Transpose", []string{slice(full, []int{2, 3}, []int{0, 0}, w[2:])}, attrInts("perm", swap)))
	}
	if len(parts) == 1 {
		return s.final("Identity", parts)
	}
	return s.final("Concat", parts, attrInt("axis", 0))
}

// exportAvgPoolSpread writes AvgPool2D's gradient, which spreads each
// output gradient evenly over its window, as a ConvTranspose per channel
// with a kernel of 1/(kh·kw).
func exportAvgPoolSpread(s *step) error {
	p := s.a.Pool
	channels := s.n.Shape()[1]
	kt := graph.TypeOf(s.n.DType(), channels, 1, p.Kernel[0], p.Kernel[1])
	vals := make([]float64, kt.Size())
	for i := range vals {
		vals[i] = 1 / float64(p.Kernel[0]*p.Kernel[1])
	}
	kernel, err := graph.FromFloat64s(kt.DType, vals, kt.Shape...)
	if err != nil {
		return err
	}
	name := s.e.constant(s.out+"/kernel", kt, kernel, s.n.Site())
	x, y := s.inType(0).Shape, s.n.Shape()
	outPad := make([]int, 2)
	for i := range 2 {
		outPad[i] = y[2+i] - ((x[2+i]-1)*p.Stride[i] - 2*p.Padding[i] + p.Kernel[i])
		if outPad[i] < 0 {
			return fmt.Errorf("%s: output size %d below the natural one", s.n.OpName(), y[2+i])
		}
	}
	return s.final("ConvTranspose", []string{s.in[0], name}, attrInts("strides", p.Stride), attrInt("group", channels),
		attrInts("pads", []int{p.Padding[0], p.Padding[1], p.Padding[0], p.Padding[1]}), attrInts("kernel_shape", p.Kernel),
		attrInts("output_padding", outPad))
}

func exportPool(opType string) exportFunc {
	return func(s *step) error {
		p := s.a.Pool
		attrs := []*onnxpb.AttributeProto{
			attrInts("kernel_shape", p.Kernel), attrInts("strides", p.Stride),
			attrInts("pads", []int{p.Padding[0], p.Padding[1], p.Padding[0], p.Padding[1]}),
			attrInt("ceil_mode", b2i(p.CeilMode)),
		}
		if opType == "MaxPool" {
			attrs = append(attrs, attrInts("dilations", p.Dilation))
		} else {
			attrs = append(attrs, attrInt("count_include_pad", 1))
		}
		return s.final(opType, s.in, attrs...)
	}
}

// channelVec reshapes a (C) value to (C, 1, ...) for the output's rank.
func (s *step) channelVec(name string, rank int) string {
	shape := []int{s.inType(0).Shape[1]}
	for len(shape) < rank-1 {
		shape = append(shape, 1)
	}
	return s.tmp("Reshape", []string{name, s.e.ints(s.out+"/shape", shape)})
}

// otherAxes are every axis of a rank but the channels'.
func otherAxes(rank int) []int {
	axes := []int{0}
	for i := 2; i < rank; i++ {
		axes = append(axes, i)
	}
	return axes
}

// exportChannel writes the per-channel family (ops/norm.go): sums, means,
// dot products and covariances over every axis but the channels', affine
// maps per channel, and BatchNorm from given statistics.
func exportChannel(s *step) error {
	r := s.inType(0).Rank()
	switch s.n.OpName() {
	case "ChannelSum":
		return s.reduce("ReduceSum", s.in[0], otherAxes(r), false)
	case "ChannelMean":
		return s.reduce("ReduceMean", s.in[0], otherAxes(r), false)
	case "ChannelDot":
		v := s.in[1]
		if s.a.Centred {
			v = s.tmp("Sub", []string{v, s.channelVec(s.in[2], r)})
		}
		return s.reduce("ReduceSum", s.tmp("Mul", []string{s.in[0], v}), otherAxes(r), false)
	case "ChannelCov":
		centred := func(u string) string {
			mean := s.e.fresh(s.out + "/mean")
			inner := &step{e: s.e, n: s.n, in: s.in, out: mean}
			_ = inner.reduce("ReduceMean", u, otherAxes(r), true)
			return s.tmp("Sub", []string{u, mean})
		}
		return s.reduce("ReduceMean", s.tmp("Mul", []string{centred(s.in[0]), centred(s.in[1])}), otherAxes(r), false)
	case "BatchNorm": // x, mean, variance, weight, bias
		std := s.tmp("Sqrt", []string{s.tmp("Add", []string{s.channelVec(s.in[2], r), s.e.scalarConst(s.out+"/eps", s.n.Type(), s.a.Eps)})})
		norm := s.tmp("Div", []string{s.tmp("Sub", []string{s.in[0], s.channelVec(s.in[1], r)}), std})
		return s.final("Add", []string{s.tmp("Mul", []string{norm, s.channelVec(s.in[3], r)}), s.channelVec(s.in[4], r)})
	}
	// ChannelAffine: Σ uᵢ·aᵢ + b, the first a absent when Unit.
	t := s.a.Terms
	scales := s.in[t:]
	var sum string
	for i := range t {
		term := s.in[i]
		if !(s.a.Unit && i == 0) {
			term = s.tmp("Mul", []string{term, s.channelVec(scales[0], r)})
			scales = scales[1:]
		}
		if sum == "" {
			sum = term
		} else {
			sum = s.tmp("Add", []string{sum, term})
		}
	}
	if !s.a.Shift {
		return s.final("Identity", []string{sum})
	}
	return s.final("Add", []string{sum, s.channelVec(scales[0], r)})
}

// int64Of is input i as int64 indices.
func (s *step) int64Of(i int) string {
	if s.inType(i).DType == graph.Int64 {
		return s.in[i]
	}
	return s.tmp("Cast", s.in[i:i+1], attrInt("to", int(onnxpb.TensorProto_INT64)))
}

// unsqueezed is v with a new axis of size 1 at axis.
func (s *step) unsqueezed(v string, axis int) string {
	return s.tmp("Unsqueeze", []string{v, s.e.ints(s.out+"/axes", []int{axis})})
}

// exportOneHot compares the labels, given a last axis, with 0 … classes-1.
func exportOneHot(s *step) error {
	classes := s.n.Shape()[s.n.Type().Rank()-1]
	positions := make([]int, classes)
	for i := range positions {
		positions[i] = i
	}
	at := s.tmp("Equal", []string{s.unsqueezed(s.int64Of(0), -1), s.e.ints(s.out+"/classes", positions)})
	return s.final("Cast", []string{at}, attrInt("to", int(elemType(s.n.DType()))))
}

// exportScatterAdd adds the updates into zeros with ScatterND's "add"
// reduction (opset 16 on).
func exportScatterAdd(s *step) error {
	if s.e.opset < 16 {
		return fmt.Errorf("ScatterAdd needs opset 16 (ScatterND's reduction), not %d", s.e.opset)
	}
	zeros := s.tmp("Expand", []string{s.e.scalarConst(s.out+"/zero", s.n.Type(), 0), s.e.ints(s.out+"/shape", s.n.Shape())})
	return s.final("ScatterND", []string{zeros, s.unsqueezed(s.int64Of(1), -1), s.in[0]},
		&onnxpb.AttributeProto{Name: ptr("reduction"), Type: ptr(onnxpb.AttributeProto_STRING), S: []byte("add")})
}

// op writes one op node.
func (e *exporter) op(n *graph.Node) error {
	if multi, _ := n.MultiOp(); multi != nil {
		return e.multi(n, multi)
	}
	ins := make([]string, len(n.Inputs()))
	for i, x := range n.Inputs() {
		ins[i] = e.names[x]
	}
	base := n.Name()
	if base == "" {
		base = fmt.Sprintf("%s_%d", n.OpName(), n.ID())
	}
	out := e.fresh(base)
	e.names[n] = out
	op := n.Op()
	if ex, ok := op.(Exporter); ok {
		in := make([]graph.Type, len(n.Inputs()))
		for i, x := range n.Inputs() {
			in[i] = x.Type()
		}
		nodes, err := ex.ExportONNX(ins, out, in, n.Type())
		if err != nil {
			return fmt.Errorf("%s: ExportONNX: %v", n.OpName(), err)
		}
		for _, p := range nodes {
			for _, o := range p.GetOutput() {
				e.used[o] = true
			}
		}
		e.g.Node = append(e.g.Node, nodes...)
		return nil
	}
	if graph.IsComposite(op) { // its value is the subgraph's output, its last input
		e.emit(n, "Identity", ins[len(ins)-1:], out, nil)
		return nil
	}
	if d, ok := op.(graph.Decomposer); ok {
		return e.decomposition(n, d, ins, out)
	}
	a, builtin := ops.Describe(op)
	f := exports[n.OpName()]
	switch {
	case builtin && f == nil:
		return fmt.Errorf("built-in op %s has no ONNX export yet", n.OpName())
	case f == nil:
		return fmt.Errorf("op %s has no ONNX export: a custom op exports by implementing onnx.Exporter", n.OpName())
	}
	return f(&step{e: e, n: n, in: ins, out: out, a: a})
}

// decomposition writes an op (a custom one such as nn's LinearFunction)
// as the built-in ops its graph.Decomposer builds, in a graph of their own
// whose inputs stand for the op's.
func (e *exporter) decomposition(n *graph.Node, d graph.Decomposer, ins []string, out string) error {
	g := graph.New()
	stand := make([]*graph.Node, len(n.Inputs()))
	for i, x := range n.Inputs() {
		stand[i] = g.Input(fmt.Sprintf("in%d", i), x.DType(), x.Shape()...)
		e.names[stand[i]] = ins[i]
	}
	outs, err := decompose(d, stand)
	if err == nil && (len(outs) != 1 || outs[0] == nil || !outs[0].Type().Equal(n.Type())) {
		err = fmt.Errorf("it built %d outputs, want one of type %v", len(outs), n.Type())
	}
	if err == nil {
		err = g.Err()
	}
	if err != nil {
		return fmt.Errorf("%s: Decompose: %v", n.OpName(), err)
	}
	for _, m := range reachable(outs) {
		if _, named := e.names[m]; named {
			continue
		}
		if m.Kind() == graph.KindOp {
			err = e.op(m)
		} else {
			err = e.leaf(m)
		}
		if err != nil {
			return fmt.Errorf("%s's decomposition: %v", n.OpName(), err)
		}
	}
	e.emit(n, "Identity", []string{e.names[outs[0]]}, out, nil)
	return nil
}

// decompose calls Decompose, turning a panic into an error.
func decompose(d graph.Decomposer, in []*graph.Node) (outs []*graph.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panicked: %v", r)
		}
	}()
	return d.Decompose(in)
}

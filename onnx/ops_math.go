package onnx

import (
	"fmt"
	"math"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Elementwise arithmetic, activations, products and reductions.
func init() {
	unaries := map[string]func(*graph.Node) *graph.Node{
		"Relu": ops.ReLU, "Sigmoid": ops.Sigmoid, "Tanh": ops.Tanh, "Exp": ops.Exp, "Log": ops.Log,
		"Sqrt": ops.Sqrt, "Neg": ops.Neg, "Abs": ops.Abs, "Erf": ops.Erf, "Sin": ops.Sin, "Cos": ops.Cos,
		"Softplus": ops.Softplus, "Sign": ops.Sign, "Identity": ops.Identity,
		"Reciprocal": func(x *graph.Node) *graph.Node { return ops.Div(scalar(x, 1), x) },
	}
	for name, f := range unaries {
		register(map[string]importFunc{name: unaryImporter(f)})
	}
	binaries := map[string]func(a, b *graph.Node) *graph.Node{
		"Add": ops.Add, "Sub": ops.Sub, "Mul": ops.Mul, "Div": ops.Div,
	}
	for name, f := range binaries {
		accept(map[string]attrs{name: legacyBroadcast})
		register(map[string]importFunc{name: one(func(c *nodeContext) (*graph.Node, error) {
			in, err := c.inputs(2)
			if err != nil {
				return nil, err
			}
			return onFloats(f, in[0], in[1]), nil
		})})
	}
	register(map[string]importFunc{
		"Equal":           compare(ops.Equal, false),
		"Less":            compare(ops.Less, false),
		"Greater":         compare(ops.Greater, false),
		"GreaterOrEqual":  compare(ops.Less, true),
		"LessOrEqual":     compare(ops.Greater, true),
		"Not":             unaryImporter(not),
		"And":             logical(ops.Mul),
		"Or":              logical(ops.Maximum),
		"Xor":             logical(func(a, b *graph.Node) *graph.Node { return ops.Abs(ops.Sub(a, b)) }),
		"Max":             variadic(ops.Maximum, false),
		"Min":             variadic(ops.Minimum, false),
		"Sum":             variadic(ops.Add, false),
		"Mean":            variadic(ops.Add, true),
		"Pow":             one(importPow),
		"Clip":            one(importClip),
		"LeakyRelu":       one(importLeakyRelu),
		"Elu":             one(importElu),
		"HardSigmoid":     one(importHardSigmoid),
		"Gelu":            one(importGelu),
		"Where":           one(importWhere),
		"MatMul":          one(importMatMul),
		"Gemm":            one(importGemm),
		"Softmax":         one(func(c *nodeContext) (*graph.Node, error) { return importSoftmax(c, ops.Softmax) }),
		"LogSoftmax":      one(func(c *nodeContext) (*graph.Node, error) { return importSoftmax(c, ops.LogSoftmax) }),
		"ReduceSum":       reduction(ops.Sum, ops.SumKeepDims, nil, nil),
		"ReduceMean":      reduction(ops.Mean, ops.MeanKeepDims, nil, nil),
		"ReduceMax":       reduction(emptyAs(ops.Max, false, false), emptyAs(ops.MaxKeepDims, true, false), nil, nil),
		"ReduceLogSumExp": reduction(ops.LogSumExp, ops.LogSumExpKeepDims, nil, nil),
		"ReduceSumSquare": reduction(ops.Sum, ops.SumKeepDims, ops.Square, nil),
	})
	softmax := attrs{"axis": {}}
	accept(map[string]attrs{
		"Equal": legacyBroadcast, "Less": legacyBroadcast, "Greater": legacyBroadcast,
		"And": legacyBroadcast, "Or": legacyBroadcast, "Xor": legacyBroadcast, "Pow": legacyBroadcast,
		"Clip":        {"min": {to: 10}, "max": {to: 10}}, // inputs from opset 11 on
		"LeakyRelu":   {"alpha": {}},
		"Elu":         {"alpha": {}},
		"HardSigmoid": {"alpha": {}, "beta": {}},
		"Gelu":        {"approximate": onlyStrings("none", "tanh")},
		// Before opset 7, broadcast says whether C broadcasts: it does
		// wherever its shape lets it.
		"Gemm":    {"alpha": {}, "beta": {}, "transA": {}, "transB": {}, "broadcast": {to: 6}},
		"Softmax": softmax, "LogSoftmax": softmax,
		"ReduceSum": reduceSumAttrs, "ReduceMean": reduceAttrs, "ReduceMax": reduceAttrs,
		"ReduceLogSumExp": reduceAttrs, "ReduceSumSquare": reduceAttrs,
	})
}

// reduceAttrs are the attributes of the Reduce ops: axes is one up to
// opset 17 and an input from opset 18 on, which brings
// noop_with_empty_axes.
var reduceAttrs = attrs{"axes": {to: 17}, "keepdims": {}, "noop_with_empty_axes": {from: 18}}

// reduceSumAttrs are ReduceSum's attributes, whose axes became an input
// at opset 13.
var reduceSumAttrs = attrs{"axes": {to: 12}, "keepdims": {}, "noop_with_empty_axes": {from: 13}}

// scalar is a constant v of x's dtype, in x's graph.
func scalar(x *graph.Node, v float64) *graph.Node { return x.Graph().Scalar(v, x.DType()) }

// onFloats applies f, which computes on floats, to inputs that may hold
// integers (shape arithmetic): those are cast to float64 and the result back
// to the first input's dtype, exactly for integers below 2⁵³. Float inputs
// are passed through.
func onFloats(f func(a, b *graph.Node) *graph.Node, a, b *graph.Node) *graph.Node {
	return viaFloat(func(in []*graph.Node) *graph.Node { return f(in[0], in[1]) }, a, b)
}

// viaFloat is onFloats for any number of inputs.
func viaFloat(f func(in []*graph.Node) *graph.Node, in ...*graph.Node) *graph.Node {
	if len(in) == 0 || !graph.IsInteger(in[0].DType()) {
		return f(in)
	}
	cast := make([]*graph.Node, len(in))
	for i, x := range in {
		cast[i] = ops.Cast(x, graph.Float64) // x itself when float64 already
	}
	return ops.Cast(f(cast), in[0].DType())
}

// viaFloat1 is viaFloat for one input.
func viaFloat1(x *graph.Node, f func(x *graph.Node) *graph.Node) *graph.Node {
	return viaFloat(func(in []*graph.Node) *graph.Node { return f(in[0]) }, x)
}

// compare imports a comparison as a float32 mask (ONNX's bool),
// comparing integers and mixed dtypes in float64; negated gives its
// complement (a ≥ b as not a < b).
func compare(f func(a, b *graph.Node) *graph.Node, negated bool) importFunc {
	return one(func(c *nodeContext) (*graph.Node, error) {
		in, err := c.inputs(2)
		if err != nil {
			return nil, err
		}
		a, b := in[0], in[1]
		if a.DType() != b.DType() || graph.IsInteger(a.DType()) {
			a, b = ops.Cast(a, graph.Float64), ops.Cast(b, graph.Float64)
		}
		mask := ops.Cast(f(a, b), graph.Float32)
		if negated {
			mask = not(mask)
		}
		return mask, nil
	})
}

// not is 1 - m for a mask m.
func not(m *graph.Node) *graph.Node { return ops.Sub(scalar(m, 1), m) }

// logical imports And, Or and Xor on masks.
func logical(f func(a, b *graph.Node) *graph.Node) importFunc {
	return one(func(c *nodeContext) (*graph.Node, error) {
		in, err := c.inputs(2)
		if err != nil {
			return nil, err
		}
		return f(ops.Cast(in[0], graph.Float32), ops.Cast(in[1], graph.Float32)), nil
	})
}

// unaryImporter imports an op of one input.
func unaryImporter(f func(*graph.Node) *graph.Node) importFunc {
	return one(func(c *nodeContext) (*graph.Node, error) {
		x, err := c.input(0)
		if err != nil {
			return nil, err
		}
		return viaFloat1(x, f), nil // integers (Neg, Abs of shapes) through float64
	})
}

// variadic folds f over every input (Max, Min, Sum), dividing by their
// count for Mean.
func variadic(f func(a, b *graph.Node) *graph.Node, mean bool) importFunc {
	return one(func(c *nodeContext) (*graph.Node, error) {
		in, err := c.inputs(max(len(c.in), 1))
		if err != nil {
			return nil, err
		}
		out := in[0]
		for _, x := range in[1:] {
			out = onFloats(f, out, x)
		}
		if mean {
			out = ops.Div(out, scalar(out, float64(len(in))))
		}
		return out, nil
	})
}

// importPow uses PowConst when the exponent is one known value.
func importPow(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(2)
	if err != nil {
		return nil, err
	}
	if e := in[1]; e.Kind() == graph.KindConst && e.Type().Size() == 1 {
		return ops.PowConst(in[0], graph.Float(e.Value(), 0)), nil
	}
	if graph.IsFloat(in[0].DType()) && in[1].DType() != in[0].DType() {
		in[1] = ops.Cast(in[1], in[0].DType()) // an integer exponent, or a float of another width
	}
	return onFloats(ops.Pow, in[0], in[1]), nil
}

// importClip bounds x by min and max, given as inputs (opset 11 on) or
// attributes.
func importClip(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	bound := func(attr string, input int, def float64, f func(a, b *graph.Node) *graph.Node) {
		switch {
		case c.has(attr):
			x = f(x, scalar(x, c.attrFloat(attr, def)))
		case c.optional(input) != nil:
			x = onFloats(f, x, c.in[input])
		}
	}
	bound("min", 1, math.Inf(-1), ops.Maximum)
	bound("max", 2, math.Inf(1), ops.Minimum)
	return x, nil
}

// importLeakyRelu is x where x > 0, alpha·x elsewhere.
func importLeakyRelu(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	alpha := c.attrFloat("alpha", 0.01)
	return ops.Where(ops.Greater(x, scalar(x, 0)), x, ops.Scale(x, alpha)), nil
}

// importElu is x where x > 0, alpha·(eˣ - 1) elsewhere.
func importElu(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	alpha := c.attrFloat("alpha", 1)
	neg := ops.Scale(ops.Sub(ops.Exp(x), scalar(x, 1)), alpha)
	return ops.Where(ops.Greater(x, scalar(x, 0)), x, neg), nil
}

// importHardSigmoid is max(0, min(1, alpha·x + beta)).
func importHardSigmoid(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	y := ops.Add(ops.Scale(x, c.attrFloat("alpha", 0.2)), scalar(x, c.attrFloat("beta", 0.5)))
	return ops.Maximum(ops.Minimum(y, scalar(x, 1)), scalar(x, 0)), nil
}

// importGelu maps approximate "none" and "tanh" onto ops.GELU.
func importGelu(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	switch a := c.attrString("approximate", "none"); a {
	case "none", "tanh":
		return ops.GELU(x, a == "tanh"), nil
	default:
		return nil, unsupported("approximate %q", a)
	}
}

// importWhere selects with a mask of the values' dtype.
func importWhere(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(3)
	if err != nil {
		return nil, err
	}
	cond, a, b := in[0], in[1], in[2]
	if graph.IsInteger(a.DType()) {
		return ops.Cast(ops.Where(ops.Cast(cond, graph.Float64), ops.Cast(a, graph.Float64), ops.Cast(b, graph.Float64)), a.DType()), nil
	}
	return ops.Where(ops.Cast(cond, a.DType()), a, b), nil
}

// importMatMul follows numpy's matmul: 1-D operands gain and then lose an
// axis, and batch axes broadcast.
func importMatMul(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(2)
	if err != nil {
		return nil, err
	}
	return matmul(in[0], in[1])
}

func matmul(a, b *graph.Node) (*graph.Node, error) {
	ra, rb := a.Type().Rank(), b.Type().Rank()
	if ra == 0 || rb == 0 {
		return nil, fmt.Errorf("MatMul of a scalar (%v, %v)", a.Type(), b.Type())
	}
	if ra == 1 {
		a = ops.Reshape(a, 1, a.Shape()[0])
	}
	if rb == 1 {
		b = ops.Reshape(b, b.Shape()[0], 1)
	}
	as, bs := a.Shape(), b.Shape()
	m, k, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-1]
	batch, err := graph.BroadcastShapes(as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return nil, fmt.Errorf("MatMul: batch axes of %v and %v do not broadcast: %v", a.Type(), b.Type(), err)
	}
	var y *graph.Node
	switch {
	case len(as) <= 2 && len(bs) <= 2:
		y = ops.MatMul(a, b)
	case len(bs) == 2: // a batch of rows times one matrix: one product
		y = ops.Reshape(ops.MatMul(ops.Reshape(a, graph.ShapeSize(as[:len(as)-1]), k), b), append(append([]int{}, batch...), m, n)...)
	default:
		nb := graph.ShapeSize(batch)
		a3 := ops.Reshape(ops.BroadcastTo(a, append(append([]int{}, batch...), m, k)...), nb, m, k)
		b3 := ops.Reshape(ops.BroadcastTo(b, append(append([]int{}, batch...), bs[len(bs)-2], n)...), nb, bs[len(bs)-2], n)
		y = ops.Reshape(ops.MatMul(a3, b3), append(append([]int{}, batch...), m, n)...)
	}
	shape := y.Shape()
	switch {
	case ra == 1 && rb == 1:
		return ops.Reshape(y), nil
	case ra == 1:
		return ops.Reshape(y, append(append([]int{}, shape[:len(shape)-2]...), n)...), nil
	case rb == 1:
		return ops.Reshape(y, shape[:len(shape)-1]...), nil
	}
	return y, nil
}

// importGemm is alpha·op(A)·op(B) + beta·C.
func importGemm(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(2)
	if err != nil {
		return nil, err
	}
	a, b, bias := in[0], in[1], c.optional(2)
	transA, transB := c.attrInt("transA", 0) != 0, c.attrInt("transB", 0) != 0
	alpha, beta := c.attrFloat("alpha", 1), c.attrFloat("beta", 1)
	if alpha != 1 {
		a = ops.Scale(a, alpha)
	}
	if bias == nil || beta == 0 {
		return ops.MatMulT(a, b, transA, transB), nil
	}
	if beta != 1 {
		bias = ops.Scale(bias, beta)
	}
	return ops.MatMulAdd(a, b, bias, transA, transB), nil
}

// importSoftmax takes one axis from opset 13 on; before, the input is
// flattened to 2-D at axis and normalised over the second axis.
func importSoftmax(c *nodeContext, f func(*graph.Node, int) *graph.Node) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	if c.im.opset >= 13 {
		return f(x, c.attrInt("axis", -1)), nil
	}
	axis, err := graph.NormalizeAxis(c.attrInt("axis", 1), max(x.Type().Rank(), 1))
	if err != nil {
		return nil, err
	}
	shape := x.Shape()
	flat := ops.Reshape(x, graph.ShapeSize(shape[:axis]), graph.ShapeSize(shape[axis:]))
	return ops.Reshape(f(flat, 1), shape...), nil
}

// reduction imports a Reduce op over axes given as an attribute or an
// input: post(reduce(pre(x))), where pre and post, when not nil, are
// elementwise (ReduceL2's square and square root). Where nothing is
// reduced (empty axes with noop_with_empty_axes, or a scalar input), pre
// and post still apply, as in ONNX's reference implementation and ONNX
// Runtime: ReduceSumSquare squares, ReduceL1 takes |x|, ReduceLogSum log x.
func reduction(drop, keep func(*graph.Node, ...int) *graph.Node, pre, post func(*graph.Node) *graph.Node) importFunc {
	return one(func(c *nodeContext) (*graph.Node, error) {
		x, err := c.input(0)
		if err != nil {
			return nil, err
		}
		axes, _, err := c.intsFrom("axes", 1)
		if err != nil {
			return nil, err
		}
		if pre != nil {
			x = pre(x)
		}
		reduce := drop
		if c.attrInt("keepdims", 1) != 0 {
			reduce = keep
		}
		switch {
		case len(axes) == 0 && c.attrInt("noop_with_empty_axes", 0) != 0, x.Type().Rank() == 0:
			x = ops.Identity(x)
		case len(axes) == 0:
			for i := range x.Type().Rank() {
				axes = append(axes, i)
			}
			x = reduce(x, axes...)
		default:
			x = reduce(x, axes...)
		}
		if post != nil {
			x = post(x)
		}
		return x, nil
	})
}

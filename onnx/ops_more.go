package onnx

import (
	"fmt"
	"math"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Activations and elementwise functions built from other ops, more
// reductions, normalisations, tiling and masks.
func init() {
	unaries := map[string]func(*graph.Node) *graph.Node{
		"Softsign": func(x *graph.Node) *graph.Node { return ops.Div(x, ops.Add(scalar(x, 1), ops.Abs(x))) },
		"HardSwish": func(x *graph.Node) *graph.Node {
			return ops.Mul(x, ops.Maximum(ops.Minimum(ops.Add(ops.Scale(x, 1.0/6), scalar(x, 0.5)), scalar(x, 1)), scalar(x, 0)))
		},
		"Tan": func(x *graph.Node) *graph.Node { return ops.Div(ops.Sin(x), ops.Cos(x)) },
		"Sinh": func(x *graph.Node) *graph.Node {
			return ops.Scale(ops.Sub(ops.Exp(x), ops.Exp(ops.Neg(x))), 0.5)
		},
		"Cosh": func(x *graph.Node) *graph.Node {
			return ops.Scale(ops.Add(ops.Exp(x), ops.Exp(ops.Neg(x))), 0.5)
		},
		"Asinh": func(x *graph.Node) *graph.Node {
			return ops.Log(ops.Add(x, ops.Sqrt(ops.Add(ops.Square(x), scalar(x, 1)))))
		},
		"Acosh": func(x *graph.Node) *graph.Node {
			return ops.Log(ops.Add(x, ops.Sqrt(ops.Sub(ops.Square(x), scalar(x, 1)))))
		},
		"Atanh": func(x *graph.Node) *graph.Node {
			return ops.Scale(ops.Log(ops.Div(ops.Add(scalar(x, 1), x), ops.Sub(scalar(x, 1), x))), 0.5)
		},
	}
	for name, f := range unaries {
		register(map[string]importFunc{name: unaryImporter(f)})
	}
	register(map[string]importFunc{
		"Selu":                  one(importSelu),
		"Celu":                  one(importCelu),
		"ThresholdedRelu":       one(importThresholdedRelu),
		"PRelu":                 one(importPRelu),
		"CastLike":              one(importCastLike),
		"ReduceMin":             reduction(emptyAs(negated(ops.Max), false, true), emptyAs(negated(ops.MaxKeepDims), true, true), nil, nil),
		"ReduceL1":              reduction(ops.Sum, ops.SumKeepDims, ops.Abs, nil),
		"ReduceL2":              reduction(ops.Sum, ops.SumKeepDims, ops.Square, ops.Sqrt),
		"ReduceLogSum":          reduction(ops.Sum, ops.SumKeepDims, nil, ops.Log),
		"InstanceNormalization": one(importInstanceNorm),
		"Tile":                  one(importTile),
		"Trilu":                 one(importTrilu),
	})
	accept(map[string]attrs{
		"Selu":            {"alpha": {}, "gamma": {}},
		"Celu":            {"alpha": {}},
		"ThresholdedRelu": {"alpha": {}},
		// saturate says how values out of a float8's range convert; Import
		// has no float8 types.
		"CastLike":              {"saturate": {from: 19}},
		"ReduceMin":             reduceAttrs,
		"ReduceL1":              reduceAttrs,
		"ReduceL2":              reduceAttrs,
		"ReduceLogSum":          reduceAttrs,
		"InstanceNormalization": {"epsilon": {}},
		"Trilu":                 {"upper": {}},
	})
}

// negated is -f(-x): a minimum from a maximum.
func negated(f func(*graph.Node, ...int) *graph.Node) func(*graph.Node, ...int) *graph.Node {
	return func(x *graph.Node, axes ...int) *graph.Node { return ops.Neg(f(ops.Neg(x), axes...)) }
}

// emptyAs is the reduction f (keep: keeping the reduced axes), except
// that where x has no element, the maximum or minimum (high) of empty sets
// is the dtype's lowest or highest value (∓∞ for floats), as in ONNX's
// reference implementation and ONNX Runtime.
func emptyAs(f func(*graph.Node, ...int) *graph.Node, keep, high bool) func(*graph.Node, ...int) *graph.Node {
	return func(x *graph.Node, axes ...int) *graph.Node {
		if x.Type().Size() != 0 {
			return f(x, axes...)
		}
		reduced := make([]bool, x.Type().Rank())
		for _, a := range axes {
			a, err := graph.NormalizeAxis(a, len(reduced))
			if err != nil {
				return f(x, axes...) // which says what is wrong
			}
			reduced[a] = true
		}
		var shape []int
		for i, d := range x.Shape() {
			switch {
			case !reduced[i]:
				shape = append(shape, d)
			case keep:
				shape = append(shape, 1)
			}
		}
		vals := make([]float64, graph.ShapeSize(shape))
		lowest, highest := math.Inf(-1), math.Inf(1)
		switch x.DType() {
		case graph.Int32:
			lowest, highest = math.MinInt32, math.MaxInt32
		case graph.Int64: // 2⁶³ - 1 is no float64: filled below
			lowest, highest = math.MinInt64, 0
		}
		for i := range vals {
			vals[i] = lowest
			if high {
				vals[i] = highest
			}
		}
		t, err := graph.FromFloat64s(x.DType(), vals, shape...)
		if err != nil {
			return f(x, axes...)
		}
		if high && x.DType() == graph.Int64 {
			for i := range vals {
				t.Int64s()[i] = math.MaxInt64
			}
		}
		return x.Graph().Const(t)
	}
}

// positive is the mask x > 0.
func positive(x *graph.Node) *graph.Node { return ops.Greater(x, scalar(x, 0)) }

func importSelu(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	alpha, gamma := 1.67326319217681884765625, 1.05070102214813232421875
	if c.im.opset < 6 { // the defaults of opset 1
		alpha, gamma = 1.6732, 1.0507
	}
	alpha, gamma = c.attrFloat("alpha", alpha), c.attrFloat("gamma", gamma)
	neg := ops.Scale(ops.Sub(ops.Exp(x), scalar(x, 1)), alpha)
	return ops.Scale(ops.Where(positive(x), x, neg), gamma), nil
}

func importCelu(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	alpha := c.attrFloat("alpha", 1)
	neg := ops.Scale(ops.Sub(ops.Exp(ops.Scale(x, 1/alpha)), scalar(x, 1)), alpha)
	return ops.Add(ops.ReLU(x), ops.Minimum(neg, scalar(x, 0))), nil
}

func importThresholdedRelu(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	return ops.Mul(x, ops.Greater(x, scalar(x, c.attrFloat("alpha", 1)))), nil
}

// importPRelu is x where x > 0, slope·x elsewhere, slope broadcasting.
func importPRelu(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(2)
	if err != nil {
		return nil, err
	}
	x, slope := in[0], in[1]
	if c.im.opset < 7 && slope.Type().Rank() == 1 && x.Type().Rank() > 2 && slope.Type().Size() == x.Shape()[1] {
		slope = channelVector(slope, x.Type().Rank()) // a slope per channel, before numpy broadcasting
	}
	return ops.Where(positive(x), x, ops.Mul(x, slope)), nil
}

func importCastLike(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(2)
	if err != nil {
		return nil, err
	}
	return ops.Cast(in[0], in[1].DType()), nil
}

// importInstanceNorm normalises each (sample, channel) over its spatial
// axes, then scales and shifts per channel.
func importInstanceNorm(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(3)
	if err != nil {
		return nil, err
	}
	x, scale, bias := in[0], in[1], in[2]
	r := x.Type().Rank()
	if r < 3 {
		return nil, fmt.Errorf("input %v: want (N,C,D1,...)", x.Type())
	}
	var axes []int
	for i := 2; i < r; i++ {
		axes = append(axes, i)
	}
	d := ops.Sub(x, ops.MeanKeepDims(x, axes...))
	v := ops.MeanKeepDims(ops.Square(d), axes...)
	y := ops.Div(d, ops.Sqrt(ops.Add(v, scalar(x, c.attrFloat("epsilon", 1e-5)))))
	return ops.Add(ops.Mul(y, channelVector(scale, r)), channelVector(bias, r)), nil
}

// importTile repeats x along each axis, by broadcasting: a node per axis
// however many the repeats.
func importTile(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	repeats, err := c.knownInts(1)
	if err != nil {
		return nil, err
	}
	if len(repeats) != x.Type().Rank() {
		return nil, fmt.Errorf("repeats %v for rank %d", repeats, x.Type().Rank())
	}
	shape := append([]int(nil), x.Shape()...)
	for a, k := range repeats {
		if k < 0 || (k > 0 && shape[a] > math.MaxInt32/k) {
			return nil, fmt.Errorf("repeats %v", repeats)
		}
		shape[a] *= k
	}
	if _, err := shapeOf(int64s(shape), x.DType()); err != nil {
		return nil, err
	}
	return viaFloat1(x, func(x *graph.Node) *graph.Node {
		for a, k := range repeats { // (..., d, ...) → (..., 1, d, ...) → (..., k, d, ...) → (..., k·d, ...)
			if k == 1 {
				continue
			}
			s := x.Shape()
			lifted := append(append(append([]int(nil), s[:a]...), 1), s[a:]...)
			wide := append([]int(nil), lifted...)
			wide[a] = k
			merged := append([]int(nil), s...)
			merged[a] *= k
			x = ops.Reshape(ops.BroadcastTo(ops.Reshape(x, lifted...), wide...), merged...)
		}
		return x
	}), nil
}

// importTrilu keeps the upper (or lower) triangle of the last two axes,
// from diagonal k, by a mask.
func importTrilu(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	if x.Type().Rank() < 2 {
		return nil, fmt.Errorf("input %v: want a rank of 2 or more", x.Type())
	}
	k := 0
	if c.optional(1) != nil {
		ks, err := c.knownInts(1)
		if err != nil {
			return nil, err
		}
		if len(ks) != 1 {
			return nil, fmt.Errorf("k holds %d values, want 1", len(ks))
		}
		k = ks[0]
	}
	upper := c.attrInt("upper", 1) != 0
	s := x.Shape()
	n, m := s[len(s)-2], s[len(s)-1]
	if _, err := shapeOf([]int64{int64(n), int64(m)}, graph.Float64); err != nil {
		return nil, err
	}
	mask := make([]float64, n*m)
	for i := range n {
		for j := range m {
			if (upper && j-i >= k) || (!upper && j-i <= k) {
				mask[i*m+j] = 1
			}
		}
	}
	t, err := graph.FromFloat64s(graph.Float64, mask, n, m)
	if err != nil {
		return nil, err
	}
	return viaFloat1(x, func(x *graph.Node) *graph.Node { return ops.Mul(x, ops.Cast(c.g().Const(t), x.DType())) }), nil
}

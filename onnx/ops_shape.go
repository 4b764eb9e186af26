package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
)

// Shape ops, constants and casts. Shape computations (Shape, Gather,
// Concat, Unsqueeze ... on static shapes) fold at import: each op here
// builds ordinary nodes and Import computes those whose inputs are all
// known.
func init() {
	register(map[string]importFunc{
		"Constant":        one(importConstant),
		"ConstantOfShape": one(importConstantOfShape),
		"Shape":           one(importShape),
		"Size":            one(importSize),
		"Cast":            one(importCast),
		"Reshape":         one(importReshape),
		"Flatten":         one(importFlatten),
		"Transpose":       one(importTranspose),
		"Concat":          one(importConcat),
		"Slice":           one(importSlice),
		"Gather":          one(importGather),
		"Unsqueeze":       one(importUnsqueeze),
		"Squeeze":         one(importSqueeze),
		"Expand":          one(importExpand),
		"Split":           importSplit,
		"Range":           one(importRange),
	})
	axes := attrs{"axes": {to: 12}} // an input from opset 13 on
	accept(map[string]attrs{
		"Constant":        {"value": {}, "value_float": {from: 12}, "value_floats": {from: 12}, "value_int": {from: 12}, "value_ints": {from: 12}},
		"ConstantOfShape": {"value": {}},
		"Shape":           {"start": {from: 15}, "end": {from: 15}},
		// saturate says how values out of a float8's range convert; Import
		// has no float8 types.
		"Cast":      {"to": {}, "saturate": {from: 19}},
		"Reshape":   {"allowzero": {from: 14}, "shape": {to: 4}}, // shape an input from opset 5 on
		"Flatten":   {"axis": {}},
		"Transpose": {"perm": {}},
		"Concat":    {"axis": {}},
		"Slice":     {"starts": {to: 9}, "ends": {to: 9}, "axes": {to: 9}, "steps": {to: 9}}, // inputs from opset 10 on
		"Gather":    {"axis": {}},
		"Unsqueeze": axes,
		"Squeeze":   axes,
		"Split":     {"axis": {}, "split": {to: 12}, "num_outputs": {from: 18}},
	})
}

// constant adds a known value to the graph.
func (c *nodeContext) constant(dtype int32, vals []float64, shape ...int) (*graph.Node, error) {
	dt, err := dtypeOf(dtype)
	if err != nil {
		return nil, err
	}
	t, err := graph.FromFloat64s(dt, vals, shape...)
	if err != nil {
		return nil, err
	}
	return c.g().Const(t), nil
}

func importConstant(c *nodeContext) (*graph.Node, error) {
	var given []string
	for _, a := range c.proto.GetAttribute() {
		if _, ok := attributes["Constant"][a.GetName()]; ok {
			given = append(given, a.GetName())
		}
	}
	if len(given) > 1 {
		return nil, fmt.Errorf("attributes %v: a Constant takes one value", given)
	}
	switch {
	case c.has("value"):
		t, err := readTensor(c.attrTensor("value"), c.im.dir)
		if err != nil {
			return nil, err
		}
		return c.g().Const(t), nil
	case c.has("value_float"):
		return c.constant(1, []float64{c.attrFloat("value_float", 0)})
	case c.has("value_int"):
		return c.constant(7, []float64{float64(c.attrInt("value_int", 0))})
	case c.has("value_floats"):
		fs := c.attr("value_floats").GetFloats()
		vals := make([]float64, len(fs))
		for i, f := range fs {
			vals[i] = float64(f)
		}
		return c.constant(1, vals, len(vals))
	case c.has("value_ints"):
		is := c.attrInts("value_ints")
		vals := make([]float64, len(is))
		for i, v := range is {
			vals[i] = float64(v)
		}
		return c.constant(7, vals, len(vals))
	}
	return nil, unsupported("a Constant without value, value_float(s) or value_int(s)")
}

func importConstantOfShape(c *nodeContext) (*graph.Node, error) {
	shape, err := c.knownInts(0)
	if err != nil {
		return nil, err
	}
	dtype, v := int32(1), 0.0
	if c.has("value") {
		a := c.attrTensor("value")
		t, err := readTensor(a, c.im.dir)
		if err != nil {
			return nil, err
		}
		if t.Shape().TotalSize() != 1 {
			return nil, fmt.Errorf("value holds %d elements, want 1", t.Shape().TotalSize())
		}
		dtype, v = a.GetDataType(), graph.Float(t, 0)
	}
	dt, err := dtypeOf(dtype)
	if err != nil {
		return nil, err
	}
	if _, err := shapeOf(int64s(shape), dt); err != nil {
		return nil, err
	}
	return viaFloat1(c.g().Scalar(v, dt), func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, shape...) }), nil
}

// importShape is the input's static shape, as int64; opset 15's start and
// end pick a range of it.
func importShape(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	shape := x.Shape()
	start, end := clampRange(c.attrInt("start", 0), c.attrInt("end", len(shape)), len(shape))
	vals := make([]int64, 0, len(shape))
	for _, d := range shape[start:max(start, end)] {
		vals = append(vals, int64(d))
	}
	t, err := graph.FromInt64s(graph.Int64, vals, len(vals))
	if err != nil {
		return nil, err
	}
	return c.g().Const(t), nil
}

// clampRange clamps a Python-style [start, end) to [0, n].
func clampRange(start, end, n int) (int, int) {
	fix := func(i int) int {
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	return fix(start), fix(end)
}

func importSize(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	return c.g().Scalar(float64(x.Type().Size()), graph.Int64), nil
}

func importCast(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	if onnxpb.TensorProto_DataType(c.attrInt("to", 0)) == onnxpb.TensorProto_BOOL { // a mask: x ≠ 0
		return ops.Cast(not(ops.Equal(ops.Cast(x, graph.Float64), scalar(ops.Cast(x, graph.Float64), 0))), graph.Float32), nil
	}
	to, err := dtypeOf(int32(c.attrInt("to", 0)))
	if err != nil {
		return nil, err
	}
	return ops.Cast(x, to), nil
}

// importReshape takes the shape from input 1, or before opset 5 from the
// shape attribute, and resolves 0 (copy the input's dimension, unless
// allowzero) and -1 (inferred).
func importReshape(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	var shape []int
	switch {
	case c.im.opset >= 5:
		if shape, err = c.knownInts(1); err != nil {
			return nil, err
		}
	case !c.has("shape"):
		return nil, fmt.Errorf("no shape attribute (opset %d's Reshape takes its shape as one)", c.im.opset)
	default:
		shape = c.attrInts("shape")
	}
	if c.attrInt("allowzero", 0) == 0 {
		for i, d := range shape {
			if d == 0 && i < x.Type().Rank() {
				shape[i] = x.Shape()[i]
			}
		}
	}
	return ops.Reshape(x, shape...), nil
}

// importFlatten makes x 2-D, splitting its axes at axis.
func importFlatten(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	shape := x.Shape()
	axis := c.attrInt("axis", 1)
	if axis < 0 {
		axis += len(shape)
	}
	if axis < 0 || axis > len(shape) {
		return nil, fmt.Errorf("axis %d out of range for rank %d", c.attrInt("axis", 1), len(shape))
	}
	return ops.Reshape(x, graph.ShapeSize(shape[:axis]), graph.ShapeSize(shape[axis:])), nil
}

func importTranspose(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	return viaFloat1(x, func(x *graph.Node) *graph.Node { return ops.Transpose(x, c.attrInts("perm")...) }), nil
}

func importConcat(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(len(c.in))
	if err != nil {
		return nil, err
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("no inputs")
	}
	if len(in) == 1 {
		return ops.Identity(in[0]), nil
	}
	axis := 0
	if c.im.opset < 4 { // axis was optional, 1 by default
		axis = 1
	}
	axis = c.attrInt("axis", axis)
	return viaFloat(func(in []*graph.Node) *graph.Node { return ops.Concat(axis, in...) }, in...), nil
}

// importSlice takes starts, ends, axes and steps as inputs (opset 10 on)
// or attributes; steps must be 1.
func importSlice(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	starts, _, err := c.intsFrom("starts", 1)
	if err != nil {
		return nil, err
	}
	ends, _, err := c.intsFrom("ends", 2)
	if err != nil {
		return nil, err
	}
	axes, haveAxes, err := c.intsFrom("axes", 3)
	if err != nil {
		return nil, err
	}
	steps, _, err := c.intsFrom("steps", 4)
	if err != nil {
		return nil, err
	}
	if !haveAxes {
		axes = make([]int, len(starts))
		for i := range axes {
			axes[i] = i
		}
	}
	if len(ends) != len(starts) || len(axes) != len(starts) || (steps != nil && len(steps) != len(starts)) {
		return nil, fmt.Errorf("starts %v, ends %v, axes %v and steps %v differ in length", starts, ends, axes, steps)
	}
	for i, a := range axes {
		axis, err := graph.NormalizeAxis(a, x.Type().Rank())
		if err != nil {
			return nil, err
		}
		if steps != nil && steps[i] != 1 {
			if x, err = sliceStepped(x, axis, starts[i], ends[i], steps[i]); err != nil {
				return nil, err
			}
			continue
		}
		start, end := clampRange(clampInt(starts[i]), clampInt(ends[i]), x.Shape()[axis])
		x = viaFloat1(x, func(x *graph.Node) *graph.Node { return ops.Slice(x, axis, start, max(start, end)) })
	}
	return x, nil
}

// sliceStepped picks every step-th element of axis from start towards
// end (backwards for a negative step), clamped as ONNX clamps them, with a
// Gather.
func sliceStepped(x *graph.Node, axis, start, end, step int) (*graph.Node, error) {
	if step == 0 {
		return nil, fmt.Errorf("step 0")
	}
	n := x.Shape()[axis]
	// A step past the axis takes one element; clamped so, the index
	// arithmetic below cannot wrap (ONNX allows steps up to ±2⁶³-1).
	step = max(min(step, n+1), -n-1)
	fix := func(i, lo, hi int) int {
		i = clampInt(i)
		if i < 0 {
			i += n
		}
		return min(max(i, lo), hi)
	}
	from, to := fix(start, 0, n), fix(end, 0, n)
	if step < 0 {
		from, to = fix(start, 0, n-1), fix(end, -1, n-1)
	}
	// The indices are counted before they are made: 2⁴⁰ of them (an axis
	// of an empty tensor) would take 8 TiB.
	count := max(0, (to-from+step-1)/step)
	if step < 0 {
		count = max(0, (from-to-step-1)/-step)
	}
	if _, err := shapeOf([]int64{int64(count)}, graph.Int64); err != nil {
		return nil, fmt.Errorf("%d indices of a stepped slice: %v", count, err)
	}
	idx := make([]int64, count)
	for k := range idx {
		idx[k] = int64(from + k*step)
	}
	t, err := graph.FromInt64s(graph.Int64, idx, len(idx))
	if err != nil {
		return nil, err
	}
	if len(idx) == 0 {
		return viaFloat1(x, func(x *graph.Node) *graph.Node { return ops.Slice(x, axis, 0, 0) }), nil
	}
	return viaFloat1(x, func(x *graph.Node) *graph.Node { return gather(x, x.Graph().Const(t), axis) }), nil
}

// clampInt keeps ONNX's "to the end" sentinels (±2⁶³-1) from overflowing
// the arithmetic of clampRange.
func clampInt(v int) int { return min(max(v, -1<<40), 1<<40) }

// importGather picks along axis: indices known at import may be negative;
// other axes than 0 are moved to the front and back.
func importGather(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(2)
	if err != nil {
		return nil, err
	}
	x, idx := in[0], in[1]
	if err := checkIndices("indices", idx); err != nil {
		return nil, err
	}
	axis, err := graph.NormalizeAxis(c.attrInt("axis", 0), max(x.Type().Rank(), 1))
	if err != nil {
		return nil, err
	}
	if x.Type().Rank() == 0 {
		return nil, fmt.Errorf("Gather from a scalar")
	}
	n := x.Shape()[axis]
	if n == 0 { // no row to pick: the output is empty, or every index out of range
		if idx.Type().Size() != 0 {
			return nil, fmt.Errorf("indices %v index data %v along its axis %d, which is empty: every index is out of range", idx.Type(), x.Type(), axis)
		}
		shape := slices.Concat(x.Shape()[:axis], idx.Shape(), x.Shape()[axis+1:])
		return viaFloat1(x, func(x *graph.Node) *graph.Node { return ops.Reshape(x, shape...) }), nil
	}
	if idx.Kind() == graph.KindConst {
		vals := denseInts(idx.Value())
		fixed := make([]int64, len(vals))
		for i, v := range vals {
			if v < -n || v >= n {
				return nil, fmt.Errorf("index %d out of range [%d, %d)", v, -n, n)
			}
			fixed[i] = int64((v + n) % n)
		}
		t, err := graph.FromInt64s(graph.Int64, fixed, idx.Shape()...)
		if err != nil {
			return nil, err
		}
		idx = c.g().Const(t)
	} else { // negative indices count from the end
		f := ops.Cast(idx, graph.Float64)
		idx = ops.Cast(ops.Where(ops.Less(f, scalar(f, 0)), ops.Add(f, scalar(f, float64(n))), f), idx.DType())
	}
	return viaFloat1(x, func(x *graph.Node) *graph.Node { return gather(x, idx, axis) }), nil
}

// gather picks x's slices along axis at idx.
func gather(x, idx *graph.Node, axis int) *graph.Node {
	if axis == 0 {
		return ops.Gather(x, idx)
	}
	rank := x.Type().Rank()
	perm := []int{axis}
	for i := range rank {
		if i != axis {
			perm = append(perm, i)
		}
	}
	y := ops.Gather(ops.Transpose(x, perm...), idx)
	// y is idx.shape ++ x's other axes; move idx's axes to position axis.
	ri := idx.Type().Rank()
	back := make([]int, 0, rank-1+ri)
	for i := range axis {
		back = append(back, ri+i)
	}
	for i := range ri {
		back = append(back, i)
	}
	for i := axis; i < rank-1; i++ {
		back = append(back, ri+i)
	}
	return ops.Transpose(y, back...)
}

// importUnsqueeze inserts size-1 axes, given as an attribute (before
// opset 13) or an input.
func importUnsqueeze(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	axes, _, err := c.intsFrom("axes", 1)
	if err != nil {
		return nil, err
	}
	rank := x.Type().Rank() + len(axes)
	ones := make([]bool, rank)
	for _, a := range axes {
		a, err := graph.NormalizeAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if ones[a] {
			return nil, fmt.Errorf("axis %d repeats", a)
		}
		ones[a] = true
	}
	shape, rest := make([]int, rank), x.Shape()
	for i := range shape {
		if ones[i] {
			shape[i] = 1
		} else {
			shape[i], rest = rest[0], rest[1:]
		}
	}
	return ops.Reshape(x, shape...), nil
}

// importSqueeze removes the given size-1 axes, or every one.
func importSqueeze(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	axes, given, err := c.intsFrom("axes", 1)
	if err != nil {
		return nil, err
	}
	drop := make([]bool, x.Type().Rank())
	for i, d := range x.Shape() {
		drop[i] = !given && d == 1
	}
	for _, a := range axes {
		a, err := graph.NormalizeAxis(a, x.Type().Rank())
		if err != nil {
			return nil, err
		}
		if x.Shape()[a] != 1 {
			return nil, fmt.Errorf("axis %d has size %d, not 1", a, x.Shape()[a])
		}
		drop[a] = true
	}
	var shape []int
	for i, d := range x.Shape() {
		if !drop[i] {
			shape = append(shape, d)
		}
	}
	return ops.Reshape(x, shape...), nil
}

// importExpand broadcasts x and the given shape together.
func importExpand(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	shape, err := c.knownInts(1)
	if err != nil {
		return nil, err
	}
	to, err := graph.BroadcastShapes(x.Shape(), shape)
	if err != nil {
		return nil, err
	}
	if _, err := shapeOf(int64s(to), x.DType()); err != nil {
		return nil, err
	}
	return viaFloat1(x, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, to...) }), nil
}

// importSplit cuts x along axis into the given sizes, or into as many
// equal parts as the node has outputs.
func importSplit(c *nodeContext) ([]*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	axis, err := graph.NormalizeAxis(c.attrInt("axis", 0), max(x.Type().Rank(), 1))
	if err != nil {
		return nil, err
	}
	if x.Type().Rank() == 0 {
		return nil, fmt.Errorf("Split of a scalar")
	}
	sizes, given, err := c.intsFrom("split", 1)
	if err != nil {
		return nil, err
	}
	n := x.Shape()[axis]
	outputs := len(c.proto.GetOutput())
	if given && len(sizes) != outputs {
		return nil, fmt.Errorf("split %v has %d sizes for %d outputs", sizes, len(sizes), outputs)
	}
	if !given {
		// num_outputs (opset 18) is the node's number of outputs: a
		// different one, 2⁴⁰ say, would make as many parts.
		parts := c.attrInt("num_outputs", outputs)
		if parts != outputs || parts <= 0 {
			return nil, fmt.Errorf("num_outputs %d for %d outputs", parts, outputs)
		}
		each := (n + parts - 1) / parts
		for start := 0; start < n || len(sizes) < parts; start += each {
			sizes = append(sizes, max(min(each, n-start), 0))
		}
	}
	var outs []*graph.Node
	start := 0
	for _, s := range sizes {
		if s < 0 || start+s > n {
			return nil, fmt.Errorf("split %v does not fit axis %d of size %d", sizes, axis, n)
		}
		outs = append(outs, viaFloat1(x, func(x *graph.Node) *graph.Node { return ops.Slice(x, axis, start, start+s) }))
		start += s
	}
	if start != n {
		return nil, fmt.Errorf("split %v sums to %d, not axis %d's size %d", sizes, start, axis, n)
	}
	return outs, nil
}

// importRange computes its values at import; its inputs must be known.
func importRange(c *nodeContext) (*graph.Node, error) {
	var v [3]float64
	for i := range v {
		t, err := c.known(i)
		if err != nil {
			return nil, err
		}
		v[i] = graph.Float(t, 0)
	}
	start, limit, delta := v[0], v[1], v[2]
	if delta == 0 {
		return nil, fmt.Errorf("delta is 0")
	}
	count := max(int(math.Ceil((limit-start)/delta)), 0)
	if (limit-start)/delta > maxFolded {
		return nil, fmt.Errorf("%v values are more than %d", (limit-start)/delta, maxFolded)
	}
	vals := make([]float64, count)
	for i := range vals {
		vals[i] = start + float64(i)*delta
	}
	t, err := graph.FromFloat64s(c.in[0].DType(), vals, count)
	if err != nil {
		return nil, err
	}
	return c.g().Const(t), nil
}

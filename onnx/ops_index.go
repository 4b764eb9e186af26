package onnx

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Index ops built from masks: ArgMax, ArgMin, Hardmax, OneHot,
// GatherElements, and CumSum as a product with a triangular matrix.
func init() {
	register(map[string]importFunc{
		"ArgMax":         one(func(c *nodeContext) (*graph.Node, error) { return importArg(c, false) }),
		"ArgMin":         one(func(c *nodeContext) (*graph.Node, error) { return importArg(c, true) }),
		"Hardmax":        one(importHardmax),
		"OneHot":         one(importOneHot),
		"GatherElements": one(importGatherElements),
		"CumSum":         one(importCumSum),
		"ScatterND":      one(importScatterND),
	})
	arg := attrs{"axis": {}, "keepdims": {}, "select_last_index": {from: 12}}
	accept(map[string]attrs{
		"ArgMax": arg, "ArgMin": arg,
		"Hardmax":        {"axis": {}},
		"OneHot":         {"axis": {}},
		"GatherElements": {"axis": {}},
		"CumSum":         {"exclusive": {}, "reverse": {}},
		"ScatterND":      {"reduction": onlyStrings("none", "add").opsets(16, 0)},
	})
}

// positions is 0, 1, ..., n-1 in float64 along axis of a rank-r shape (size 1
// elsewhere).
func positions(g *graph.Graph, n, axis, rank int) *graph.Node {
	if bad := countFails(g, n); bad != nil {
		return bad
	}
	vals := make([]float64, n)
	shape := make([]int, rank)
	for i := range vals {
		vals[i] = float64(i)
	}
	for i := range shape {
		shape[i] = 1
	}
	shape[axis] = n
	t, _ := graph.FromFloat64s(graph.Float64, vals, shape...)
	return g.Const(t)
}

// countFails checks, before they are allocated, that n positions or
// indices along an axis fit the memory limit, and returns a poisoned node
// if not: an axis of 2⁴⁰ may belong to an empty tensor, (2⁴⁰, 0), which
// takes no memory while its positions would take 8 TiB.
func countFails(g *graph.Graph, n int) *graph.Node {
	if _, err := shapeOf([]int64{int64(n)}, graph.Float64); err != nil {
		return g.Fail(fmt.Errorf("%d positions along an axis: %v", n, err))
	}
	return nil
}

// firstMax is the index (float64, axis kept) of the first maximum of x
// along axis, or of the last one.
func firstMax(x *graph.Node, axis int, last bool) *graph.Node {
	n := x.Shape()[axis]
	at := ops.Cast(ops.Equal(x, ops.MaxKeepDims(x, axis)), graph.Float64)
	idx := positions(x.Graph(), n, axis, x.Type().Rank())
	if last {
		return ops.MaxKeepDims(ops.Where(at, ops.BroadcastTo(idx, x.Shape()...), scalar(idx, -1)), axis)
	}
	return ops.Neg(ops.MaxKeepDims(ops.Neg(ops.Where(at, ops.BroadcastTo(idx, x.Shape()...), scalar(idx, float64(n)))), axis))
}

// importArg returns the index of the first (or last) maximum or minimum.
func importArg(c *nodeContext, isMin bool) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	axis, err := graph.NormalizeAxis(c.attrInt("axis", 0), max(x.Type().Rank(), 1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("input %v: %v", x.Type(), err)
	case x.Type().Rank() == 0:
		return nil, fmt.Errorf("input %v is a scalar: want an axis to search", x.Type())
	case x.Shape()[axis] == 0:
		return nil, fmt.Errorf("axis %d of %v is empty: no element is the extreme", axis, x.Type())
	}
	if graph.IsInteger(x.DType()) {
		x = ops.Cast(x, graph.Float64)
	}
	if isMin {
		x = ops.Neg(x)
	}
	idx := firstMax(x, axis, c.attrInt("select_last_index", 0) != 0)
	if c.attrInt("keepdims", 1) == 0 {
		shape := append(append([]int(nil), idx.Shape()[:axis]...), idx.Shape()[axis+1:]...)
		idx = ops.Reshape(idx, shape...)
	}
	return ops.Cast(idx, graph.Int64), nil
}

// importHardmax is 1 at the first maximum along axis, 0 elsewhere (from
// opset 13; before, over the input flattened to 2-D at axis).
func importHardmax(c *nodeContext) (*graph.Node, error) {
	return importSoftmax(c, func(x *graph.Node, axis int) *graph.Node {
		axis, err := graph.NormalizeAxis(axis, max(x.Type().Rank(), 1))
		if err != nil {
			return x.Graph().Fail(err)
		}
		at := ops.Equal(positions(x.Graph(), x.Shape()[axis], axis, x.Type().Rank()), firstMax(x, axis, false))
		return ops.Cast(at, x.DType())
	})
}

// oneHotMask is 1.0 (float64) where idx (float64) equals position k of a
// new last axis of size n: negative indices count from the end, and
// indices out of range match nothing.
func oneHotMask(idx *graph.Node, n int) *graph.Node {
	idx = ops.Where(ops.Less(idx, scalar(idx, 0)), ops.Add(idx, scalar(idx, float64(n))), idx)
	rank := idx.Type().Rank()
	expanded := ops.Reshape(idx, append(append([]int(nil), idx.Shape()...), 1)...)
	return ops.Equal(expanded, positions(idx.Graph(), n, rank, rank+1))
}

// moveLast moves the last axis of v to position axis.
func moveLast(v *graph.Node, axis int) *graph.Node {
	rank := v.Type().Rank()
	if axis == rank-1 {
		return v
	}
	perm := make([]int, 0, rank)
	for i := range rank - 1 {
		if i == axis {
			perm = append(perm, rank-1)
		}
		perm = append(perm, i)
	}
	return ops.Transpose(v, perm...)
}

func importOneHot(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(3)
	if err != nil {
		return nil, err
	}
	depth, err := c.knownInts(1)
	if err != nil {
		return nil, err
	}
	if len(depth) != 1 || depth[0] < 1 {
		return nil, fmt.Errorf("depth %v: want one positive value", depth)
	}
	idx, values := ops.Cast(in[0], graph.Float64), in[2]
	if values.Type().Size() != 2 {
		return nil, fmt.Errorf("values %v: want (off, on)", values.Type())
	}
	if _, err := shapeOf(int64s(append(append([]int(nil), idx.Shape()...), depth[0])), values.DType()); err != nil {
		return nil, err
	}
	axis, err := graph.NormalizeAxis(c.attrInt("axis", -1), idx.Type().Rank()+1)
	if err != nil {
		return nil, err
	}
	return viaFloat1(values, func(v *graph.Node) *graph.Node {
		v = ops.Reshape(v, 2)
		off, on := ops.Reshape(ops.Slice(v, 0, 0, 1)), ops.Reshape(ops.Slice(v, 0, 1, 2))
		mask := ops.Cast(oneHotMask(idx, depth[0]), v.DType())
		return moveLast(ops.Add(off, ops.Mul(mask, ops.Sub(on, off))), axis)
	}), nil
}

// checkIndices refuses indices (named what) that are not integers: ONNX
// allows int32 and int64 alone (Gather's, GatherElements' and
// ScatterND's indices, NegativeLogLikelihoodLoss's target), and a float
// index would be truncated silently.
func checkIndices(what string, idx *graph.Node) error {
	if !graph.IsInteger(idx.DType()) {
		return fmt.Errorf("%s are %v: ONNX allows int32 or int64 %s only", what, idx.Type(), what)
	}
	return nil
}

// importGatherElements picks data's elements along axis at indices, as a
// sum of data times a one-hot mask, so that it differentiates.
func importGatherElements(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(2)
	if err != nil {
		return nil, err
	}
	data, indices := in[0], in[1]
	if err := checkIndices("indices", indices); err != nil {
		return nil, err
	}
	rank := data.Type().Rank()
	axis, err := graph.NormalizeAxis(c.attrInt("axis", 0), max(rank, 1))
	if err != nil {
		return nil, err
	}
	if indices.Type().Rank() != rank || rank == 0 {
		return nil, fmt.Errorf("data %v and indices %v: want the same rank", data.Type(), indices.Type())
	}
	is := indices.Shape()
	for i, d := range is {
		if i != axis && d > data.Shape()[i] {
			return nil, fmt.Errorf("indices %v larger than data %v on axis %d", indices.Type(), data.Type(), i)
		}
	}
	n := data.Shape()[axis]
	if _, err := shapeOf(int64s(append(append([]int(nil), is...), n)), graph.Float64); err != nil {
		return nil, err
	}
	return viaFloat1(data, func(data *graph.Node) *graph.Node {
		for i, d := range is { // the indices may cover a corner of data
			if i != axis && d < data.Shape()[i] {
				data = ops.Slice(data, i, 0, d)
			}
		}
		mask := ops.Cast(oneHotMask(ops.Cast(indices, graph.Float64), n), data.DType()) // is ++ (n)
		// data, axis moved last, with a size-1 axis where the mask has is[axis].
		perm := []int{}
		for i := range rank {
			if i != axis {
				perm = append(perm, i)
			}
		}
		moved := ops.Transpose(data, append(perm, axis)...)
		shape := append(append([]int(nil), moved.Shape()[:rank-1]...), 1, n)
		inner := []int{}
		for i := range rank {
			if i != axis {
				inner = append(inner, i)
			}
		}
		maskMoved := ops.Transpose(mask, append(append(inner, axis), rank)...) // (others..., is[axis], n)
		picked := ops.Sum(ops.Mul(maskMoved, ops.Reshape(moved, shape...)), rank)
		return moveLast(picked, axis)
	}), nil
}

// importCumSum is a product with a triangular matrix along axis.
func importCumSum(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	a, err := c.knownInts(1)
	if err != nil {
		return nil, err
	}
	if len(a) != 1 {
		return nil, fmt.Errorf("axis %v: want one value", a)
	}
	axis, err := graph.NormalizeAxis(a[0], max(x.Type().Rank(), 1))
	if err != nil {
		return nil, err
	}
	n := x.Shape()[axis]
	exclusive, reverse := c.attrInt("exclusive", 0) != 0, c.attrInt("reverse", 0) != 0
	if _, err := shapeOf([]int64{int64(n), int64(n)}, graph.Float64); err != nil {
		return nil, err
	}
	m := make([]float64, n*n) // m[i][j]: does x[i] count in y[j]
	for i := range n {
		for j := range n {
			if (!reverse && (i < j || (i == j && !exclusive))) || (reverse && (i > j || (i == j && !exclusive))) {
				m[i*n+j] = 1
			}
		}
	}
	out := viaFloat1(x, func(x *graph.Node) *graph.Node {
		t, _ := graph.FromFloat64s(x.DType(), m, n, n)
		y, e := alongAxis(x, axis, x.Graph().Const(t))
		if e != nil {
			err = e
			return x
		}
		return y
	})
	return out, err
}

// importScatterND writes rows of data (indices (..., 1) picking along axis
// 0): with reduction "add" the updates are added, with "none" they replace
// the rows (ONNX leaves repeated indices undefined there).
func importScatterND(c *nodeContext) (*graph.Node, error) {
	in, err := c.inputs(3)
	if err != nil {
		return nil, err
	}
	data, indices, updates := in[0], in[1], in[2]
	if err := checkIndices("indices", indices); err != nil {
		return nil, err
	}
	ri := indices.Type().Rank()
	if ri == 0 || indices.Shape()[ri-1] != 1 || data.Type().Rank() == 0 {
		return nil, unsupported("indices %v: only rows of data (indices of shape (..., 1))", indices.Type())
	}
	red := c.attrString("reduction", "none") // "none" or "add" (the table refuses others)
	rows := data.Shape()[0]
	idx := ops.Reshape(ops.Cast(indices, graph.Float64), indices.Shape()[:ri-1]...)
	idx = ops.Where(ops.Less(idx, scalar(idx, 0)), ops.Add(idx, scalar(idx, float64(rows))), idx)
	idx = ops.Cast(idx, graph.Int64)
	return viaFloat(func(v []*graph.Node) *graph.Node {
		data, updates := v[0], v[1]
		scattered := ops.ScatterAdd(updates, idx, rows)
		if red == "add" {
			return ops.Add(data, scattered)
		}
		hit := ops.ScatterAdd(ops.BroadcastTo(scalar(updates, 1), updates.Shape()...), idx, rows)
		return ops.Where(ops.Greater(hit, scalar(hit, 0)), scattered, data)
	}, data, updates), nil
}

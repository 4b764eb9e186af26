package main

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// MaxWithIndexOp is a multi-output op: the maximum of x along an axis and
// the index where it occurs (the first, on ties), as a float. The gradient
// flows from the values to the chosen elements; the indices are piecewise
// constant and pass none.
type MaxWithIndexOp struct {
	Axis int // negative counts from the end
}

// MaxWithIndex returns the maxima of x along axis and their indices; both
// have x's shape without that axis.
func MaxWithIndex(x *graph.Node, axis int) (values, indices *graph.Node) {
	outs := graph.ApplyMulti(MaxWithIndexOp{Axis: axis}, x)
	if len(outs) < 2 { // a build error: outs holds the poisoned node alone
		return outs[0], outs[0]
	}
	return outs[0], outs[1]
}

// Name is "MaxWithIndex".
func (MaxWithIndexOp) Name() string { return "MaxWithIndex" }

// Types: values and indices both have x's shape without the axis.
func (op MaxWithIndexOp) Types(in []graph.Type) ([]graph.Type, error) {
	x, err := elementwiseType(in)
	if err != nil {
		return nil, err
	}
	axis, err := graph.NormalizeAxis(op.Axis, x.Rank())
	if err != nil {
		return nil, err
	}
	if x.Shape[axis] == 0 {
		return nil, fmt.Errorf("axis %d of %s is empty: it has no maximum", op.Axis, graph.ShapeString(x.Shape))
	}
	shape := append(append([]int(nil), x.Shape[:axis]...), x.Shape[axis+1:]...)
	return []graph.Type{x.WithShape(shape...), x.WithShape(shape...)}, nil
}

// Forward writes both outputs in one pass over x.
func (op MaxWithIndexOp) Forward(out []*tensor.Dense, in []*tensor.Dense) error {
	shape := in[0].Shape()
	axis, err := graph.NormalizeAxis(op.Axis, len(shape))
	if err != nil {
		return err
	}
	outer, dim := graph.ShapeSize(shape[:axis]), shape[axis]
	inner := graph.ShapeSize(shape[axis+1:])
	if in[0].Dtype() == graph.Float32 {
		maxIndex(out[0].Float32s(), out[1].Float32s(), in[0].Float32s(), outer, dim, inner)
	} else {
		maxIndex(out[0].Float64s(), out[1].Float64s(), in[0].Float64s(), outer, dim, inner)
	}
	return nil
}

// maxIndex scans x as (outer, dim, inner) and reduces the middle axis.
func maxIndex[T float32 | float64](values, indices, x []T, outer, dim, inner int) {
	for o := range outer {
		for i := range inner {
			best, at := x[o*dim*inner+i], 0
			for d := 1; d < dim; d++ {
				if v := x[(o*dim+d)*inner+i]; v > best {
					best, at = v, d
				}
			}
			values[o*inner+i], indices[o*inner+i] = best, T(at)
		}
	}
}

// Backward sends the values' gradient to the elements they were taken
// from: gradOuts[0] times the one-hot encoding of the indices, moved to
// the reduced axis. gradOuts[1], the indices' gradient, contributes
// nothing; gradOuts[0] is nil when only the indices reach the loss.
func (op MaxWithIndexOp) Backward(ctx *graph.GradContext, gradOuts []*graph.Node) []*graph.Node {
	g := gradOuts[0]
	if g == nil || !ctx.NeedsGrad(0) {
		return []*graph.Node{nil}
	}
	x, indices := ctx.Input(0), ctx.Outputs()[1]
	rank := x.Type().Rank()
	axis, _ := graph.NormalizeAxis(op.Axis, rank) // Types checked it
	// OneHot appends the axis last; move it back to its place.
	perm := make([]int, 0, rank)
	for a := range rank - 1 {
		if a == axis {
			perm = append(perm, rank-1)
		}
		perm = append(perm, a)
	}
	if axis == rank-1 {
		perm = append(perm, rank-1)
	}
	mask := ops.Transpose(ops.OneHot(indices, x.Shape()[axis], x.DType()), perm...)
	kept := append([]int(nil), x.Shape()...)
	kept[axis] = 1
	return []*graph.Node{ops.Mul(mask, ops.Reshape(g, kept...))}
}

package ops

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// oneHotOp expands class indices into one-hot rows of a float dtype.
type oneHotOp struct {
	classes int
	dtype   tensor.Dtype
}

// OneHot returns, for labels (N) holding class indices (int32 or int64, or
// integer values held as floats), the (N,classes) matrix of the float dtype
// whose row i is 1 at column labels[i] and 0 elsewhere (labels of any shape
// gain a last axis of size classes). A label that is not an integer in
// [0,classes) makes the run fail with an error naming it (on a GPU, whose
// kernels cannot fail, it makes its row NaN). It has no gradient.
func OneHot(labels *graph.Node, classes int, dtype tensor.Dtype) *graph.Node {
	if p := poisoned("OneHot", labels); p != nil {
		return p
	}
	switch {
	case classes < 1:
		return failBuilder("OneHot", fmt.Errorf("classes must be at least 1, got %d", classes), labels)
	case !graph.IsFloat(dtype):
		return failBuilder("OneHot", fmt.Errorf("the rows' dtype must be float32 or float64, got %s", dtypeName(dtype)), labels)
	}
	return graph.Apply(oneHotOp{classes: classes, dtype: dtype}, labels)
}

func (oneHotOp) Name() string { return "OneHot" }

func (op oneHotOp) Type(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 1); err != nil {
		return graph.Type{}, err
	}
	if !graph.IsInteger(in[0].DType) && !graph.IsFloat(in[0].DType) {
		return graph.Type{}, fmt.Errorf("labels have dtype %v: give int32 or int64 labels", in[0].DType)
	}
	return graph.TypeOf(op.dtype, slices.Concat(in[0].Shape, []int{op.classes})...), nil
}

func (op oneHotOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	labels := indicesOf(in[0])
	return forFloat(out.Dtype(),
		func() error { return oneHotKernel(floats[float32](out), labels, op.classes) },
		func() error { return oneHotKernel(floats[float64](out), labels, op.classes) })
}

// Batch encodes each example's labels: OneHot takes labels of any shape,
// so the batch is one more axis of them.
func (op oneHotOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	return graph.Apply(op, c.Input(0))
}

func oneHotKernel[T float](out []T, labels indexData, classes int) error {
	clear(out)
	for i := range labels.len() {
		c, err := classIndex(labels, classes, i)
		if err != nil {
			return err
		}
		out[i*classes+c] = 1
	}
	return nil
}

// Backward: a one-hot encoding is piecewise constant in its labels, so
// they get no gradient.
func (oneHotOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node {
	return []*graph.Node{nil}
}

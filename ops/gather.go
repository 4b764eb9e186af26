package ops

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Gather and ScatterAdd move whole rows (the sub-tensors along axis 0) by
// integer indices: int32 or int64, or integer values held as floats. Each
// is the other's gradient, so both differentiate to any order.

type gatherOp struct{}

// Gather returns the rows of table (n, d...) picked by indices, a node of
// any shape holding row indices (int32 or int64, or float values of
// table's dtype): the
// output has shape indices.shape ++ (d...), and its element at (i..., j...)
// is table's at (indices[i...], j...). Indices may repeat. An index that is
// not an integer in [0,n) makes the run fail with an error naming it and
// its position in indices. The gradient with respect to table is
// ScatterAdd(g, indices, n); indices get none.
func Gather(table, indices *graph.Node) *graph.Node {
	return graph.Apply(gatherOp{}, table, indices)
}

func (gatherOp) Name() string { return "Gather" }

func (gatherOp) Type(in []graph.Type) (graph.Type, error) {
	dtype, err := checkIndexed(in, "indices")
	if err != nil {
		return graph.Type{}, err
	}
	table, indices := in[0], in[1]
	if table.Rank() == 0 || table.Shape[0] == 0 {
		return graph.Type{}, fmt.Errorf("table must be (n,...) with n ≥ 1 rows, got %s", graph.ShapeString(table.Shape))
	}
	return graph.TypeOf(dtype, slices.Concat(indices.Shape, table.Shape[1:])...), nil
}

func (gatherOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	rows, shape, indices := in[0].Shape()[0], in[1].Shape(), indicesOf(in[1])
	return forFloat(out.Dtype(),
		func() error {
			return moveRows(floats[float32](in[0]), floats[float32](out), indices, rows, shape, false)
		},
		func() error {
			return moveRows(floats[float64](in[0]), floats[float64](out), indices, rows, shape, false)
		})
}

// Backward adds each output row's gradient into the table row it was read
// from; indices get none.
func (gatherOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	if !ctx.NeedsGrad(0) {
		return []*graph.Node{nil, nil}
	}
	return []*graph.Node{ScatterAdd(g, ctx.Input(1), ctx.Input(0).Shape()[0]), nil}
}

// JVP gathers the table's tangent (unbatched: a batched tangent's rows are
// not the table's).
func (gatherOp) JVP(c *graph.JVPContext) *graph.Node {
	if c.Batch() > 0 {
		c.Decline()
		return nil
	}
	if t := c.Tangent(0); t != nil {
		return Gather(t, c.Input(1))
	}
	return nil
}

// Batch gathers each example's rows: from a shared table with indices
// of one more axis (Gather takes indices of any shape), or from a batched
// table, its examples put behind its rows, with shared indices. A table
// and indices both batched decline.
func (op gatherOp) Batch(c *graph.BatchContext) *graph.Node {
	switch {
	case !batchable(c) || c.Batched(0) && c.Batched(1):
		c.Decline()
		return nil
	case !c.Batched(0):
		return graph.Apply(op, c.Input(0), c.Input(1))
	}
	// (n, B, d...) gathered: (indices..., B, d...).
	y := graph.Apply(op, swapLeading(c.Input(0)), c.Input(1))
	return MoveAxis(y, c.Input(1).Type().Rank(), 0)
}

type scatterAddOp struct{ rows int }

// ScatterAdd returns a (rows, d...) tensor of zeros to whose row
// indices[i...] the row updates[i..., :] is added, for every position i...
// of indices: updates has shape indices.shape ++ (d...), and indices hold
// row indices (int32 or int64, or float values of updates' dtype). Repeated indices
// accumulate. An index that is not an integer in [0,rows) makes the run
// fail with an error naming it and its position in indices. The gradient
// with respect to updates is Gather(g, indices); indices get none.
func ScatterAdd(updates, indices *graph.Node, rows int) *graph.Node {
	return graph.Apply(scatterAddOp{rows}, updates, indices)
}

func (scatterAddOp) Name() string { return "ScatterAdd" }

func (op scatterAddOp) Type(in []graph.Type) (graph.Type, error) {
	dtype, err := checkIndexed(in, "indices")
	if err != nil {
		return graph.Type{}, err
	}
	if op.rows < 1 {
		return graph.Type{}, fmt.Errorf("rows must be at least 1, got %d", op.rows)
	}
	updates, indices := in[0], in[1]
	k := indices.Rank()
	if updates.Rank() < k || !slices.Equal(updates.Shape[:k], indices.Shape) {
		return graph.Type{}, fmt.Errorf("updates %s must begin with the indices' shape %s",
			graph.ShapeString(updates.Shape), graph.ShapeString(indices.Shape))
	}
	return graph.TypeOf(dtype, slices.Concat([]int{op.rows}, updates.Shape[k:])...), nil
}

func (op scatterAddOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	shape, indices := in[1].Shape(), indicesOf(in[1])
	return forFloat(out.Dtype(),
		func() error {
			return moveRows(floats[float32](out), floats[float32](in[0]), indices, op.rows, shape, true)
		},
		func() error {
			return moveRows(floats[float64](out), floats[float64](in[0]), indices, op.rows, shape, true)
		})
}

// Backward reads each update's gradient back from the row it was added to;
// indices get none.
func (scatterAddOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	if !ctx.NeedsGrad(0) {
		return []*graph.Node{nil, nil}
	}
	return []*graph.Node{Gather(g, ctx.Input(1)), nil}
}

// JVP scatters the updates' tangent (unbatched only, as Gather's).
func (op scatterAddOp) JVP(c *graph.JVPContext) *graph.Node {
	if c.Batch() > 0 {
		c.Decline()
		return nil
	}
	if t := c.Tangent(0); t != nil {
		return ScatterAdd(t, c.Input(1), op.rows)
	}
	return nil
}

// Batch adds each example's updates at shared indices: the examples put
// behind the indices' axes, the rows scattered are (rows, B, d...).
// Batched indices decline.
func (op scatterAddOp) Batch(c *graph.BatchContext) *graph.Node {
	if c.Batched(1) || !batchable(c) {
		c.Decline()
		return nil
	}
	u := MoveAxis(c.Input(0), 0, c.Input(1).Type().Rank())
	return swapLeading(graph.Apply(op, u, c.Input(1)))
}

// moveRows is both kernels. table holds rows rows; flat holds one row per
// element of indices (of the given shape), in order. Gathering copies table
// row indices[i] to flat row i; scattering zeroes table and adds flat row i
// into table row indices[i].
func moveRows[T float](table, flat []T, indices indexData, rows int, shape []int, scatter bool) error {
	n := len(table) / rows
	if len(table) != rows*n || len(flat) != indices.len()*n {
		return fmt.Errorf("sizes do not fit: a table of %d elements in %d rows, %d indices, %d gathered elements",
			len(table), rows, indices.len(), len(flat))
	}
	if scatter {
		clear(table)
	}
	for i := range indices.len() {
		r, ok := indices.at(i, rows)
		if !ok {
			return fmt.Errorf("index %s at position %s of the indices is not a row index in [0,%d)",
				indices.format(i), position(i, shape), rows)
		}
		row, item := table[r*n:(r+1)*n], flat[i*n:(i+1)*n]
		if scatter {
			blasAxpy(n, 1, item, 1, row)
		} else {
			copy(item, row)
		}
	}
	return nil
}

// position writes flat position i of a tensor of the given shape as its
// coordinates, "(1,0)".
func position(i int, shape []int) string {
	coords := make([]int, len(shape))
	for a := len(shape) - 1; a >= 0; a-- {
		coords[a] = i % shape[a]
		i /= shape[a]
	}
	return graph.ShapeString(coords)
}

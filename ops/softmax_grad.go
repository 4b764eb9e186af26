package ops

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// softmaxGradOp is softmax's Jacobian-vector product along the last axis
// from the softmax's output y and a gradient g: y·(g − Σ g·y), the sum
// along the axis. Softmax's Backward builds it for a softmax along the
// last axis, where it computes, in one pass over the rows, the bits of
// the ops it stands for, Mul(y, Sub(g, SumKeepDims(Mul(g, y), -1))):
// each row's products g·y are added as Sum adds a contiguous row, and
// the difference and the product are rounded as Sub's and Mul's. Its
// derivatives are built from ops (and from it), to any order; a machine
// without a kernel for it runs those ops (Decompose).
type softmaxGradOp struct{}

// softmaxGrad returns y·(g − Σ g·y) along the last axis.
func softmaxGrad(y, g *graph.Node) *graph.Node { return graph.Apply(softmaxGradOp{}, y, g) }

// softmaxGradOf is softmaxGrad spelled in other ops, along axis.
func softmaxGradOf(y, g *graph.Node, axis int) *graph.Node {
	return Mul(y, Sub(g, SumKeepDims(Mul(g, y), axis)))
}

func (softmaxGradOp) Name() string { return "SoftmaxGrad" }

func (softmaxGradOp) Type(in []graph.Type) (graph.Type, error) {
	dtype, err := graph.CheckInputs(in, 2)
	if err != nil {
		return graph.Type{}, err
	}
	if in[0].Rank() == 0 || !slices.Equal(in[0].Shape, in[1].Shape) {
		return graph.Type{}, fmt.Errorf("y %s and g %s must be one shape of rank ≥ 1",
			graph.ShapeString(in[0].Shape), graph.ShapeString(in[1].Shape))
	}
	return graph.TypeOf(dtype, in[0].Shape...), nil
}

// Cost is four flops an element: a product, its sum, a difference and a
// product.
func (softmaxGradOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	c.Flops = 4 * int64(out.Size())
	return c
}

func (softmaxGradOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	shape := in[0].Shape()
	n := shape[len(shape)-1]
	return forFloat(out.Dtype(),
		func() error {
			softmaxGradRows(floats[float32](out), floats[float32](in[0]), floats[float32](in[1]), n)
			return nil
		},
		func() error {
			softmaxGradRows(floats[float64](out), floats[float64](in[0]), floats[float64](in[1]), n)
			return nil
		})
}

// softmaxGradRows sets out to y·(g − Σ g·y) along rows of n elements,
// with the operations of Mul, SumKeepDims, Sub and Mul on the rows: the
// products g·y of a block of rows (vek.VV, Mul's loop), each row's sum as
// Sum adds a contiguous row (0 + sumFloats, four rows at a time by
// sumRows), and y·(g − s) (vek's Sub and Mul). out may be y or g.
func softmaxGradRows[T float](out, y, g []T, n int) {
	if n == 0 {
		return
	}
	rows := len(out) / n
	if n > softmaxBlock {
		for r := range rows {
			at := r * n
			var s T
			s += sumProducts(g[at:at+n], y[at:at+n])
			softmaxGradRow(out[at:at+n], y[at:at+n], g[at:at+n], s)
		}
		return
	}
	var buf, sums [softmaxBlock]T
	per := softmaxBlock / n
	for r0 := 0; r0 < rows; r0 += per {
		rs := min(per, rows-r0)
		lo, hi := r0*n, (r0+rs)*n
		vek.VV(vek.Mul, buf[:hi-lo], g[lo:hi], y[lo:hi])
		sumRows(sums[:rs], buf[:hi-lo], n)
		for r := range rs {
			at := lo + r*n
			var s T
			s += sums[r]
			softmaxGradRow(out[at:at+n], y[at:at+n], g[at:at+n], s)
		}
	}
}

// softmaxGradRow sets o to y·(g − s).
func softmaxGradRow[T float](o, y, g []T, s T) {
	vek.VS(vek.Sub, o, g, s)
	vek.VV(vek.Mul, o, y, o)
}

// sumProducts is sumFloats of the products g[i]·y[i], which it forms a
// block at a time: the same four accumulators, in the same order.
func sumProducts[T float](g, y []T) T {
	var acc [4]T
	var buf [softmaxBlock]T // a multiple of 4 elements
	quads := len(g) - len(g)%4
	for start := 0; start < len(g); start += softmaxBlock {
		b := buf[:min(softmaxBlock, len(g)-start)]
		vek.VV(vek.Mul, b, g[start:], y[start:])
		for j, v := range b {
			if start+j < quads {
				acc[j%4] += v
			} else {
				acc[0] += v
			}
		}
	}
	return (acc[0] + acc[1]) + (acc[2] + acc[3])
}

// Backward: with s = Σ g·y and w the output's gradient, y's gradient is
// w·(g − s) − g·Σ w·y and g's is y·(w − Σ w·y), itself a softmaxGrad.
func (softmaxGradOp) Backward(ctx *graph.GradContext, w *graph.Node) []*graph.Node {
	y, g := ctx.Input(0), ctx.Input(1)
	grads := []*graph.Node{nil, nil}
	if ctx.NeedsGrad(0) {
		s := SumKeepDims(Mul(g, y), -1)
		grads[0] = Sub(Mul(w, Sub(g, s)), Mul(g, SumKeepDims(Mul(w, y), -1)))
	}
	if ctx.NeedsGrad(1) {
		grads[1] = softmaxGrad(y, w)
	}
	return grads
}

// JVP, with tangents ty and tg: ty·(g − s) + y·(tg − Σ (tg·y + g·ty)),
// s = Σ g·y.
func (softmaxGradOp) JVP(c *graph.JVPContext) *graph.Node {
	ty, tg := c.Tangent(0), c.Tangent(1)
	if ty == nil && tg == nil {
		return nil
	}
	y, g := c.Input(0), c.Input(1)
	var ds, out *graph.Node // the tangent of s; the result
	if ty != nil {
		ds = Mul(g, ty)
		out = Mul(ty, Sub(g, SumKeepDims(Mul(g, y), -1)))
	}
	if tg != nil {
		gy := Mul(tg, y)
		if ds == nil {
			ds = gy
		} else {
			ds = Add(gy, ds)
		}
	}
	var inner *graph.Node // tg − Σ ds
	if tg != nil {
		inner = Sub(tg, SumKeepDims(ds, -1))
	} else {
		inner = Neg(SumKeepDims(ds, -1))
	}
	term := Mul(y, inner)
	if out == nil {
		return term
	}
	return Add(out, term)
}

// Batch keeps the last axis: batched y and g give a softmaxGrad of the
// batch; one batched input alone the ops it stands for, broadcasting.
func (softmaxGradOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	if c.Batched(0) && c.Batched(1) {
		return softmaxGrad(c.Input(0), c.Input(1))
	}
	rank := c.Example().Type().Rank()
	return softmaxGradOf(alignedBatch(c, 0, rank), alignedBatch(c, 1, rank), -1)
}

// Decompose is the ops softmaxGrad stands for (graph.Decomposer).
func (softmaxGradOp) Decompose(in []*graph.Node) ([]*graph.Node, error) {
	return []*graph.Node{softmaxGradOf(in[0], in[1], -1)}, nil
}

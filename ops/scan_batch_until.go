package ops

import (
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// The batching of While's padded loops (Scan's until and skipBy), whose
// examples may stop at different steps: the batched loop runs while any
// example does (JAX's batching rule for while_loop). In the loop's step,
// a Cond on each example's predicate selects per example (selectBatch):
// an example that has stopped takes the branch keeping its carry, so its
// values stay frozen, bit for bit, while the others go on.

// anyNonzero is, from flags of shape (B, 1…) (one value per example),
// a float64 scalar that is nonzero when any flag is: the count of them.
func anyNonzero(flags *graph.Node, size int) *graph.Node {
	return Sum(nonzeroFlags(flags, size))
}

// nonzeroFlags is, from x of shape (B, 1…) (one value per example), 1
// where the value is nonzero (NaN included, as Cond's predicate) and 0
// elsewhere, (B,) of float64.
func nonzeroFlags(x *graph.Node, size int) *graph.Node {
	g := x.Graph()
	zero := Equal(Reshape(Cast(x, graph.Float64), size), g.Scalar(0, graph.Float64))
	return Sub(g.Scalar(1, graph.Float64), zero)
}

// skipBatch batches a derivative's loop of a While (skipBy) whose flags
// are batched: each example's new carries, sums' terms and step outputs
// are the body's where its flag is nonzero, and its carries, no terms and
// zeros elsewhere, as its own loop's skipped steps give; the loop itself
// skips the steps where every example's flag is zero. outs are the
// batched body's outputs (the carries, sums' terms and step outputs),
// changed in place; ins are its inputs (carries, sequences, captured
// values). It returns the loop's step inputs, with a new one last for
// whether any example's flag is nonzero, and that sequence, of shape
// (T,); nil when it declines (an int64 to select).
func (op *scanOp) skipBatch(c *graph.BatchContext, sub *graph.Graph, ins, outs []*graph.Node) ([]*graph.Node, *graph.Node) {
	C, A, S := op.carries, op.sums, op.seqs
	keep := nonzeroFlags(ins[C+op.skipBy-1], c.Size())
	for j, o := range outs {
		var other *graph.Node
		if j < C {
			other = ins[j] // the carry kept
		} else {
			other = scalarLike(o, 0)
		}
		if outs[j] = selectExact(keep, o, other, op.body.Outputs[j].Type().Rank()+1); outs[j] == nil {
			c.Decline()
			return nil, nil
		}
	}
	any := sub.Input("any_flag", graph.Float64)
	flags := c.Input(C + A + op.skipBy - 1) // (B, T, 1…)
	T := op.steps
	seq := Sum(Reshape(nonzeroFlags(flags, c.Size()*T), c.Size(), T), 0)
	return append(slices.Clone(ins[C:C+S]), any), seq
}

// selectExact is Where(keep, a, b) per example, keep (B,) of float64, a
// and b batched (of rank rank) or shared (a rank less, broadcast): for an
// int32 through float64, which holds it exactly; nil for an int64.
func selectExact(keep, a, b *graph.Node, rank int) *graph.Node {
	dt := a.DType()
	switch {
	case graph.IsFloat(dt):
		return Where(keepAligned(keep, dt, rank), a, b)
	case dt != graph.Int32:
		return nil
	}
	f := graph.Float64
	return Cast(Where(keepAligned(keep, f, rank), Cast(a, f), Cast(b, f)), dt)
}

// broadcastable reports whether a value of dtype broadcasts to the batch
// exactly (broadcastExact).
func broadcastable(dtype tensor.Dtype) bool {
	return dtype == graph.Float32 || dtype == graph.Float64 || dtype == graph.Int32
}

// broadcastExact is broadcastBatch for float and int32 values (an int32
// through float64, which holds it exactly); nil, declining, for another.
func broadcastExact(c *graph.BatchContext, x *graph.Node) *graph.Node {
	switch dt := x.DType(); {
	case graph.IsFloat(dt):
		return broadcastBatch(c, x)
	case dt == graph.Int32:
		return Cast(broadcastBatch(c, Cast(x, graph.Float64)), dt)
	}
	c.Decline()
	return nil
}

// swapExact is swapLeading for float and int32 values (an int32 through
// float64, which holds it exactly).
func swapExact(x *graph.Node) *graph.Node {
	if dt := x.DType(); dt == graph.Int32 {
		return Cast(swapLeading(Cast(x, graph.Float64)), dt)
	}
	return swapLeading(x)
}

package ops

import (
	"slices"

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
// (T,).
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
		outs[j] = selectExact(keep, o, other, op.body.Outputs[j].Type().Rank()+1)
	}
	any := sub.Input("any_flag", graph.Float64)
	flags := c.Input(C + A + op.skipBy - 1) // (B, T, 1…)
	T := op.steps
	seq := Sum(Reshape(nonzeroFlags(flags, c.Size()*T), c.Size(), T), 0)
	return append(slices.Clone(ins[C:C+S]), any), seq
}

// selectExact is Where(keep, a, b) per example, keep (B,) of float64, a
// and b batched (of rank rank) or shared (a rank less, broadcast): exact
// for every dtype, integers selected as they are.
func selectExact(keep, a, b *graph.Node, rank int) *graph.Node {
	dt := a.DType()
	if !graph.IsFloat(dt) {
		dt = graph.Float64 // an integer selection takes float flags
	}
	return Where(keepAligned(keep, dt, rank), a, b)
}

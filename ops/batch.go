package ops

import (
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// Batching rules (graph.Batchable, for compile.Vmap) sit beside each op's
// kernel and Backward; these helpers are what they share. A rule's inputs
// are batched (a leading axis of c.Size() examples) or shared by every
// example; it declines what it does not handle, and the op is then looped
// over the batch.

// batchable reports whether the op's output, batched, stays within the
// ranks kernels take; a rule declines (and returns false) otherwise.
func batchable(c *graph.BatchContext) bool {
	if c.Example().Type().Rank()+1 > maxRank {
		c.Decline()
		return false
	}
	return true
}

// alignedBatch returns input i shaped to broadcast against a batched value
// of example rank rank: a batched input of lower example rank gets size-1
// axes after its batch axis, so that broadcasting from the end pairs its
// axes with the examples' and never its batch axis with one of them; a
// shared input broadcasts as it is.
func alignedBatch(c *graph.BatchContext, i, rank int) *graph.Node {
	x := c.Input(i)
	if !c.Batched(i) || x.Type().Rank() == rank+1 {
		return x
	}
	shape := []int{c.Size()}
	for range rank + 1 - x.Type().Rank() {
		shape = append(shape, 1)
	}
	return Reshape(x, append(shape, x.Shape()[1:]...)...)
}

// batchedInput returns input i with the batch axis: a shared input (of
// any dtype, integer indices included) is broadcast to every example.
func batchedInput(c *graph.BatchContext, i int) *graph.Node {
	x := c.Input(i)
	if c.Batched(i) {
		return x
	}
	return broadcastBatch(c, x)
}

// broadcastBatch is x, a value shared by every example (of any dtype),
// broadcast to the batch.
func broadcastBatch(c *graph.BatchContext, x *graph.Node) *graph.Node {
	return BroadcastTo(Reshape(x, append([]int{1}, x.Shape()...)...), c.Shape(x.Shape())...)
}

// elementwiseBatch is the rule of elementwise ops (broadcasting ones
// included): op applies to the batch as it is, its inputs aligned so that
// the batch axis broadcasts only against batch axes.
func elementwiseBatch(c *graph.BatchContext, op graph.Op) *graph.Node {
	if !batchable(c) {
		return nil
	}
	rank := c.Example().Type().Rank()
	ins := make([]*graph.Node, len(c.Inputs()))
	for i := range ins {
		ins[i] = alignedBatch(c, i, rank)
	}
	return graph.Apply(op, ins...)
}

// leadingBatch is the rule of ops that map over their inputs' leading
// axes (linear algebra's (…, n, n)): the batch is one more leading axis,
// and a shared input is broadcast to every example, since the inputs'
// leading axes must agree.
func leadingBatch(c *graph.BatchContext, op graph.Op) *graph.Node {
	if !batchable(c) {
		return nil
	}
	ins := make([]*graph.Node, len(c.Inputs()))
	for i := range ins {
		ins[i] = batchedInput(c, i)
	}
	return graph.Apply(op, ins...)
}

// rowsBatch is the rule of ops whose output's rows (its leading axis: a
// batch's images or losses) are each computed from the same rows of the
// inputs listed in rows and from the whole of the others (a filter): the
// batch folds into that axis, (B·N, …), shared row inputs broadcast to
// every example. An op reading a batched input whole declines.
func rowsBatch(c *graph.BatchContext, op graph.Op, rows ...int) *graph.Node {
	ins := slices.Clone(c.Inputs())
	for i := range ins {
		if !slices.Contains(rows, i) {
			if c.Batched(i) {
				c.Decline()
				return nil
			}
			continue
		}
		x := batchedInput(c, i)
		s := x.Shape()
		if len(s) < 2 {
			c.Decline()
			return nil
		}
		ins[i] = Reshape(x, append([]int{s[0] * s[1]}, s[2:]...)...)
	}
	return Reshape(graph.Apply(op, ins...), c.Shape(c.Example().Shape())...)
}

// groupedBatch is the rule of a convolution (op, its groups already
// multiplied by the batch's size) whose examples become groups of their
// own: the batch merges into the channels of the images, (N, B·C, H, W),
// and into the rows of the filter (input filter, or the output when
// outFilter), (B·O, C/groups, kH, kW).
func groupedBatch(c *graph.BatchContext, op graph.Op, filter int, outFilter bool) *graph.Node {
	if !batchable(c) {
		return nil
	}
	ins := make([]*graph.Node, len(c.Inputs()))
	for i := range ins {
		x := batchedInput(c, i)
		if i == filter {
			s := x.Shape()
			ins[i] = Reshape(x, append([]int{s[0] * s[1]}, s[2:]...)...)
		} else {
			ins[i] = mergeChannels(x)
		}
	}
	y := graph.Apply(op, ins...)
	if outFilter {
		return Reshape(y, c.Shape(c.Example().Shape())...)
	}
	return splitChannels(y, c.Size())
}

// mergeChannels is a batch of (N, C, ...) values as one with each
// example's channels its own: (B, N, C, ...) → (N, B·C, ...).
func mergeChannels(x *graph.Node) *graph.Node {
	s := x.Shape()
	return Reshape(swapLeading(x), append([]int{s[1], s[0] * s[2]}, s[3:]...)...)
}

// splitChannels undoes mergeChannels for a batch of size b:
// (N, b·C, ...) → (b, N, C, ...).
func splitChannels(y *graph.Node, b int) *graph.Node {
	s := y.Shape()
	return swapLeading(Reshape(y, append([]int{s[0], b, s[1] / b}, s[2:]...)...))
}

// MoveAxis returns x with axis from moved to position to, the others
// keeping their order (NumPy's moveaxis: a negative axis counts from the
// end).
func MoveAxis(x *graph.Node, from, to int) *graph.Node {
	if p := poisoned("MoveAxis", x); p != nil {
		return p
	}
	rank := x.Type().Rank()
	from, err := graph.NormalizeAxis(from, rank)
	if err == nil {
		to, err = graph.NormalizeAxis(to, rank)
	}
	if err != nil {
		return failBuilder("MoveAxis", err, x)
	}
	if from == to {
		return x
	}
	perm := make([]int, 0, rank)
	for a := range x.Type().Rank() {
		if a != from {
			perm = append(perm, a)
		}
	}
	return Transpose(x, slices.Insert(perm, to, from)...)
}

// swapLeading swaps x's first two axes: a loop's steps and a batch's
// examples, say.
func swapLeading(x *graph.Node) *graph.Node { return MoveAxis(x, 1, 0) }

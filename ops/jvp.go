package ops

import "github.com/nabla-go/nabla/graph"

// Forward-mode rules (graph.ForwardDifferentiable) sit beside each op's
// Backward; these helpers are what they share.

// aligned returns input i's tangent (nil where it is zero) shaped to
// broadcast against the output's tangent: batched, its primal axes are
// preceded by size-1 axes up to the output's rank, so that alignment from
// the end never pairs the batch axis with a primal one.
func aligned(c *graph.JVPContext, i int) *graph.Node {
	t := c.Tangent(i)
	if t == nil || c.Batch() == 0 {
		return t
	}
	in, out := c.Input(i).Shape(), c.Output().Shape()
	if len(in) >= len(out) {
		return t
	}
	shape := make([]int, 0, len(out)+1)
	shape = append(shape, c.Batch())
	for range len(out) - len(in) {
		shape = append(shape, 1)
	}
	return Reshape(t, append(shape, in...)...)
}

// addTangents sums the non-nil terms; nil when every term is.
func addTangents(terms ...*graph.Node) *graph.Node {
	var sum *graph.Node
	for _, t := range terms {
		switch {
		case t == nil:
		case sum == nil:
			sum = t
		default:
			sum = Add(sum, t)
		}
	}
	return sum
}

// times is t·f, nil for a nil (zero) t.
func times(t, f *graph.Node) *graph.Node {
	if t == nil {
		return nil
	}
	return Mul(t, f)
}

// zeroTangent is a zero tangent for input i, of the tangent's shape.
func zeroTangent(c *graph.JVPContext, i int) *graph.Node {
	x := c.Input(i)
	return BroadcastTo(scalarLike(x, 0), c.Shape(x.Shape())...)
}

// batchedAxes shifts a reduction's axis mask past the batch axis.
func batchedAxes(c *graph.JVPContext, axes uint64) uint64 {
	if c.Batch() > 0 {
		return axes << 1
	}
	return axes
}

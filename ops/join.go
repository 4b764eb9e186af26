package ops

import (
	"cmp"
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// JoinPads returns the sum of xs when every x is a Pad along the same axis
// to the same type and the pieces padded do not overlap, as the gradients
// of slices of one value are: the pieces concatenated in their order along
// the axis, each after the zeros of the gap before it (the last with the
// gap after it too). That copies each piece once, where the sum of the
// padded copies would write and then add every padded element. ok is
// false for any other xs, and for fewer than two.
func JoinPads(xs []*graph.Node) (sum *graph.Node, ok bool) {
	if len(xs) < 2 {
		return nil, false
	}
	type piece struct {
		x  *graph.Node
		at int
	}
	pieces := make([]piece, len(xs))
	var axis int
	for i, x := range xs {
		p, isPad := x.Op().(padOp)
		if !isPad || x.Err() != nil || !x.Type().Equal(xs[0].Type()) {
			return nil, false
		}
		if i == 0 {
			axis = p.axis
		}
		if p.axis != axis {
			return nil, false
		}
		pieces[i] = piece{x.Inputs()[0], p.before}
	}
	slices.SortStableFunc(pieces, func(a, b piece) int { return cmp.Compare(a.at, b.at) })
	parts := make([]*graph.Node, len(pieces))
	end := 0 // of the pieces so far, along the axis
	for i, p := range pieces {
		if p.at < end {
			return nil, false // overlapping: they add up
		}
		parts[i] = p.x
		if p.at > end {
			parts[i] = Pad(p.x, axis, p.at-end, 0)
		}
		end = p.at + p.x.Shape()[axis]
	}
	if dim := xs[0].Shape()[axis]; end < dim {
		parts[len(parts)-1] = Pad(parts[len(parts)-1], axis, 0, dim-end)
	}
	return Concat(axis, parts...), true
}

package compile

import (
	"cmp"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// fuse replaces each group of elementwise values of one size that can run
// as one pass over the elements by one instruction applying an
// ops.FusedOp to the group's leaves: a run then makes one pass over the
// elements instead of one per op, and the values only the group reads
// need no memory of their own. The values stay the same bit for bit.
//
// Groups grow in program order, once each update has moved up to the
// gradient it reads (hoistUpdates) and the ops fuse cannot fuse have moved
// as late as they can go (sinkOpaque). An elementwise value joins the
// groups of its operands that have its number of elements and dtype
// (merging them) while those groups are open: a group closes once a value
// outside it reads one of its members, since that value must run after
// the group's instruction, which takes the place of the group's last
// member. So every value reading a member from outside comes after the
// instruction, and the program stays in order. Operands outside the group
// are its leaves (they
// may broadcast); members read outside it, or requested as outputs or by
// updates, are its outputs: several make a multi-output instruction
// (ops.FusedMulti). Groups of one value are left as they are.
//
// The fused instruction keeps the graph node of its first output, and its
// op keeps every absorbed node, so errors, NaN checks and profiles name
// the user's code.
func fuse(f *function) error {
	f.hoistUpdates()
	f.sinkOpaque()
	groupOf := map[*value]*fusion{}
	for _, v := range f.values {
		var g *fusion
		if fusible(v) {
			for _, a := range v.args {
				h := groupOf[a]
				if h == nil || !h.open || a.typ.DType != v.typ.DType || a.typ.Size() != v.typ.Size() {
					continue
				}
				if g == nil {
					g = h
				} else if h != g {
					g = g.merge(h, groupOf)
				}
			}
			if g == nil {
				g = &fusion{open: true}
			}
			g.members = append(g.members, v)
			groupOf[v] = g
		}
		for _, a := range v.args {
			if h := groupOf[a]; h != nil && h != g {
				h.open = false // v runs after h's instruction
			}
		}
	}
	external := f.readOutside(groupOf)
	uses := f.uses()
	pos := make(map[*value]int, len(f.values))
	for i, v := range f.values {
		pos[v] = i
	}
	results := map[*value][]*value{} // a fused group's last member -> its instruction's values
	done := map[*fusion]bool{}
	for _, v := range f.values {
		g := groupOf[v]
		if g == nil || len(g.members) < 2 || done[g] {
			continue
		}
		done[g] = true
		last, vals, err := g.fuse(external, uses, pos)
		if err != nil {
			return err
		}
		results[last] = vals
	}
	kept := make([]*value, 0, len(f.values))
	for _, v := range f.values {
		switch g := groupOf[v]; {
		case g == nil || len(g.members) < 2:
			kept = append(kept, v)
		case results[v] != nil:
			kept = append(kept, results[v]...)
		}
	}
	f.values = kept
	return nil
}

// sinkOpaque reorders the values so that each op value fuse cannot fuse
// (a reduction, a product) comes as late as it can: just before the first
// value that reads it, or at the end. Its readers closing a group as late
// as they can, elementwise values around it join larger groups: the loss
// of a training step no longer splits the forward pass's elementwise ops
// from the backward pass's.
//
// An update's value stays after the values before it that read its
// parameter, so that it may still be computed in the parameter's slot
// (pass inplace).
func (f *function) sinkOpaque() {
	f.reorder(func(v *value) bool { return v.kind != graph.KindOp || fusible(v) })
}

// reorder places the values in a new order: first those eager accepts,
// in order, each after what it reads; then the others, each as late as
// it can come (just before its first reader, or at the end). A
// multi-output op's outputs come together, and an update's value after
// the values before it that read its parameter.
func (f *function) reorder(eager func(*value) bool) {
	order := make([]*value, 0, len(f.values))
	placed := make(map[*value]bool, len(f.values))
	pos := make(map[*value]int, len(f.values))
	for i, v := range f.values {
		pos[v] = i
	}
	readers := f.paramReaders()
	var place func(v *value)
	place = func(v *value) {
		if placed[v] {
			return
		}
		outs := v.results()
		for _, o := range outs {
			placed[o] = true
		}
		for _, o := range outs {
			for _, a := range o.args {
				place(a)
			}
			for _, r := range readers[o] {
				if pos[r] < pos[o] {
					place(r)
				}
			}
		}
		order = append(order, outs...)
	}
	for _, v := range f.values {
		if eager(v) {
			place(v)
		}
	}
	for _, v := range f.values {
		place(v)
	}
	copy(f.values, order)
}

// fusible reports whether v is an elementwise float value of a rank fused
// instructions handle. Empty values are left alone: groups form by size,
// and values of different shapes are all of size 0.
func fusible(v *value) bool {
	return v.kind == graph.KindOp && v.op != nil && ops.IsElementwise(v.op) && graph.IsFloat(v.typ.DType) &&
		v.typ.Rank() <= ops.MaxFusedRank && v.typ.Size() > 0
}

// fusion is a group of elementwise values to compute in one instruction.
type fusion struct {
	members []*value
	open    bool // no value outside the group reads a member yet
}

// merge moves the smaller group's members into the larger and returns it.
func (g *fusion) merge(h *fusion, groupOf map[*value]*fusion) *fusion {
	if len(g.members) < len(h.members) {
		g, h = h, g
	}
	for _, v := range h.members {
		groupOf[v] = g
	}
	g.members = append(g.members, h.members...)
	h.members = nil
	return g
}

// readOutside marks the values read by a value outside their group, or
// after the run (outputs and updates).
func (f *function) readOutside(groupOf map[*value]*fusion) map[*value]bool {
	out := map[*value]bool{}
	for _, v := range f.values {
		for _, a := range v.args {
			if g := groupOf[a]; g != nil && g != groupOf[v] {
				out[a] = true
			}
		}
	}
	for _, o := range f.outputs {
		out[o] = true
	}
	for _, u := range f.updates {
		out[u.expr] = true
	}
	return out
}

// fuse turns the group into one instruction and returns its last member,
// whose place the instruction takes, and the instruction's values, in
// order: the fused value, or the outputs of a multi-output fused op.
func (g *fusion) fuse(external map[*value]bool, uses, pos map[*value]int) (*value, []*value, error) {
	slices.SortFunc(g.members, func(a, b *value) int { return cmp.Compare(pos[a], pos[b]) })
	last := g.members[len(g.members)-1]
	member := make(map[*value]int, len(g.members))
	for j, v := range g.members {
		member[v] = j
	}
	var leaves, outs []*value
	reads := map[*value]int{} // how often the group reads each leaf
	for _, v := range g.members {
		for _, a := range v.args {
			if _, ok := member[a]; !ok {
				if reads[a] == 0 {
					leaves = append(leaves, a)
				}
				reads[a]++
			}
		}
		if external[v] {
			outs = append(outs, v)
		}
	}
	if len(outs) == 0 { // nothing reads the group: deadcode was off
		outs = []*value{last}
	}
	if len(outs) == 1 {
		// The output may overwrite the first leaf of its size (see
		// FusedOp.InPlace): put first a computed leaf of its type that
		// only the group reads, which dies here.
		dies := func(l *value) bool { return l.kind == graph.KindOp && l.typ.Equal(outs[0].typ) && reads[l] == uses[l] }
		slices.SortStableFunc(leaves, func(a, b *value) int { return boolRank(dies(b)) - boolRank(dies(a)) })
	}
	index := make(map[*value]int, len(leaves)+len(g.members))
	for i, l := range leaves {
		index[l] = i
	}
	for j, v := range g.members {
		index[v] = len(leaves) + j
	}
	steps := make([]ops.FusedStep, len(g.members))
	for j, v := range g.members {
		steps[j] = ops.FusedStep{Op: v.op, Args: mapSlice(v.args, func(a *value) int { return index[a] }), Node: v.node}
	}
	op, err := ops.NewFused(mapSlice(leaves, func(l *value) graph.Type { return l.typ }), steps,
		mapSlice(outs, func(o *value) int { return member[o] })...)
	if err != nil {
		return nil, nil, err
	}
	if len(outs) == 1 {
		outs[0].op, outs[0].args = op, leaves
		return last, outs, nil
	}
	multi := op.Multi()
	for k, o := range outs {
		o.op, o.multi, o.index, o.group, o.args = nil, multi, k, outs, slices.Clone(leaves)
	}
	return last, outs, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

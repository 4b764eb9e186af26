package compile

import (
	"cmp"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// fuse replaces each maximal tree of elementwise values whose inner values
// nothing else reads by one value applying an ops.FusedOp to the tree's
// leaves: a run then makes one pass over the elements instead of one per
// op, and the inner values need no memory of their own. The values stay
// the same bit for bit.
//
// A value joins the tree of the value that reads it when it is that
// value's only use (it is not an output, an update's value, or read twice)
// and has the same number of elements (its leaves may broadcast). Trees of
// one value are left as they are. The fused value keeps
// the root's graph node, and the op keeps every absorbed node, so errors,
// NaN checks and profiles name the user's code.
func fuse(f *function) error {
	uses := f.uses()
	absorbed := map[*value]bool{} // values joining the tree of their reader
	for _, v := range f.values {
		if !fusible(v) {
			continue
		}
		for _, a := range v.args {
			if fusible(a) && uses[a] == 1 && a.typ.DType == v.typ.DType && a.typ.Size() == v.typ.Size() {
				absorbed[a] = true
			}
		}
	}
	if len(absorbed) == 0 {
		return nil
	}
	for _, v := range f.values {
		if fusible(v) && !absorbed[v] {
			if err := fuseTree(v, absorbed, uses); err != nil {
				return err
			}
		}
	}
	kept := f.values[:0]
	for _, v := range f.values {
		if !absorbed[v] {
			kept = append(kept, v)
		}
	}
	clear(f.values[len(kept):])
	f.values = kept
	return nil
}

// fusible reports whether v is an elementwise value.
func fusible(v *value) bool {
	return v.kind == graph.KindOp && v.op != nil && ops.IsElementwise(v.op)
}

// fuseTree turns root, with the absorbed values below it, into one fused
// value reading the tree's leaves.
func fuseTree(root *value, absorbed map[*value]bool, uses map[*value]int) error {
	t := tree{absorbed: absorbed, need: map[*value]int{}, reads: map[*value]int{}}
	t.measure(root)
	if len(t.need) < 2 {
		return nil // a single op gains nothing
	}
	t.order(root)
	// The output may overwrite the first leaf of its size (see
	// FusedOp.InPlace): put first a computed leaf of the root's type that
	// only the tree reads, which dies here.
	dies := func(l *value) bool { return l.kind == graph.KindOp && l.typ.Equal(root.typ) && t.reads[l] == uses[l] }
	slices.SortStableFunc(t.leaves, func(a, b *value) int {
		return boolRank(dies(b)) - boolRank(dies(a))
	})
	index := make(map[*value]int, len(t.leaves)+len(t.steps))
	for i, l := range t.leaves {
		index[l] = i
	}
	for j, s := range t.steps {
		index[s] = len(t.leaves) + j
	}
	steps := make([]ops.FusedStep, len(t.steps))
	for j, s := range t.steps {
		steps[j] = ops.FusedStep{Op: s.op, Args: mapSlice(s.args, func(a *value) int { return index[a] }), Node: s.node}
	}
	op, err := ops.NewFused(mapSlice(t.leaves, func(l *value) graph.Type { return l.typ }), steps)
	if err != nil {
		return err
	}
	root.op, root.args = op, t.leaves
	return nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tree collects a fused tree's steps, in an order that keeps few
// intermediates alive at once, and its leaves.
type tree struct {
	absorbed map[*value]bool
	need     map[*value]int // scratch blocks a member's subtree needs
	reads    map[*value]int // how often the tree reads each leaf
	steps    []*value
	leaves   []*value
}

// inTree reports whether a, an operand of a member, is itself a member.
func (t *tree) inTree(a *value) bool { return t.absorbed[a] }

// measure computes the Sethi–Ullman number of v's subtree: the blocks of
// scratch its evaluation holds at once when the needier operand goes
// first.
func (t *tree) measure(v *value) int {
	var needs []int
	for _, a := range v.args {
		if t.inTree(a) {
			needs = append(needs, t.measure(a))
		}
	}
	slices.SortFunc(needs, func(a, b int) int { return cmp.Compare(b, a) })
	n := 1
	for i, k := range needs {
		n = max(n, k+i)
	}
	t.need[v] = n
	return n
}

// order lists v's subtree in evaluation order, the needier operands
// first, and its leaves as they are first read.
func (t *tree) order(v *value) {
	args := slices.Clone(v.args)
	slices.SortStableFunc(args, func(a, b *value) int { return cmp.Compare(t.need[b], t.need[a]) })
	for _, a := range args {
		if t.inTree(a) {
			t.order(a)
		}
	}
	for _, a := range v.args {
		if !t.inTree(a) {
			if t.reads[a] == 0 {
				t.leaves = append(t.leaves, a)
			}
			t.reads[a]++
		}
	}
	t.steps = append(t.steps, v)
}

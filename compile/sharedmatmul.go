package compile

import (
	"slices"

	"github.com/nabla-go/nabla/ops"
)

// sharedmatmul computes together the products of single rows by one
// matrix, as stored: a SharedMatMul instruction reads the matrix once for
// up to ops.MaxSharedRows of them. A Hessian–vector product multiplies the
// input and its tangent by each weight (x·W and v·W), and the gradient
// and its tangent by each transposed weight: each pair costs about what
// one product costs. A product's bias (MatMulAdd, pass matmuladd) comes
// along; every output keeps its value bit for bit.
//
// Products join a group only where computing them at once keeps the
// program in order: none of them may depend on another, directly or
// through a group already formed. The values are then ordered again, each
// group's outputs together where the first of them was needed.
func sharedmatmul(f *function) error {
	var mats []*value
	byMat := map[*value][]*value{}
	uses := f.uses()
	for _, v := range f.values {
		if rowProduct(v) && uses[v] > 0 { // a dead product stays out of the way
			b := v.args[1]
			if byMat[b] == nil {
				mats = append(mats, b)
			}
			byMat[b] = append(byMat[b], v)
		}
	}
	s := sharing{groupOf: map[*value][]*value{}}
	s.levels(f)
	for _, b := range mats {
		for cands := byMat[b]; len(cands) >= 2; {
			group, rest := cands[:1:1], []*value(nil)
			failed := 0
			for i, c := range cands[1:] {
				if len(group) == ops.MaxSharedRows || failed == maxTries {
					rest = append(rest, cands[1+i:]...)
					break
				}
				if s.cycles(group, c) {
					rest = append(rest, c)
					failed++
					continue
				}
				group = append(group, c)
			}
			if len(group) >= 2 {
				s.share(group)
				s.levels(f)
			}
			cands = rest
		}
	}
	if len(s.groupOf) > 0 {
		f.reorder(func(*value) bool { return true })
	}
	return nil
}

// rowProduct reports whether v is a product, or a product plus an
// addend, of a (1, k) row by a (k, n) matrix as stored, neither empty.
func rowProduct(v *value) bool {
	if v.op == nil || v.typ.Size() == 0 {
		return false
	}
	switch op := v.op.(type) {
	case ops.MatMulOp:
		if op.TransA || op.TransB {
			return false
		}
	case ops.MatMulAddOp:
		if op.TransA || op.TransB {
			return false
		}
	default:
		return false
	}
	a, b := v.args[0].typ.Shape, v.args[1].typ.Shape
	return len(a) == 2 && len(b) == 2 && a[0] == 1 && a[1] > 0 && len(v.typ.Shape) == 2
}

// maxTries bounds the products that may fail to join a group before the
// group closes: in a chain of products by one matrix (an unrolled
// recurrence), each depends on the one before, and trying them all
// against each would cost the square of their number.
const maxTries = 8

// sharing is the groups of products formed so far.
type sharing struct {
	groupOf map[*value][]*value // a member -> its group
	// level is each value's depth, a group's members counted as one
	// value: 0 for a leaf, else one more than the deepest value it
	// reads. A value depends only on values of lower levels.
	level map[*value]int
}

// levels computes s.level for f's values.
func (s *sharing) levels(f *function) {
	s.level = make(map[*value]int, len(f.values))
	var level func(v *value) int
	level = func(v *value) int {
		if l, ok := s.level[v]; ok {
			return l
		}
		members := s.groupOf[v]
		if members == nil {
			members = []*value{v}
		}
		l := 0
		for _, m := range members {
			for _, a := range m.args {
				l = max(l, level(a)+1)
			}
		}
		for _, m := range members {
			s.level[m] = l
		}
		return l
	}
	for _, v := range f.values {
		level(v)
	}
}

// cycles reports whether computing c at once with group, products none
// of which depends on another, would make one depend on another: c on a
// member, or a member on c, through values' arguments and the groups
// already formed (whose members are computed at once).
func (s *sharing) cycles(group []*value, c *value) bool {
	if s.reaches(c, group) {
		return true
	}
	for _, m := range group {
		if s.reaches(m, []*value{c}) {
			return true
		}
	}
	return false
}

// reaches reports whether from depends on one of targets. It looks only
// at values deeper than the shallowest target (see sharing.level).
func (s *sharing) reaches(from *value, targets []*value) bool {
	floor := s.level[targets[0]]
	for _, t := range targets {
		floor = min(floor, s.level[t])
	}
	if s.level[from] <= floor {
		return false
	}
	seen := map[*value]bool{}
	stack := []*value{from}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		preds := [][]*value{v.args}
		for _, m := range s.groupOf[v] {
			preds = append(preds, m.args)
		}
		for _, args := range preds {
			for _, a := range args {
				if slices.Contains(targets, a) {
					return true
				}
				if !seen[a] && s.level[a] > floor {
					seen[a] = true
					stack = append(stack, a)
				}
			}
		}
	}
	return false
}

// share turns the products of group, in program order, into the outputs
// of one SharedMatMul: its rows, the matrix, then the addends.
func (s *sharing) share(group []*value) {
	op := ops.SharedMatMulOp{Rows: len(group)}
	args := make([]*value, 0, 2*len(group)+1)
	for _, v := range group {
		args = append(args, v.args[0])
	}
	args = append(args, group[0].args[1])
	for i, v := range group {
		if len(v.args) == 3 {
			op.Addends |= 1 << i
			args = append(args, v.args[2])
		}
	}
	for i, v := range group {
		v.op, v.multi, v.index, v.group, v.args = nil, op, i, group, slices.Clone(args)
		s.groupOf[v] = group
	}
}

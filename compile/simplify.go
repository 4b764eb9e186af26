package compile

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// simplify removes the algebraic no-ops that symbolic gradients are full
// of: x·1, 1·x, x/1, x+0, 0+x, x-0, Scale(x, 1), -(-x), and folds
// Scale(Scale(x, a), b) into Scale(x, a·b). A value is only replaced by one
// of exactly its type: a broadcasting x+0 is not x. (x+0 is x but for the
// sign of a zero x; x·0 is not 0 when x is infinite, so it stays.)
func simplify(f *function) error {
	s := simplifier{uniform: map[*value]uniformity{}}
	f.rewrite(s.value)
	return nil
}

type simplifier struct {
	uniform map[*value]uniformity // memo of constants' uniformity
}

type uniformity struct {
	c  float64
	ok bool
}

// value rewrites v until no rule applies and returns what stands for it.
func (s *simplifier) value(v *value) *value {
	for {
		w, changed := s.step(v)
		if w != v || !changed {
			return w
		}
	}
}

// step applies one rule to v. It returns a replacement for v, or v itself
// and whether v was changed in place.
func (s *simplifier) step(v *value) (*value, bool) {
	if v.op == nil {
		return v, false
	}
	same := func(w *value) *value {
		if w.typ.Equal(v.typ) {
			return w
		}
		return v
	}
	op, args := v.op, v.args
	switch {
	case ops.IsMul(op):
		if s.is(args[1], 1) {
			return same(args[0]), false
		}
		if s.is(args[0], 1) {
			return same(args[1]), false
		}
	case ops.IsAdd(op):
		if s.is(args[1], 0) {
			return same(args[0]), false
		}
		if s.is(args[0], 0) {
			return same(args[1]), false
		}
	case ops.IsSub(op):
		if s.is(args[1], 0) {
			return same(args[0]), false
		}
	case ops.IsDiv(op):
		if s.is(args[1], 1) {
			return same(args[0]), false
		}
	case ops.IsNeg(op):
		if x := args[0]; x.op != nil && ops.IsNeg(x.op) {
			return same(x.args[0]), false
		}
	}
	if c, ok := ops.IsScale(op); ok {
		if c == 1 {
			return same(args[0]), false
		}
		if x := args[0]; x.op != nil {
			if a, ok := ops.IsScale(x.op); ok {
				v.op, v.args = ops.ScaleOp(a*c), []*value{x.args[0]}
				return v, true
			}
		}
	}
	return v, false
}

// is reports whether v is a constant whose every element is c.
func (s *simplifier) is(v *value, c float64) bool {
	if v.kind != graph.KindConst {
		return false
	}
	u, ok := s.uniform[v]
	if !ok {
		u = uniformOf(v)
		s.uniform[v] = u
	}
	return u.ok && u.c == c
}

// uniformOf finds whether a constant's elements are all equal, and to what.
func uniformOf(v *value) uniformity {
	n := v.typ.Size()
	if n == 0 {
		return uniformity{}
	}
	c := graph.Float(v.konst, 0)
	for i := 1; i < n; i++ {
		if graph.Float(v.konst, i) != c {
			return uniformity{}
		}
	}
	return uniformity{c: c, ok: true}
}

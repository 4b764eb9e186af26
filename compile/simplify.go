package compile

import (
	"math"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// simplify removes the algebraic no-ops that symbolic gradients are full
// of: x+0, 0+x, x-0, x/1, Scale(x, 1), -(-x), Identity and StopGradient,
// Reshape, BroadcastTo and SumTo to x's own shape, and the identity
// Transpose. It turns x·c, for a constant c with all elements equal, into
// Scale(x, c) (x·1 into x), and merges Scale(Scale(x, a), b) into
// Scale(x, a·b) (unless a·b overflows or underflows), a negated Scale into a Scale, a Reshape of a Reshape into
// one, and a Transpose of a Transpose into one.
//
// A value is only replaced by one of exactly its type: a broadcasting x+0
// is not x. x+0 is x but for the sign of a zero x, and Scale(x, a·b)
// rounds once where the two Scales rounded twice; x·0 is not 0 when x is
// infinite, so it stays.
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
// and whether v was rewritten in place.
func (s *simplifier) step(v *value) (*value, bool) {
	op := v.op
	if op == nil {
		return v, false
	}
	if c, ok := ops.IsScale(op); ok {
		return s.scale(v, c)
	}
	if perm, ok := ops.IsTranspose(op); ok {
		return s.transpose(v, perm)
	}
	x := v.args[0]
	switch {
	case ops.IsMul(op):
		y := v.args[1]
		if c, ok := s.constant(y); ok && x.typ.Equal(v.typ) {
			return rewrite(v, ops.ScaleOp(c), x)
		}
		if c, ok := s.constant(x); ok && y.typ.Equal(v.typ) {
			return rewrite(v, ops.ScaleOp(c), y)
		}
	case ops.IsAdd(op):
		if s.is(v.args[1], 0) {
			return same(v, x), false
		}
		if s.is(x, 0) {
			return same(v, v.args[1]), false
		}
	case ops.IsSub(op):
		if s.is(v.args[1], 0) {
			return same(v, x), false
		}
	case ops.IsDiv(op):
		if s.is(v.args[1], 1) {
			return same(v, x), false
		}
	case ops.IsNeg(op):
		if x.op != nil && ops.IsNeg(x.op) {
			return same(v, x.args[0]), false
		}
		if c, ok := ops.IsScale(x.op); ok { // -(x·c) is x·(-c) exactly
			return rewrite(v, ops.ScaleOp(-c), x.args[0])
		}
	case ops.IsReshape(op) && ops.IsReshape(x.op):
		return rewrite(v, op, x.args[0])
	case ops.IsIdentityLike(op):
		return same(v, x), false
	}
	return v, false
}

// scale simplifies v, x scaled by c.
func (s *simplifier) scale(v *value, c float64) (*value, bool) {
	x := v.args[0]
	if c == 1 {
		return same(v, x), false
	}
	if a, ok := ops.IsScale(x.op); ok && mergeable(a, c) {
		return rewrite(v, ops.ScaleOp(a*c), x.args[0])
	}
	if ops.IsNeg(x.op) {
		return rewrite(v, ops.ScaleOp(-c), x.args[0])
	}
	return v, false
}

// mergeable reports whether Scale(Scale(x, a), b) may become Scale(x, a·b):
// when a·b neither overflows nor underflows where a and b do not, so that
// the merged factor does not turn a finite x·a·b into ∞ or NaN (0·∞).
func mergeable(a, b float64) bool {
	ab := a * b
	if math.IsInf(ab, 0) && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
		return false
	}
	return ab != 0 || a == 0 || b == 0
}

// transpose simplifies v, x transposed by perm: the identity permutation
// is x, and a transpose of a transpose is one transpose.
func (s *simplifier) transpose(v *value, perm []int) (*value, bool) {
	x := v.args[0]
	if inner, ok := ops.IsTranspose(x.op); ok {
		// Output axis i is the inner output's axis perm[i], which is
		// x's axis inner[perm[i]].
		for i, p := range perm {
			perm[i] = inner[p]
		}
		return rewrite(v, ops.TransposeOp(perm), x.args[0])
	}
	for i, p := range perm {
		if p != i {
			return v, false
		}
	}
	return same(v, x), false
}

// same returns w to stand for v when it has v's type, else v.
func same(v, w *value) *value {
	if w.typ.Equal(v.typ) {
		return w
	}
	return v
}

// rewrite makes v apply op to args, in place.
func rewrite(v *value, op graph.Op, args ...*value) (*value, bool) {
	v.op, v.args = op, args
	return v, true
}

// is reports whether v is a constant whose every element is c.
func (s *simplifier) is(v *value, c float64) bool {
	u, ok := s.constant(v)
	return ok && u == c
}

// constant reports whether v is a constant whose elements are all equal,
// and to what.
func (s *simplifier) constant(v *value) (float64, bool) {
	if v.kind != graph.KindConst {
		return 0, false
	}
	u, ok := s.uniform[v]
	if !ok {
		u = uniformOf(v)
		s.uniform[v] = u
	}
	return u.c, u.ok
}

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

package compile

import (
	"math"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// simplify removes the algebraic no-ops that symbolic gradients are full
// of: x+(-0), (-0)+x, x-0, x/1, Scale(x, 1), -(-x), Identity and
// StopGradient, Reshape and BroadcastTo to x's own shape, and the
// identity Transpose. It turns x·c, for a constant c with all elements
// equal, into Scale(x, c) (x·1 into x), folds a negation into a Scale
// (-(x·c) and (-x)·c are x·(-c)), merges Scale(Scale(x, a), b) when a or b
// is ±1, and merges a Reshape of a Reshape and a Transpose of a Transpose.
//
// Every rewrite gives the same bits as the program it replaces, for every
// x, signed zeros, infinities and NaN included (a NaN may change payload).
// So a value is only replaced by one of exactly its type (a broadcasting
// x+0 is not x); x+0 stays, since -0+0 is +0, and so do x-(-0) and SumTo
// to x's own shape (which adds x to a zero); x·0 is not 0 when x is
// infinite or NaN; and Scale(Scale(x, a), b) stays unless a or b is ±1: x·a·b rounds twice and may overflow or underflow in
// between, where x·(a·b) rounds once (1e200·1e300·1e-300 is +Inf, not
// 1e200), even when a and b are powers of two.
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
	case ops.IsAdd(op): // x + (-0) is x; x + (+0) is +0 at x = -0
		if s.is(v.args[1], negZero) {
			return same(v, x), false
		}
		if s.is(x, negZero) {
			return same(v, v.args[1]), false
		}
	case ops.IsSub(op): // x - (+0) is x; x - (-0) is +0 at x = -0
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
	case ops.IsIdentityLike(op) && op.Name() != "SumTo":
		// SumTo to x's own shape adds x to a zero: -0 comes out +0.
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

// mergeable reports whether Scale(Scale(x, a), b) may become Scale(x, a·b)
// with the same bits for every x: when a or b is ±1, so that one of the
// two products is exact (a sign change) and a·b is exact too. Any other
// pair rounds or overflows differently for some x: with a = 2 and
// b = 0.5, x·2·0.5 is +Inf at the largest float and loses a bit at the
// smallest subnormal, where x·1 is x.
func mergeable(a, b float64) bool {
	return math.Abs(a) == 1 || math.Abs(b) == 1
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

// negZero is -0: x + (-0) is x for every x, x + 0 is not.
var negZero = math.Copysign(0, -1)

// is reports whether v is a constant whose every element is c, the sign
// of a zero included.
func (s *simplifier) is(v *value, c float64) bool {
	u, ok := s.constant(v)
	return ok && u == c && math.Signbit(u) == math.Signbit(c)
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

// uniformOf says whether v's elements all have the same bits: zeros of
// both signs are not uniform (x·[0, -0] is not a Scale).
func uniformOf(v *value) uniformity {
	n := v.typ.Size()
	if n == 0 {
		return uniformity{}
	}
	c := graph.Float(v.konst, 0)
	for i := 1; i < n; i++ {
		if math.Float64bits(graph.Float(v.konst, i)) != math.Float64bits(c) {
			return uniformity{}
		}
	}
	return uniformity{c: c, ok: true}
}

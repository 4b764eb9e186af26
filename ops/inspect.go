package ops

import "github.com/nabla-go/nabla/graph"

// The functions below let the compiler recognise built-in ops, whose types
// are unexported, to simplify the expressions they build (x·1, -(-x), …).

// IsAdd reports whether op is the op of Add.
func IsAdd(op graph.Op) bool { return op == graph.Op(binary{addKind}) }

// IsSub reports whether op is the op of Sub.
func IsSub(op graph.Op) bool { return op == graph.Op(binary{subKind}) }

// IsMul reports whether op is the op of Mul.
func IsMul(op graph.Op) bool { return op == graph.Op(binary{mulKind}) }

// IsDiv reports whether op is the op of Div.
func IsDiv(op graph.Op) bool { return op == graph.Op(binary{divKind}) }

// IsNeg reports whether op is the op of Neg.
func IsNeg(op graph.Op) bool { return op == graph.Op(unary{kind: negKind}) }

// IsScale reports whether op is the op of Scale, and its factor.
func IsScale(op graph.Op) (c float64, ok bool) {
	u, ok := op.(unary)
	if !ok || u.kind != scaleKind {
		return 0, false
	}
	return u.c, true
}

// ScaleOp returns the op that Scale(x, c) applies to x.
func ScaleOp(c float64) graph.Op { return unary{kind: scaleKind, c: c} }

// IsIdentityLike reports whether op returns its one input unchanged
// whenever its output has the input's type: Identity, StopGradient (once
// differentiation is done), and Reshape, BroadcastTo and SumTo to the
// input's own shape.
func IsIdentityLike(op graph.Op) bool {
	switch op.(type) {
	case identityOp, stopGradientOp, reshapeOp, broadcastToOp, sumToOp:
		return true
	}
	return false
}

// IsReshape reports whether op is the op of Reshape.
func IsReshape(op graph.Op) bool {
	_, ok := op.(reshapeOp)
	return ok
}

// IsTranspose reports whether op is the op of Transpose, and its
// permutation.
func IsTranspose(op graph.Op) (perm []int, ok bool) {
	t, ok := op.(transposeOp)
	if !ok || t.perm.rank > maxRank {
		return nil, false
	}
	return append([]int(nil), t.perm.dims[:t.perm.rank]...), true
}

// TransposeOp returns the op that Transpose(x, perm...) applies to x.
func TransposeOp(perm []int) graph.Op { return transposeOp{newShapeParam(perm)} }

// IsMatMul reports whether op is the op of MatMul or MatMulT, and its
// transpose flags.
func IsMatMul(op graph.Op) (MatMulOp, bool) {
	m, ok := op.(MatMulOp)
	return m, ok
}

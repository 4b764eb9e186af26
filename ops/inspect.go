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

package nn

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// HuberLoss is ½·d² where |d| < delta and delta·(|d| − ½·delta) elsewhere,
// d = input − target (WithDelta, 1 by default). It takes WithDelta and
// WithReduction.
func HuberLoss(input, target *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"input", "target"}
	l, bad := newLoss("HuberLoss", optReduction|optDelta, opts, names, input, target)
	if bad != nil {
		return bad
	}
	if bad := l.sameShape(names, input, target); bad != nil {
		return bad
	}
	return l.reduce(ops.Scale(l.quadraticThenLinear(ops.Sub(input, target), l.delta), l.delta))
}

// SmoothL1Loss is HuberLoss divided by its threshold: ½·d²/beta where
// |d| < beta and |d| − ½·beta elsewhere (WithBeta, 1 by default; beta 0
// gives |d|). It takes WithBeta and WithReduction.
func SmoothL1Loss(input, target *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"input", "target"}
	l, bad := newLoss("SmoothL1Loss", optReduction|optBeta, opts, names, input, target)
	if bad != nil {
		return bad
	}
	if bad := l.sameShape(names, input, target); bad != nil {
		return bad
	}
	d := ops.Sub(input, target)
	if l.beta == 0 {
		return l.reduce(ops.Abs(d))
	}
	return l.reduce(l.quadraticThenLinear(d, l.beta))
}

// quadraticThenLinear is ½·d²/t where |d| < t and |d| − ½·t elsewhere.
func (l loss) quadraticThenLinear(d *graph.Node, t float64) *graph.Node {
	a := ops.Abs(d)
	inside := ops.Less(a, l.constant(d, t))
	return ops.Where(inside, ops.Scale(ops.Square(d), 0.5/t), ops.Add(a, l.constant(d, -0.5*t)))
}

// MarginRankingLoss is max(0, −y·(x1 − x2) + margin) for labels y of ±1
// saying which of x1 and x2 should rank higher (WithMargin, 0 by
// default). The three have one shape. It takes WithMargin and
// WithReduction.
func MarginRankingLoss(x1, x2, y *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"x1", "x2", "y"}
	l, bad := newLoss("MarginRankingLoss", optReduction|optMargin, opts, names, x1, x2, y)
	if bad != nil {
		return bad
	}
	if bad := l.sameShape(names, x1, x2, y); bad != nil {
		return bad
	}
	return l.reduce(ops.ReLU(ops.Add(ops.Neg(ops.Mul(y, ops.Sub(x1, x2))), l.constant(x1, l.margin))))
}

// cosineEps is what PyTorch adds to each squared norm in
// CosineEmbeddingLoss, so that a zero vector gives a cosine of 0.
const cosineEps = 1e-12

// CosineEmbeddingLoss is, for rows x1 and x2 of (N, D) and labels y (N)
// of ±1, 1 − cos(x1, x2) where y is 1 and max(0, cos(x1, x2) − margin)
// where y is −1 (WithMargin, 0 by default), with
// cos = x1·x2 / √((|x1|² + 1e-12)·(|x2|² + 1e-12)) as PyTorch computes it.
// It takes WithMargin and WithReduction.
func CosineEmbeddingLoss(x1, x2, y *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"x1", "x2", "y"}
	l, bad := newLoss("CosineEmbeddingLoss", optReduction|optMargin, opts, names, x1, x2, y)
	if bad != nil {
		return bad
	}
	if bad := l.sameShape(names[:2], x1, x2); bad != nil {
		return bad
	}
	if s := x1.Shape(); len(s) != 2 || len(y.Shape()) != 1 || y.Shape()[0] != s[0] {
		return l.fail([]*graph.Node{x1}, "x1 and x2 have shape %s and y %s: want (N, D) and (N)",
			graph.ShapeString(s), graph.ShapeString(y.Shape()))
	}
	norm2 := func(x *graph.Node) *graph.Node { return ops.Add(ops.Sum(ops.Square(x), 1), l.constant(x, cosineEps)) }
	cos := ops.Div(ops.Sum(ops.Mul(x1, x2), 1), ops.Sqrt(ops.Mul(norm2(x1), norm2(x2))))
	zero := l.constant(cos, 0)
	pos := ops.Where(ops.Equal(y, l.constant(y, 1)), ops.Sub(l.constant(cos, 1), cos), zero)
	neg := ops.Where(ops.Equal(y, l.constant(y, -1)), ops.ReLU(ops.Sub(cos, l.constant(cos, l.margin))), zero)
	return l.reduce(ops.Add(pos, neg))
}

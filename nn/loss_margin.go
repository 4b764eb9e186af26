package nn

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

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

// HingeEmbeddingLoss is x where y is 1 and max(0, margin − x) where y is
// −1, for distances x and labels y of ±1 of one shape (WithMargin, 1 by
// default). It takes WithMargin and WithReduction.
func HingeEmbeddingLoss(x, y *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"x", "y"}
	l, bad := newLoss("HingeEmbeddingLoss", optReduction|optMargin, opts, names, x, y)
	if bad != nil {
		return bad
	}
	if bad := l.sameShape(names, x, y); bad != nil {
		return bad
	}
	zero := l.constant(x, 0)
	pos := ops.Where(ops.Equal(y, l.constant(y, -1)), zero, x)
	neg := ops.Where(ops.Equal(y, l.constant(y, 1)), zero, ops.ReLU(ops.Sub(l.constant(x, l.margin), x)))
	return l.reduce(ops.Add(pos, neg))
}

// SoftMarginLoss is log(1 + e^(−y·x)) for labels y of ±1, computed as
// softplus(−y·x). It takes WithReduction.
func SoftMarginLoss(x, y *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"x", "y"}
	l, bad := newLoss("SoftMarginLoss", optReduction, opts, names, x, y)
	if bad != nil {
		return bad
	}
	if bad := l.sameShape(names, x, y); bad != nil {
		return bad
	}
	return l.reduce(ops.Softplus(ops.Neg(ops.Mul(y, x))))
}

// TripletMarginLoss is max(0, d(a, p) − d(a, n) + margin) for rows of
// anchors a, positives p and negatives n of one shape (N, D), with
// d(u, v) = |u − v + eps|₂ and eps 1e-6, as PyTorch's pairwise distance
// (WithMargin, 1 by default). It takes WithMargin and WithReduction.
func TripletMarginLoss(anchor, positive, negative *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"anchor", "positive", "negative"}
	l, bad := newLoss("TripletMarginLoss", optReduction|optMargin, opts, names, anchor, positive, negative)
	if bad != nil {
		return bad
	}
	if bad := l.sameShape(names, anchor, positive, negative); bad != nil {
		return bad
	}
	if len(anchor.Shape()) != 2 {
		return l.fail([]*graph.Node{anchor}, "the anchors have shape %s: want (N, D)", graph.ShapeString(anchor.Shape()))
	}
	dist := func(u, v *graph.Node) *graph.Node {
		return ops.Sqrt(ops.Sum(ops.Square(ops.Add(ops.Sub(u, v), l.constant(u, pairwiseEps))), 1))
	}
	return l.reduce(ops.ReLU(ops.Add(ops.Sub(dist(anchor, positive), dist(anchor, negative)), l.constant(anchor, l.margin))))
}

// pairwiseEps is what PyTorch's pairwise distance adds to each difference.
const pairwiseEps = 1e-6

// MultiMarginLoss is, for scores x (N, C) and class labels y (N), the
// multi-class hinge Σ_{i≠y} max(0, margin − x[y] + x[i]) / C (WithMargin,
// 1 by default); x (C) and a scalar label is one example, whose loss is a
// scalar. These are the shapes PyTorch's multi_margin_loss takes (it
// refuses more dimensions); its p = 2 and class weights are not offered.
// It takes WithMargin and WithReduction.
func MultiMarginLoss(x, labels *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"scores", "labels"}
	l, bad := newLoss("MultiMarginLoss", optReduction|optMargin, opts, names, x, labels)
	if bad != nil {
		return bad
	}
	rows, y, shape, bad := l.classRows(x, labels, false)
	if bad != nil {
		return bad
	}
	C := rows.Shape()[1]
	hot := ops.OneHot(y, C, x.DType())
	target := ops.SumKeepDims(ops.Mul(hot, rows), 1)
	hinge := ops.ReLU(ops.Add(ops.Sub(rows, target), l.constant(x, l.margin)))
	// The label's own term, max(0, margin), is left out.
	per := ops.Scale(ops.Sum(ops.Mul(hinge, ops.Sub(l.constant(x, 1), hot)), 1), 1/float64(C))
	return l.reduce(ops.Reshape(per, shape...))
}

package nn

import (
	"math"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// The losses below are torch.nn.functional's, of the same names, settings
// and defaults, computed in the same numerically stable forms; each takes
// LossOptions, WithReduction among them (ReduceMean by default).

// BCELoss is the binary cross-entropy of targets y in [0, 1] against
// probabilities x of the same shape: −w·(y·log x + (1−y)·log(1−x)), each
// log clamped at −100 as PyTorch does so that a saturated probability
// gives a finite loss. It takes WithWeight and WithReduction.
func BCELoss(probs, targets *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"probs", "targets"}
	l, bad := newLoss("BCELoss", optReduction|optWeight, opts, names, probs, targets)
	if bad != nil {
		return bad
	}
	if bad := l.checkElementwise(names, probs, targets); bad != nil {
		return bad
	}
	floor := l.constant(probs, -100)
	pos := ops.Maximum(ops.Log(probs), floor)
	neg := ops.Maximum(ops.Log1p(ops.Neg(probs)), floor)
	per := ops.Sub(ops.Mul(ops.Sub(targets, l.constant(targets, 1)), neg), ops.Mul(targets, pos))
	return l.reduce(l.weighted(per))
}

// BCEWithLogitsLoss is BCELoss of sigmoid(x) from the logits x, in the
// stable form (1−y)·x + (1 + (p−1)·y)·softplus(−x), with p the positive
// weight (WithPosWeight, 1 by default): it neither overflows for large
// |x| nor loses the loss where the sigmoid saturates. It takes WithWeight,
// WithPosWeight and WithReduction.
func BCEWithLogitsLoss(logits, targets *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"logits", "targets"}
	l, bad := newLoss("BCEWithLogitsLoss", optReduction|optWeight|optPosWeight, opts, names, logits, targets)
	if bad != nil {
		return bad
	}
	if bad := l.checkElementwise(names, logits, targets); bad != nil {
		return bad
	}
	one := l.constant(logits, 1)
	sp := ops.Softplus(ops.Neg(logits))
	if l.posWeight != nil {
		sp = ops.Mul(ops.Add(ops.Mul(ops.Sub(l.posWeight, one), targets), one), sp)
	}
	per := ops.Add(ops.Mul(ops.Sub(one, targets), logits), sp)
	return l.reduce(l.weighted(per))
}

// checkElementwise checks that the inputs share a shape and that the
// weights broadcast to it.
func (l loss) checkElementwise(names []string, inputs ...*graph.Node) *graph.Node {
	if bad := l.sameShape(names, inputs...); bad != nil {
		return bad
	}
	if l.weight != nil {
		if bad := l.broadcasts("weight", l.weight, inputs[0]); bad != nil {
			return bad
		}
	}
	if l.posWeight != nil {
		return l.broadcasts("pos weight", l.posWeight, inputs[0])
	}
	return nil
}

// weighted scales per by the weight, if any.
func (l loss) weighted(per *graph.Node) *graph.Node {
	if l.weight == nil {
		return per
	}
	return ops.Mul(per, l.weight)
}

// NLLLoss is the negative log-likelihood of class labels (int32 or int64,
// or integers held as floats) under log-probabilities, in PyTorch's
// shapes: log-probabilities (N, C) and labels (N); (N, C, d1, …, dK) and
// labels (N, d1, …, dK), a label per position (an image's pixels, say);
// or one example, (C) and a scalar label. The loss at an example or
// position of label y is −w[y]·logp[y], w the class weights (WithWeight,
// of shape (C); 1 by default), and 0 where the label is the ignored one
// (WithIgnoreIndex, −100 by default). ReduceNone gives the losses in the
// labels' shape; ReduceSum adds them; ReduceMean divides their sum by the
// sum of w[y] over the positions not ignored, as PyTorch does (NaN when
// every label is ignored, as PyTorch's). It takes WithWeight,
// WithIgnoreIndex and WithReduction. Another label outside [0, C) fails
// the run.
func NLLLoss(logProbs, labels *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"log-probabilities", "labels"}
	l, bad := newLoss("NLLLoss", optReduction|optWeight|optIgnoreIndex, opts, names, logProbs, labels)
	if bad != nil {
		return bad
	}
	rows, y, shape, bad := l.classRows(logProbs, labels, true)
	if bad != nil {
		return bad
	}
	C := rows.Shape()[1]
	if l.weight != nil && (len(l.weight.Shape()) != 1 || l.weight.Shape()[0] != C) {
		return l.fail([]*graph.Node{logProbs}, "the weight has shape %s: want (%d), one per class",
			graph.ShapeString(l.weight.Shape()), C)
	}
	// Ignored labels become class 0 for the one-hot rows, which the mask
	// then zeroes.
	if y.DType() != logProbs.DType() {
		y = ops.Cast(y, logProbs.DType())
	}
	ignored := ops.Equal(y, l.constant(y, float64(l.ignoreIndex)))
	kept := ops.Sub(l.constant(y, 1), ignored)
	y = ops.Where(ignored, l.constant(y, 0), y)
	hot := ops.Mul(ops.OneHot(y, C, logProbs.DType()), ops.Reshape(kept, rows.Shape()[0], 1))
	if l.weight != nil {
		hot = ops.Mul(hot, l.weight)
	}
	per := ops.Neg(ops.Sum(ops.Mul(hot, rows), 1))
	if l.reduction == ReduceMean {
		return ops.Div(ops.Sum(per), ops.Sum(hot))
	}
	return l.reduce(ops.Reshape(per, shape...))
}

// classRows checks the shapes of a classification loss's scores x and
// labels, PyTorch's: (N, C) and (N), or (C) and a scalar, or, when spatial,
// (N, C, d1, …, dK) and (N, d1, …, dK). It returns the scores as rows
// (M, C), one per label, the labels as (M), and the labels' shape, that
// of the per-label losses. Scores with no class (C = 0) are refused: no
// label could name one.
func (l loss) classRows(x, labels *graph.Node, spatial bool) (rows, y *graph.Node, shape []int, bad *graph.Node) {
	s, ls := x.Shape(), labels.Shape()
	names := map[bool]string{false: "scores", true: "log-probabilities"}
	what := names[l.name == "NLLLoss"]
	if len(s) == 0 || len(s) > 2 && !spatial {
		want := "(C) or (N, C)"
		if spatial {
			want = "(C), (N, C) or (N, C, d1, …, dK)"
		}
		return nil, nil, nil, l.fail([]*graph.Node{x}, "the %s have shape %s: want %s", what, graph.ShapeString(s), want)
	}
	C := s[0]
	shape = []int{}
	if len(s) > 1 {
		C = s[1]
		shape = append([]int{s[0]}, s[2:]...)
	}
	if !slices.Equal(ls, shape) {
		return nil, nil, nil, l.fail([]*graph.Node{x}, "the labels have shape %s: want %s for %s %s",
			graph.ShapeString(ls), graph.ShapeString(shape), what, graph.ShapeString(s))
	}
	if C == 0 {
		return nil, nil, nil, l.fail([]*graph.Node{x}, "the %s have shape %s: no classes, so no label can name one (want C ≥ 1)",
			what, graph.ShapeString(s))
	}
	M := graph.ShapeSize(shape)
	rows = x
	if len(s) > 2 { // the class axis last
		perm := []int{0}
		for i := 2; i < len(s); i++ {
			perm = append(perm, i)
		}
		rows = ops.Transpose(x, append(perm, 1)...)
	}
	if len(s) != 2 {
		rows = ops.Reshape(rows, M, C)
	}
	y = labels
	if len(ls) != 1 {
		y = ops.Reshape(labels, M)
	}
	return rows, y, shape, nil
}

// GaussianNLLLoss is the negative log-likelihood of targets under normal
// distributions of means input and variances v: ½·(log v + (x−y)²/v),
// plus ½·log 2π WithFull. The variance is floored at eps (WithEps, 1e-6
// by default) as PyTorch does, whose gradient flows to v as if the floor
// were not there. v has the input's shape, or the input's with its last
// dimension 1 or dropped (one variance for each row). It takes WithFull,
// WithEps and WithReduction.
func GaussianNLLLoss(input, target, variance *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"input", "target", "variance"}
	l, bad := newLoss("GaussianNLLLoss", optReduction|optFull|optEps, opts, names, input, target, variance)
	if bad != nil {
		return bad
	}
	if bad := l.sameShape(names, input, target); bad != nil {
		return bad
	}
	v, vs, xs := variance, variance.Shape(), input.Shape()
	switch {
	case slices.Equal(vs, xs): // scalars too
	case len(xs) > 0 && len(vs) == len(xs)-1 && slices.Equal(vs, xs[:len(xs)-1]):
		v = ops.Reshape(v, append(append([]int(nil), vs...), 1)...)
	case len(xs) > 0 && len(vs) == len(xs) && slices.Equal(vs[:len(vs)-1], xs[:len(xs)-1]) && vs[len(vs)-1] == 1:
	default:
		return l.fail([]*graph.Node{input}, "the variance has shape %s: want the input's %s, or it with its last dimension 1 or dropped",
			graph.ShapeString(vs), graph.ShapeString(xs))
	}
	// v + stop(max(v, eps) − v): the floored value, the gradient of v.
	v = ops.Add(v, ops.StopGradient(ops.Sub(ops.Maximum(v, l.constant(v, l.eps)), v)))
	per := ops.Scale(ops.Add(ops.Log(v), ops.Div(ops.Square(ops.Sub(input, target)), v)), 0.5)
	if l.full {
		per = ops.Add(per, l.constant(per, 0.5*math.Log(2*math.Pi)))
	}
	return l.reduce(per)
}

// KLDivLoss is the pointwise Kullback–Leibler divergence of a target
// distribution from log-probabilities x: y·(log y − x), 0 where y is 0, or
// with log-probabilities y (WithLogTarget) e^y·(y − x). PyTorch's
// ReduceMean averages over every element; ReduceBatchMean, which gives
// the divergence per example, divides by the batch size. It takes
// WithLogTarget and WithReduction.
func KLDivLoss(logProbs, target *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"log-probabilities", "target"}
	l, bad := newLoss("KLDivLoss", optReduction|optLogTarget, opts, names, logProbs, target)
	if bad != nil {
		return bad
	}
	if bad := l.sameShape(names, logProbs, target); bad != nil {
		return bad
	}
	var per *graph.Node
	if l.logTarget {
		per = ops.Mul(ops.Exp(target), ops.Sub(target, logProbs))
	} else {
		zero := l.constant(target, 0)
		positive := ops.Greater(target, zero)
		logY := ops.Log(ops.Where(positive, target, l.constant(target, 1))) // log 1 = 0 where y is 0
		per = ops.Mul(target, ops.Sub(logY, logProbs))
	}
	return l.reduce(per)
}

// PoissonNLLLoss is the negative log-likelihood of counts y under Poisson
// distributions of rates e^x from log-rates x: e^x − y·x; or, given rates
// (WithLogInput(false)), x − y·log(x + eps) (WithEps, 1e-8 by default).
// WithFull adds Stirling's approximation of log y!,
// y·log y − y + ½·log(2πy), where y > 1. It takes WithLogInput, WithFull,
// WithEps and WithReduction.
func PoissonNLLLoss(input, target *graph.Node, opts ...LossOption) *graph.Node {
	names := []string{"input", "target"}
	l, bad := newLoss("PoissonNLLLoss", optReduction|optLogInput|optFull|optEps, opts, names, input, target)
	if bad != nil {
		return bad
	}
	if bad := l.sameShape(names, input, target); bad != nil {
		return bad
	}
	var per *graph.Node
	if l.logInput {
		per = ops.Sub(ops.Exp(input), ops.Mul(target, input))
	} else {
		per = ops.Sub(input, ops.Mul(target, ops.Log(ops.Add(input, l.constant(input, l.eps)))))
	}
	if l.full {
		one := l.constant(target, 1)
		above := ops.Greater(target, one)
		y := ops.Where(above, target, one) // log 1 = 0 keeps the masked terms finite
		logY := ops.Log(y)
		stirling := ops.Add(ops.Sub(ops.Mul(y, logY), y), ops.Scale(ops.Add(logY, l.constant(y, math.Log(2*math.Pi))), 0.5))
		per = ops.Add(per, ops.Mul(above, stirling))
	}
	return l.reduce(per)
}

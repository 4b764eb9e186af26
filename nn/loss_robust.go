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

package nn

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Reduction says how a loss combines its per-element values, as PyTorch's
// reduction argument does.
type Reduction int

const (
	// ReduceMean averages the per-element losses (PyTorch's default, and
	// the zero value); NLLLoss with class weights divides by the weights'
	// sum instead, as PyTorch does.
	ReduceMean Reduction = iota
	// ReduceSum adds the per-element losses.
	ReduceSum
	// ReduceNone returns the per-element losses.
	ReduceNone
	// ReduceBatchMean adds the per-element losses and divides by the
	// batch size (the first dimension): KL divergence per example, for
	// KLDivLoss only.
	ReduceBatchMean
)

// String is PyTorch's name of the reduction.
func (r Reduction) String() string {
	switch r {
	case ReduceMean:
		return "mean"
	case ReduceSum:
		return "sum"
	case ReduceNone:
		return "none"
	case ReduceBatchMean:
		return "batchmean"
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

// LossOption sets one of a loss's settings; a loss given an option it does
// not take fails with an error naming both.
type LossOption func(*lossConfig)

// lossOpt names the settings, one bit each, for checking which a loss
// takes.
type lossOpt uint16

const (
	optReduction lossOpt = 1 << iota
	optWeight
	optPosWeight
	optLogTarget
	optFull
	optLogInput
	optEps
	optDelta
	optBeta
	optMargin
	optIgnoreIndex
)

var lossOptNames = []string{"WithReduction", "WithWeight", "WithPosWeight", "WithLogTarget", "WithFull",
	"WithLogInput", "WithEps", "WithDelta", "WithBeta", "WithMargin", "WithIgnoreIndex"}

// String lists the options of the set.
func (s lossOpt) String() string {
	var names []string
	for s != 0 {
		i := bits.TrailingZeros16(uint16(s))
		names = append(names, lossOptNames[i])
		s &^= 1 << i
	}
	return strings.Join(names, ", ")
}

// lossConfig is a loss's settings with PyTorch's defaults, and the set of
// options given.
type lossConfig struct {
	reduction         Reduction
	weight, posWeight *graph.Node
	logTarget, full   bool
	logInput          bool
	eps, delta, beta  float64
	margin            float64
	ignoreIndex       int
	given             lossOpt
}

// WithReduction sets the reduction (ReduceMean by default).
func WithReduction(r Reduction) LossOption {
	return func(c *lossConfig) { c.reduction, c.given = r, c.given|optReduction }
}

// WithWeight scales each element's loss by w, which broadcasts against the
// input (BCELoss, BCEWithLogitsLoss), or each class's by w[class], of shape
// (C) (NLLLoss).
func WithWeight(w *graph.Node) LossOption {
	return func(c *lossConfig) { c.weight, c.given = w, c.given|optWeight }
}

// WithPosWeight scales the positive term of BCEWithLogitsLoss by w, which
// broadcasts against the input (one weight per class on the last axis).
func WithPosWeight(w *graph.Node) LossOption {
	return func(c *lossConfig) { c.posWeight, c.given = w, c.given|optPosWeight }
}

// WithLogTarget says that KLDivLoss's target holds log-probabilities.
func WithLogTarget() LossOption {
	return func(c *lossConfig) { c.logTarget, c.given = true, c.given|optLogTarget }
}

// WithFull adds the constant terms GaussianNLLLoss and PoissonNLLLoss
// leave out by default (½·log 2π; Stirling's approximation of log y!).
func WithFull() LossOption {
	return func(c *lossConfig) { c.full, c.given = true, c.given|optFull }
}

// WithLogInput says whether PoissonNLLLoss's input is the log of the rate
// (true, the default) or the rate itself.
func WithLogInput(log bool) LossOption {
	return func(c *lossConfig) { c.logInput, c.given = log, c.given|optLogInput }
}

// WithEps sets the floor of GaussianNLLLoss's variance (1e-6 by default)
// or the offset of PoissonNLLLoss's log(rate + eps) (1e-8 by default).
func WithEps(eps float64) LossOption {
	return func(c *lossConfig) { c.eps, c.given = eps, c.given|optEps }
}

// WithDelta sets HuberLoss's threshold between its quadratic and linear
// parts (1 by default).
func WithDelta(delta float64) LossOption {
	return func(c *lossConfig) { c.delta, c.given = delta, c.given|optDelta }
}

// WithBeta sets SmoothL1Loss's threshold between its quadratic and linear
// parts (1 by default; 0 gives the L1 loss).
func WithBeta(beta float64) LossOption {
	return func(c *lossConfig) { c.beta, c.given = beta, c.given|optBeta }
}

// WithMargin sets the margin of MarginRankingLoss and
// CosineEmbeddingLoss (0 by default), HingeEmbeddingLoss,
// TripletMarginLoss and MultiMarginLoss (1 by default).
func WithMargin(m float64) LossOption {
	return func(c *lossConfig) { c.margin, c.given = m, c.given|optMargin }
}

// WithIgnoreIndex sets the label whose examples NLLLoss leaves out, of
// the loss and of the mean's divisor (−100 by default, as PyTorch's).
func WithIgnoreIndex(label int) LossOption {
	return func(c *lossConfig) { c.ignoreIndex, c.given = label, c.given|optIgnoreIndex }
}

// loss is one call of a loss: its name, settings and inputs' graph and
// dtype.
type loss struct {
	name string
	lossConfig
	g *graph.Graph
}

// newLoss applies opts over the defaults and checks them and the inputs,
// named by names: present, of one graph and one float dtype, the options
// among those the loss takes. It returns the poisoned node of the first
// mistake.
func newLoss(name string, takes lossOpt, opts []LossOption, names []string, inputs ...*graph.Node) (loss, *graph.Node) {
	l := loss{name: name, lossConfig: lossConfig{logInput: true, delta: 1, beta: 1, ignoreIndex: -100}}
	switch name {
	case "GaussianNLLLoss":
		l.eps = 1e-6
	case "PoissonNLLLoss":
		l.eps = 1e-8
	case "HingeEmbeddingLoss", "TripletMarginLoss", "MultiMarginLoss":
		l.margin = 1
	}
	for _, o := range opts {
		if o != nil {
			o(&l.lossConfig)
		}
	}
	for i, n := range inputs {
		if n == nil {
			return l, l.fail(inputs, "%s is nil", names[i])
		}
		if p := graph.Poisoned(n); p != nil {
			return l, p
		}
	}
	for _, n := range []*graph.Node{l.weight, l.posWeight} {
		if n != nil && graph.Poisoned(n) != nil {
			return l, graph.Poisoned(n)
		}
	}
	l.g = inputs[0].Graph()
	dtype := inputs[0].DType()
	if !graph.IsFloat(dtype) {
		return l, l.fail(inputs, "%s is %v: want float32 or float64", names[0], inputs[0].Type())
	}
	extra := []*graph.Node{l.weight, l.posWeight}
	for i, n := range append(inputs[1:], extra...) {
		what := "weight"
		if i < len(inputs)-1 {
			what = names[i+1]
		} else if i == len(inputs) {
			what = "pos weight"
		}
		switch {
		case n == nil:
		case n.Graph() != l.g:
			return l, l.fail(inputs, "%s and %s belong to different graphs", names[0], what)
		case n.DType() != dtype && !(i == 0 && (name == "NLLLoss" || name == "MultiMarginLoss")): // labels may be integers
			return l, l.fail(inputs, "%s is %v but %s is %v: the dtypes differ", what, n.Type(), names[0], inputs[0].Type())
		}
	}
	switch {
	case l.given&^takes != 0:
		return l, l.fail(inputs, "%v does not apply (it takes %v)", l.given&^takes, takes)
	case l.reduction < ReduceMean || l.reduction > ReduceBatchMean:
		return l, l.fail(inputs, "unknown reduction %v", l.reduction)
	case l.reduction == ReduceBatchMean && name != "KLDivLoss":
		return l, l.fail(inputs, "reduction batchmean is KLDivLoss's alone")
	case l.given&optWeight != 0 && l.weight == nil:
		return l, l.fail(inputs, "the weight is nil")
	case l.given&optPosWeight != 0 && l.posWeight == nil:
		return l, l.fail(inputs, "the pos weight is nil")
	case l.given&optEps != 0 && !(l.eps > 0):
		return l, l.fail(inputs, "eps %v is not positive", l.eps)
	case !(l.delta > 0):
		return l, l.fail(inputs, "delta %v is not positive", l.delta)
	case !(l.beta >= 0):
		return l, l.fail(inputs, "beta %v is negative", l.beta)
	}
	return l, nil
}

// fail records an error of the loss on the inputs' graph.
func (l loss) fail(inputs []*graph.Node, format string, args ...any) *graph.Node {
	g := l.g
	for _, n := range inputs {
		if g == nil && n != nil {
			g = n.Graph()
		}
	}
	return g.Fail(&graph.Error{Op: "nn." + l.name, Err: fmt.Errorf(format, args...), Site: graph.CallerSite()})
}

// sameShape checks that b has a's shape, as PyTorch's elementwise losses
// require of their input and target.
func (l loss) sameShape(names []string, inputs ...*graph.Node) *graph.Node {
	for i, n := range inputs[1:] {
		if !slices.Equal(n.Shape(), inputs[0].Shape()) {
			return l.fail(inputs, "%s has shape %s but %s has %s: they must be equal", names[i+1],
				graph.ShapeString(n.Shape()), names[0], graph.ShapeString(inputs[0].Shape()))
		}
	}
	return nil
}

// broadcasts checks that w broadcasts to x's shape.
func (l loss) broadcasts(what string, w, x *graph.Node) *graph.Node {
	ws, xs := w.Shape(), x.Shape()
	ok := len(ws) <= len(xs)
	for i := 1; ok && i <= len(ws); i++ {
		ok = ws[len(ws)-i] == 1 || ws[len(ws)-i] == xs[len(xs)-i]
	}
	if !ok {
		return l.fail([]*graph.Node{x}, "the %s's shape %s does not broadcast to the input's %s", what,
			graph.ShapeString(ws), graph.ShapeString(xs))
	}
	return nil
}

// reduce combines the per-element losses. Their mean over an empty
// batch is undefined: the loss's error, not Mean's.
func (l loss) reduce(per *graph.Node) *graph.Node {
	switch l.reduction {
	case ReduceMean:
		if graph.Poisoned(per) == nil && per.Type().Size() == 0 {
			return l.fail([]*graph.Node{per}, "the mean of no losses is undefined (an empty batch: losses %v): "+
				"WithReduction(ReduceSum) or ReduceNone takes it", per.Type())
		}
	case ReduceSum:
		return ops.Sum(per)
	case ReduceNone:
		return per
	case ReduceBatchMean:
		if s := per.Shape(); len(s) > 0 && s[0] > 0 {
			return ops.Scale(ops.Sum(per), 1/float64(s[0]))
		}
		return ops.Sum(per)
	}
	return ops.Mean(per)
}

// constant is a scalar of the inputs' dtype.
func (l loss) constant(x *graph.Node, c float64) *graph.Node { return l.g.Scalar(c, x.DType()) }

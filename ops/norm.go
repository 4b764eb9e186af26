package ops

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Per-channel ops, the pieces of batch normalisation. Their tensors have
// the channels on axis 1, (N, C, ...): each channel's values are the
// elements of its N planes (one per sample) over the trailing axes.
// Reductions give one value per channel, (C); the affine map scales and
// shifts each channel by (C) vectors. Each kernel visits every plane in
// a couple of passes, where the same computation built from broadcasting
// elementwise ops and reductions over axes (0, 2, 3, ...) takes a pass per
// op.
//
// The family is closed under differentiation: the gradient of a sum or
// mean is the output gradient broadcast; of a dot product or covariance,
// an affine map of the other operand; of an affine map, an affine map of
// the output gradient and dot products with it; of BatchNorm, an affine
// map of the output gradient and x with coefficients from the family's
// reductions. So every member differentiates to any order.

type channelKind uint8

const (
	channelSumKind    channelKind = iota // Σ x
	channelMeanKind                      // Σ x / n
	channelDotKind                       // Σ u·v, or Σ u·(v - m) (centred)
	channelCovKind                       // Σ (u-ū)(v-v̄) / n
	channelAffineKind                    // Σᵢ uᵢ·aᵢ + b
	batchNormKind                        // (x - m)/√(v + eps)·w + b
)

var channelNames = [...]string{
	channelSumKind:    "ChannelSum",
	channelMeanKind:   "ChannelMean",
	channelDotKind:    "ChannelDot",
	channelCovKind:    "ChannelCov",
	channelAffineKind: "ChannelAffine",
	batchNormKind:     "BatchNorm",
}

// channelOp is every member of the family. terms is the affine map's
// number of (u, a) pairs (1 or 2), bias whether a shift b follows them,
// unit whether the first term's scale is 1 (and not an input: x + b);
// centred whether a dot product subtracts a (C) input m from v; eps is
// BatchNorm's.
type channelOp struct {
	kind    channelKind
	terms   int
	bias    bool
	unit    bool
	centred bool
	eps     float64
}

// ChannelSum returns the sum of each channel of x (N, C, ...), of shape
// (C): over every axis but 1.
func ChannelSum(x *graph.Node) *graph.Node { return graph.Apply(channelOp{kind: channelSumKind}, x) }

// ChannelMean returns the mean of each channel of x (N, C, ...), of
// shape (C): MeanKeepDims over every axis but 1, without the kept axes.
// The count is read from x's shape when the op runs, so a graph replayed
// for another batch size stays right.
func ChannelMean(x *graph.Node) *graph.Node {
	return graph.Apply(channelOp{kind: channelMeanKind}, x)
}

// ChannelVar returns the biased variance of each channel of x
// (N, C, ...), of shape (C): the mean of the squared deviations from the
// channel's mean, computed from them (two passes), as PyTorch's
// batch_norm normalises with.
func ChannelVar(x *graph.Node) *graph.Node {
	if p := checkAs("ChannelVar", channelOp{kind: channelCovKind}, x, x); p != nil {
		return p
	}
	return channelCov(x, x)
}

// channelDot is Σ u·v per channel; u and v have one shape.
func channelDot(u, v *graph.Node) *graph.Node {
	return graph.Apply(channelOp{kind: channelDotKind}, u, v)
}

// centredDot is Σ u·(v - m) per channel, m (C): with m v's mean, the
// covariance of u and v times the count, without the cancellation of
// Σ u·v - m·Σ u.
func centredDot(u, v, m *graph.Node) *graph.Node {
	return graph.Apply(channelOp{kind: channelDotKind, centred: true}, u, v, m)
}

// channelCov is the biased covariance of u and v per channel.
func channelCov(u, v *graph.Node) *graph.Node {
	return graph.Apply(channelOp{kind: channelCovKind}, u, v)
}

// ChannelAffine returns x·scale + shift with scale and shift (C) applied
// to each channel of x (N, C, ...): a BatchNorm in evaluation mode, or a
// convolution's bias, say. A nil scale scales by 1 (x + shift, as Add of
// the shift reshaped to (C, 1, ...) computes it); a nil shift adds
// nothing.
func ChannelAffine(x, scale, shift *graph.Node) *graph.Node {
	if scale == nil {
		if shift == nil { // x itself, once it is known to be (N, C, ...)
			if p := poisoned("ChannelAffine", x); p != nil {
				return p
			}
			if x.Type().Rank() < 2 {
				return failBuilder("ChannelAffine", fmt.Errorf("want (N, C, ...) with the channels on axis 1, got %s", graph.ShapeString(x.Shape())), x)
			}
			return x
		}
		return graph.Apply(channelOp{kind: channelAffineKind, terms: 1, bias: true, unit: true}, x, shift)
	}
	return channelAffine([]*graph.Node{x}, []*graph.Node{scale}, shift)
}

// channelAffine is Σᵢ us[i]·as[i] (+ b) per channel, for one or two
// terms.
func channelAffine(us, as []*graph.Node, b *graph.Node) *graph.Node {
	in := slices.Concat(us, as)
	if b != nil {
		in = append(in, b)
	}
	return graph.Apply(channelOp{kind: channelAffineKind, terms: len(us), bias: b != nil}, in...)
}

// BatchNorm normalises each channel of x (N, C, ...) by its batch
// statistics and scales and shifts it per channel, as PyTorch's
// batch_norm in training mode: (x - mean)/√(var + eps)·weight + bias, var
// biased, weight and bias (C). The statistics are ChannelMean(x) and
// ChannelVar(x), nodes that the compiler shares with the same ones built
// elsewhere (for running averages, say), so that x is read for them
// once. The op takes them as inputs, and its gradient with respect to x
// is the whole of it, through them too (see batchNormBackward).
func BatchNorm(x, weight, bias *graph.Node, eps float64) *graph.Node {
	if p := poisoned("BatchNorm", x, weight, bias); p != nil {
		return p
	}
	op := channelOp{kind: batchNormKind, eps: eps}
	var err error
	switch {
	case x.Type().Rank() < 2:
		err = fmt.Errorf("want (N, C, ...) with the channels on axis 1, got %s", graph.ShapeString(x.Shape()))
	case !(eps >= 0):
		err = fmt.Errorf("eps %v must be at least 0", eps)
	default: // the op's own checks, before the statistics' ops refuse x in their names
		c := x.Type().WithShape(x.Shape()[1])
		_, err = op.Type([]graph.Type{x.Type(), c, c, weight.Type(), bias.Type()})
	}
	if err != nil {
		return failBuilder("BatchNorm", err, x, weight, bias)
	}
	return graph.Apply(op, x, ChannelMean(x), ChannelVar(x), weight, bias)
}

// Name is the member's name.
func (op channelOp) Name() string { return channelNames[op.kind] }

// arity is the number of inputs and lead the number of them that have
// x's shape (the others are (C)).
func (op channelOp) arity() (arity, lead int) {
	switch op.kind {
	case channelSumKind, channelMeanKind:
		return 1, 1
	case channelDotKind, channelCovKind:
		if op.centred {
			return 3, 2
		}
		return 2, 2
	case channelAffineKind:
		arity = 2 * op.terms
		if op.bias {
			arity++
		}
		if op.unit {
			arity--
		}
		return arity, op.terms
	}
	return 5, 1
}

// reduces reports whether the output is (C).
func (op channelOp) reduces() bool { return op.kind <= channelCovKind }

// Type is (C) for the reductions and x's type for the others.
func (op channelOp) Type(in []graph.Type) (graph.Type, error) {
	arity, lead := op.arity()
	if op.kind == channelAffineKind && (op.terms < 1 || op.terms > 2 || op.unit && (op.terms != 1 || !op.bias)) {
		return graph.Type{}, fmt.Errorf("takes 1 or 2 terms, got %d (unit scale %v, shift %v)", op.terms, op.unit, op.bias)
	}
	dtype, err := graph.CheckInputs(in, arity)
	if err != nil {
		return graph.Type{}, err
	}
	x := in[0].Shape
	if len(x) < 2 {
		return graph.Type{}, fmt.Errorf("want (N, C, ...) with the channels on axis 1, got %s", graph.ShapeString(x))
	}
	for i, t := range in {
		want := x
		if i >= lead {
			want = x[1:2]
		}
		if !slices.Equal(t.Shape, want) {
			return graph.Type{}, fmt.Errorf("input %d is %s, want %s", i, graph.ShapeString(t.Shape), graph.ShapeString(want))
		}
	}
	if op.kind != channelSumKind && op.kind != channelDotKind && op.kind != channelAffineKind && channelCount(x) == 0 {
		return graph.Type{}, fmt.Errorf("%s has no values per channel", graph.ShapeString(x))
	}
	if op.reduces() {
		return graph.TypeOf(dtype, x[1]), nil
	}
	return in[0], nil
}

// channelCount is the number of values of each channel of shape: the
// product of its sizes but axis 1's.
func channelCount(shape []int) int {
	n := 1
	for a, d := range shape {
		if a != 1 {
			n *= d
		}
	}
	return n
}

// Cost counts a flop or two per element and term.
func (op channelOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	n := int64(graph.ShapeSize(in[0].Shape))
	switch op.kind {
	case channelSumKind, channelMeanKind:
		c.Flops = n
	case channelDotKind:
		c.Flops = 2 * n
		if op.centred {
			c.Flops = 3 * n
		}
	case channelCovKind:
		c.Flops = 5 * n
	case channelAffineKind:
		c.Flops = 2 * n * int64(op.terms)
	case batchNormKind:
		c.Flops = 6 * n
	}
	return c
}

// Forward computes on the calling goroutine; see ForwardExec.
func (op channelOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec spreads the channels over e's threads; a channel is
// computed the same way whatever their number.
func (op channelOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	return forFloat(out.Dtype(),
		func() error { runChannels(e, op, out, in, floats[float32]); return nil },
		func() error { runChannels(e, op, out, in, floats[float64]); return nil })
}

// Backward builds each input's gradient from the family (see the top of
// the file).
func (op channelOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	in := ctx.Inputs()
	grads := make([]*graph.Node, len(in))
	x := in[0]
	n := float64(channelCount(x.Shape()))
	switch op.kind {
	case channelSumKind:
		grads[0] = spreadChannels(g, x)
	case channelMeanKind:
		grads[0] = spreadChannels(Scale(g, 1/n), x)
	case channelDotKind, channelCovKind:
		if op.centred { // Σ u·(v - m)
			if ctx.NeedsGrad(0) {
				grads[0] = ChannelAffine(in[1], g, Neg(Mul(g, in[2])))
			}
			if ctx.NeedsGrad(1) {
				grads[1] = ChannelAffine(in[0], g, nil)
			}
			if ctx.NeedsGrad(2) {
				grads[2] = Neg(Mul(g, ChannelSum(in[0])))
			}
			break
		}
		for i, other := range []*graph.Node{in[1], in[0]} {
			if !ctx.NeedsGrad(i) {
				continue
			}
			if op.kind == channelDotKind {
				grads[i] = ChannelAffine(other, g, nil)
				continue
			}
			s := Scale(g, 1/n) // (v - v̄)·g/n
			grads[i] = ChannelAffine(other, s, Neg(Mul(s, ChannelMean(other))))
		}
	case channelAffineKind:
		if op.unit { // x + b
			grads[0] = g
			if ctx.NeedsGrad(1) {
				grads[1] = ChannelSum(g)
			}
			break
		}
		for t := range op.terms {
			if ctx.NeedsGrad(t) {
				grads[t] = ChannelAffine(g, in[op.terms+t], nil)
			}
			if ctx.NeedsGrad(op.terms + t) {
				grads[op.terms+t] = channelDot(g, in[t])
			}
		}
		if op.bias && ctx.NeedsGrad(2*op.terms) {
			grads[2*op.terms] = ChannelSum(g)
		}
	case batchNormKind:
		op.batchNormBackward(ctx, g, grads)
	}
	return grads
}

// Batch merges the batch into the channels: each example's channels
// become channels of their own, (N, B·C, ...) from the examples'
// (N, C, ...) and (B·C) from their (C), so that one application reduces
// or maps every example's channel over the same planes in the same order.
// Shared inputs are broadcast to the batch first; a batched value must
// have the channels' axis, which integer inputs never do here.
func (op channelOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	_, lead := op.arity()
	ins := make([]*graph.Node, len(c.Inputs()))
	for i := range ins {
		x := batchedInput(c, i)
		if i >= lead { // (B, C) → (B·C)
			ins[i] = Reshape(x, x.Shape()[0]*x.Shape()[1])
			continue
		}
		ins[i] = mergeChannels(x)
	}
	y := graph.Apply(op, ins...)
	if op.reduces() {
		return Reshape(y, c.Shape(c.Example().Shape())...)
	}
	return splitChannels(y, c.Size())
}

// batchNormBackward gives the gradients with respect to x, the weight and
// the bias; none with respect to the statistics, whose share is x's.
// With r = 1/√(var + eps), x̂ = (x - mean)·r and d = Σ g·(x - mean),
// they are r·d for the weight, Σ g for the bias, and
// w·r·(g - ḡ - x̂·r·d/n) for x: an affine map of g and x.
func (op channelOp) batchNormBackward(ctx *graph.GradContext, g *graph.Node, grads []*graph.Node) {
	x, mean, variance, w := ctx.Input(0), ctx.Input(1), ctx.Input(2), ctx.Input(3)
	if !isStatistic(mean, channelMeanKind, x) || !isStatistic(variance, channelCovKind, x) {
		ctx.Errorf("BatchNorm's statistics must be ChannelMean(x) and ChannelVar(x), as ops.BatchNorm builds them")
		return
	}
	n := float64(channelCount(x.Shape()))
	var sum *graph.Node
	if ctx.NeedsGrad(0) || ctx.NeedsGrad(4) {
		sum = ChannelSum(g)
	}
	if ctx.NeedsGrad(4) {
		grads[4] = sum
	}
	if !ctx.NeedsGrad(0) && !ctx.NeedsGrad(3) {
		return
	}
	r := Div(x.Graph().Scalar(1, x.DType()), Sqrt(Add(variance, x.Graph().Scalar(op.eps, x.DType()))))
	d := centredDot(g, x, mean)
	if ctx.NeedsGrad(3) {
		grads[3] = Mul(r, d)
	}
	if ctx.NeedsGrad(0) {
		a := Mul(w, r)                                       // g's coefficient
		b := Neg(Mul(Mul(a, Square(r)), Scale(d, 1/n)))      // x's: -w·r³·d/n
		c := Neg(Add(Mul(a, Scale(sum, 1/n)), Mul(b, mean))) // -w·r·ḡ - mean·b
		grads[0] = channelAffine([]*graph.Node{g, x}, []*graph.Node{a, b}, c)
	}
}

// isStatistic reports whether node s is the member kind of the family
// applied to x alone (ChannelMean(x), or ChannelVar(x) for the
// covariance).
func isStatistic(s *graph.Node, kind channelKind, x *graph.Node) bool {
	op, ok := s.Op().(channelOp)
	if !ok || op.kind != kind || op.centred {
		return false
	}
	for _, in := range s.Inputs() {
		if in != x {
			return false
		}
	}
	return true
}

// spreadChannels broadcasts v (C) over the shape of x (N, C, ...).
func spreadChannels(v, x *graph.Node) *graph.Node {
	shape := x.Shape()
	perChannel := make([]int, len(shape))
	for i := range perChannel {
		perChannel[i] = 1
	}
	perChannel[1] = shape[1]
	return BroadcastTo(Reshape(v, perChannel...), shape...)
}

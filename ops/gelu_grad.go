package ops

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
	"github.com/nabla-go/nabla/internal/kernel/vmath"
)

// geluDerivOp is the derivative of the exact GELU, Φ(x) + x·φ(x), Φ and φ
// the standard normal distribution and density. GELU's Backward builds
// it: one pass over its input, where the ops it stands for (geluDerivOf)
// fused into one kernel would step through it eleven times. float32 runs
// vmath.GELUDeriv32 (float32 lanes; its bound against the float64 value
// is vmath's); float64 runs the ops' operations in their order and
// rounding, a block at a time, so gives their bits. Its own derivative,
// φ(x)·(2 − x²), is built from ops; a machine without a kernel for it
// runs geluDerivOf (Decompose).
type geluDerivOp struct{}

// geluDeriv returns Φ(x) + x·φ(x) elementwise.
func geluDeriv(x *graph.Node) *graph.Node { return graph.Apply(geluDerivOp{}, x) }

// geluDerivOf is geluDeriv spelled in other ops.
func geluDerivOf(x *graph.Node) *graph.Node {
	cdf := Add(Scale(Erf(Scale(x, sqrtHalf)), 0.5), scalarLike(x, 0.5))
	pdf := Scale(Exp(Scale(Square(x), -0.5)), invSqrt2Pi)
	return Add(cdf, Mul(x, pdf))
}

func (geluDerivOp) Name() string { return "GELUDeriv" }

func (geluDerivOp) Type(in []graph.Type) (graph.Type, error) {
	dtype, err := graph.CheckInputs(in, 1)
	if err != nil {
		return graph.Type{}, err
	}
	return graph.TypeOf(dtype, in[0].Shape...), nil
}

// Cost is eleven flops an element, the ops it stands for (an erf and an
// exponential counted as one each).
func (geluDerivOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	c.Flops = 11 * int64(out.Size())
	return c
}

func (geluDerivOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return forFloat(out.Dtype(),
		func() error { vmath.GELUDeriv32(floats[float32](out), floats[float32](in[0])); return nil },
		func() error { geluDerivLoop(floats[float64](out), floats[float64](in[0])); return nil })
}

// InPlace lets the output overwrite the input: each element (float32) or
// block (float64) is read before it is written.
func (geluDerivOp) InPlace() int { return 0 }

// geluDerivLoop sets o[i] = Φ(x[i]) + x[i]·φ(x[i]) as geluDerivOf's ops
// compute it: Scale, Erf, Scale, Add of 0.5 for Φ; Square, Scale, Exp,
// Scale for φ; then the product by x and the sum, each the kernel the op
// runs (vek's loops, vmath's Erf and Exp). o may be x.
func geluDerivLoop[T float](o, x []T) {
	var cdf, pdf [softmaxBlock]T
	for start := 0; start < len(o); start += softmaxBlock {
		n := min(softmaxBlock, len(o)-start)
		xs, c, p := x[start:start+n], cdf[:n], pdf[:n]
		vek.Scale(c, xs, T(sqrtHalf))
		vmathLoop(erfKind, c, c)
		vek.Scale(c, c, T(0.5))
		vek.VS(vek.Add, c, c, T(0.5))
		vek.Unary(vek.Square, p, xs)
		vek.Scale(p, p, T(-0.5))
		vmathLoop(expKind, p, p)
		vek.Scale(p, p, T(invSqrt2Pi))
		vek.VV(vek.Mul, p, xs, p)
		vek.VV(vek.Add, o[start:start+n], c, p)
	}
}

// Backward: the derivative of Φ + x·φ is 2φ + x·φ' = φ·(2 − x²).
func (geluDerivOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	if !ctx.NeedsGrad(0) {
		return []*graph.Node{nil}
	}
	return []*graph.Node{Mul(g, geluDeriv2(ctx.Input(0)))}
}

// geluDeriv2 is GELU's second derivative, φ(x)·(2 − x²).
func geluDeriv2(x *graph.Node) *graph.Node {
	pdf := Scale(Exp(Scale(Square(x), -0.5)), invSqrt2Pi)
	return Mul(pdf, Sub(scalarLike(x, 2), Square(x)))
}

// JVP multiplies the tangent by the derivative.
func (geluDerivOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil {
		return nil
	}
	return Mul(t, geluDeriv2(c.Input(0)))
}

// Batch applies the op to the batch: it is elementwise.
func (geluDerivOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	return geluDeriv(c.Input(0))
}

// Decompose is the ops geluDeriv stands for (graph.Decomposer).
func (geluDerivOp) Decompose(in []*graph.Node) ([]*graph.Node, error) {
	return []*graph.Node{geluDerivOf(in[0])}, nil
}

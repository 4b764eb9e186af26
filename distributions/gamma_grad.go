package distributions

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// standardGammaRSample returns standard gamma draws of concentrations
// alpha whose gradient with respect to alpha is the reparameterised
// derivative dx/dα (see gammaSampleGradOp).
func standardGammaRSample(gen *ops.Generator, alpha *graph.Node) *graph.Node {
	return graph.Apply(gammaRSampleOp{}, gen.Gamma(alpha), alpha)
}

// gammaRSampleOp passes on its first input, gamma draws, and gives its
// second, their concentrations, the gradient dx/dα.
type gammaRSampleOp struct{}

// Name is "GammaRSample".
func (gammaRSampleOp) Name() string { return "GammaRSample" }

// Type checks that the draws and the concentrations share a float type.
func (gammaRSampleOp) Type(in []graph.Type) (graph.Type, error) { return drawsAndConcentrations(in) }

// Forward copies the draws.
func (gammaRSampleOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	graph.CopyValues(out, in[0])
	return nil
}

// Backward gives the concentrations gradOut·dx/dα, the draws nothing.
// dx/dα reads the op's output, not the raw draws, so that differentiating
// it again in α sees x move with α.
func (gammaRSampleOp) Backward(ctx *graph.GradContext, gradOut *graph.Node) []*graph.Node {
	return []*graph.Node{nil, ops.Mul(gradOut, graph.Apply(gammaSampleGradOp{}, ctx.Output(), ctx.Input(1)))}
}

// drawsAndConcentrations checks two inputs of one float type.
func drawsAndConcentrations(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 2); err != nil {
		return graph.Type{}, err
	}
	if !graph.IsFloat(in[0].DType) || !in[0].Equal(in[1]) {
		return graph.Type{}, fmt.Errorf("draws %v and concentrations %v: want one float type", in[0], in[1])
	}
	return in[0], nil
}

// gammaSampleGradOp computes, for standard gamma draws x of concentrations
// α, the derivative dx/dα of the draw at fixed quantile (implicit
// reparameterisation, Figurnov, Mohamed and Mnih 2018): with Q(α, x) the
// regularized upper incomplete gamma function, Q(α, x) stays fixed as α
// moves, so dx/dα = ∂Q/∂α / p(x; α), p the density. ∂Q/∂α is the
// Richardson extrapolation of central differences of Q (or −P, whichever
// is smaller) in α, of relative accuracy about 1e-10. PyTorch's
// _standard_gamma_grad approximates the same derivative.
type gammaSampleGradOp struct{}

// Name is "GammaSampleGrad".
func (gammaSampleGradOp) Name() string { return "GammaSampleGrad" }

// Type checks that the draws and the concentrations share a float type.
func (gammaSampleGradOp) Type(in []graph.Type) (graph.Type, error) { return drawsAndConcentrations(in) }

// Forward computes each element in float64.
func (gammaSampleGradOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return gammaElementwise(out, in, gammaSampleGrad)
}

// Backward differentiates g = dx/dα = ∂Q/∂α / p in its two arguments,
// from Q_x = −p, ∂p/∂x = p·((α−1)/x − 1) and ∂p/∂α = p·(log x − ψ(α)):
//
//	∂g/∂x = −(log x − ψ(α)) − g·((α−1)/x − 1)
//	∂g/∂α = Q_αα/p − g·(log x − ψ(α))
//
// with Q_αα/p computed by gammaTailCurvatureOp, which is not
// differentiable: a gamma RSample differentiates twice.
func (gammaSampleGradOp) Backward(ctx *graph.GradContext, gradOut *graph.Node) []*graph.Node {
	x, a, g := ctx.Input(0), ctx.Input(1), ctx.Output()
	one := ctx.Graph().Scalar(1, x.DType())
	score := ops.Sub(ops.Log(x), Digamma(a)) // ∂ log p/∂α
	dx := ops.Neg(ops.Add(score, ops.Mul(g, ops.Sub(ops.Div(ops.Sub(a, one), x), one))))
	da := ops.Sub(graph.Apply(gammaTailCurvatureOp{}, x, a), ops.Mul(g, score))
	return []*graph.Node{ops.Mul(gradOut, dx), ops.Mul(gradOut, da)}
}

// gammaTailCurvatureOp computes Q_αα(α, x)/p(x; α), the second derivative
// in α of the regularized upper incomplete gamma function over the
// density, by Richardson extrapolation of second central differences of Q
// (or −P, whichever is smaller), of relative accuracy about 1e-7.
type gammaTailCurvatureOp struct{}

// Name is "GammaTailCurvature".
func (gammaTailCurvatureOp) Name() string { return "GammaTailCurvature" }

// Type checks that the draws and the concentrations share a float type.
func (gammaTailCurvatureOp) Type(in []graph.Type) (graph.Type, error) {
	return drawsAndConcentrations(in)
}

// Forward computes each element in float64.
func (gammaTailCurvatureOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return gammaElementwise(out, in, func(x, a float64) float64 {
		tail, ok := gammaTail(x, a)
		if !ok {
			return math.NaN()
		}
		h := 1e-2 * min(a, math.Sqrt(a)) // Q varies in α on a scale of √α
		d := func(h float64) float64 { return (tail(a+h) - 2*tail(a) + tail(a-h)) / (h * h) }
		return (4*d(h/2) - d(h)) / 3 / gammaDensity(x, a)
	})
}

// Backward is an error: the reparameterised draw's third derivative is
// not provided.
func (gammaTailCurvatureOp) Backward(ctx *graph.GradContext, _ *graph.Node) []*graph.Node {
	ctx.Errorf("the reparameterised gradient of a gamma draw differentiates twice: its third derivative is not provided")
	return []*graph.Node{nil, nil}
}

// gammaElementwise sets out to f of the draws and concentrations, in
// float64.
func gammaElementwise(out *tensor.Dense, in []*tensor.Dense, f func(x, a float64) float64) error {
	switch o := graph.Backing(out).(type) {
	case []float64:
		x, a := graph.Backing(in[0]).([]float64), graph.Backing(in[1]).([]float64)
		for i := range o {
			o[i] = f(x[i], a[i])
		}
	case []float32:
		x, a := graph.Backing(in[0]).([]float32), graph.Backing(in[1]).([]float32)
		for i := range o {
			o[i] = float32(f(float64(x[i]), float64(a[i])))
		}
	}
	return nil
}

// gammaTail returns Q(·, x), or −P(·, x) = Q − 1 where Q(a, x) > ½ (the
// smaller, for differences of it), and false for invalid x or a.
func gammaTail(x, a float64) (func(float64) float64, bool) {
	if !(x > 0 && a > 0) || math.IsInf(x, 0) || math.IsInf(a, 0) {
		return nil, false
	}
	tail := func(a float64) float64 { return mathext.GammaIncRegComp(a, x) }
	if tail(a) > 0.5 {
		tail = func(a float64) float64 { return -mathext.GammaIncReg(a, x) }
	}
	return tail, true
}

// gammaDensity is the standard gamma density at x of concentration a.
func gammaDensity(x, a float64) float64 {
	lg, _ := math.Lgamma(a)
	return math.Exp((a-1)*math.Log(x) - x - lg)
}

// gammaSampleGrad is dx/dα for a standard gamma draw x of concentration a.
func gammaSampleGrad(x, a float64) float64 {
	tail, ok := gammaTail(x, a)
	if !ok {
		return math.NaN()
	}
	h := 1e-3 * min(a, 1)
	d := func(h float64) float64 { return (tail(a+h) - tail(a-h)) / (2 * h) }
	dq := (4*d(h/2) - d(h)) / 3
	return dq / gammaDensity(x, a)
}

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
func (gammaRSampleOp) Backward(ctx *graph.GradContext, gradOut *graph.Node) []*graph.Node {
	in := ctx.Inputs()
	return []*graph.Node{nil, ops.Mul(gradOut, graph.Apply(gammaSampleGradOp{}, in[0], in[1]))}
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
	switch o := graph.Backing(out).(type) {
	case []float64:
		x, a := graph.Backing(in[0]).([]float64), graph.Backing(in[1]).([]float64)
		for i := range o {
			o[i] = gammaSampleGrad(x[i], a[i])
		}
	case []float32:
		x, a := graph.Backing(in[0]).([]float32), graph.Backing(in[1]).([]float32)
		for i := range o {
			o[i] = float32(gammaSampleGrad(float64(x[i]), float64(a[i])))
		}
	}
	return nil
}

// Backward is an error: the derivative of dx/dα is not provided, so a
// gamma RSample differentiates once.
func (gammaSampleGradOp) Backward(ctx *graph.GradContext, _ *graph.Node) []*graph.Node {
	ctx.Errorf("the reparameterised gradient of a gamma draw differentiates once: its own derivative is not provided")
	return []*graph.Node{nil, nil}
}

// gammaSampleGrad is dx/dα for a standard gamma draw x of concentration a.
func gammaSampleGrad(x, a float64) float64 {
	if !(x > 0 && a > 0) || math.IsInf(x, 0) || math.IsInf(a, 0) {
		return math.NaN()
	}
	tail := func(a float64) float64 { return mathext.GammaIncRegComp(a, x) } // Q
	if tail(a) > 0.5 {
		tail = func(a float64) float64 { return -mathext.GammaIncReg(a, x) } // −P = Q − 1
	}
	h := 1e-3 * min(a, 1)
	d := func(h float64) float64 { return (tail(a+h) - tail(a-h)) / (2 * h) }
	dq := (4*d(h/2) - d(h)) / 3
	lg, _ := math.Lgamma(a)
	return dq / math.Exp((a-1)*math.Log(x)-x-lg)
}

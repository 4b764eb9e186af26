package distributions

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Gamma is the gamma distribution of shape (concentration) α and rate β,
// of density β^α·x^(α−1)·e^(−βx)/Γ(α) on x > 0.
type Gamma struct {
	Concentration, Rate *graph.Node
	batch
}

// NewGamma returns the gamma distributions of concentrations and rates
// (both positive), of one float dtype and shapes that broadcast together.
func NewGamma(concentration, rate *graph.Node) Gamma {
	return Gamma{Concentration: concentration, Rate: rate,
		batch: newBatch("NewGamma", []string{"concentration", "rate"}, concentration, rate)}
}

// RSample draws standard gamma values of the concentrations divided by
// the rates (see ops.RandomGamma), with gradients to the rates and, by
// implicit reparameterisation, to the concentrations (the draw's
// derivative at its fixed quantile, as PyTorch's rsample). The draw
// differentiates twice in the concentrations, where PyTorch's differentiates
// once (its _standard_gamma_grad has no derivative): the second
// derivative reads ∂²Q/∂α² of the incomplete gamma function, computed by
// extrapolated differences (about 1e-7 relative), and a third derivative
// in them (compile.Grad of a Hessian, say, in either mode) is an error
// ("the reparameterised gradient of a gamma draw differentiates twice"),
// never a wrong value. Derivatives in everything else (the rates, or
// what the draws feed) are exact to any order.
func (d Gamma) RSample(gen *ops.Generator) *graph.Node {
	if bad := d.check("Gamma"); bad != nil {
		return bad
	}
	return ops.Div(standardGammaRSample(gen, d.full(d.Concentration)), d.Rate)
}

// Sample draws like RSample, without gradients.
func (d Gamma) Sample(gen *ops.Generator) *graph.Node { return ops.StopGradient(d.RSample(gen)) }

// LogProb is α·log β + (α−1)·log x − β·x − log Γ(α).
func (d Gamma) LogProb(x *graph.Node) *graph.Node {
	if bad := d.value("Gamma", x); bad != nil {
		return bad
	}
	a, b := d.Concentration, d.Rate
	t := ops.Add(xlogy(a, b), xlogy(d.addConst(a, -1), x))
	return ops.Sub(t, ops.Add(ops.Mul(b, x), Lgamma(a)))
}

// Entropy is α − log β + log Γ(α) + (1−α)·ψ(α).
func (d Gamma) Entropy() *graph.Node {
	if bad := d.check("Gamma"); bad != nil {
		return bad
	}
	a := d.Concentration
	t := ops.Add(ops.Sub(a, ops.Log(d.Rate)), Lgamma(a))
	return d.full(ops.Add(t, ops.Mul(ops.Sub(d.constant(1), a), Digamma(a))))
}

// Mean is α/β.
func (d Gamma) Mean() *graph.Node {
	if bad := d.check("Gamma"); bad != nil {
		return bad
	}
	return d.full(ops.Div(d.Concentration, d.Rate))
}

// Variance is α/β².
func (d Gamma) Variance() *graph.Node {
	if bad := d.check("Gamma"); bad != nil {
		return bad
	}
	return d.full(ops.Div(d.Concentration, ops.Square(d.Rate)))
}

// klGamma is KL(p‖q) = αq·log(βp/βq) + log Γ(αq) − log Γ(αp)
// + (αp−αq)·ψ(αp) + (βq−βp)·αp/βp, as PyTorch's.
func klGamma(p, q Gamma) *graph.Node {
	t1 := ops.Mul(q.Concentration, ops.Log(ops.Div(p.Rate, q.Rate)))
	t2 := ops.Sub(Lgamma(q.Concentration), Lgamma(p.Concentration))
	t3 := ops.Mul(ops.Sub(p.Concentration, q.Concentration), Digamma(p.Concentration))
	t4 := ops.Mul(ops.Sub(q.Rate, p.Rate), ops.Div(p.Concentration, p.Rate))
	return ops.Add(ops.Add(t1, t2), ops.Add(t3, t4))
}

// Beta is the beta distribution of concentrations α (Concentration1) and
// β (Concentration0), of density x^(α−1)·(1−x)^(β−1)/B(α, β) on (0, 1).
type Beta struct {
	Concentration1, Concentration0 *graph.Node
	batch
}

// NewBeta returns the beta distributions of concentrations concentration1
// (α) and concentration0 (β), both positive, of one float dtype and shapes
// that broadcast together (PyTorch's argument order).
func NewBeta(concentration1, concentration0 *graph.Node) Beta {
	return Beta{Concentration1: concentration1, Concentration0: concentration0,
		batch: newBatch("NewBeta", []string{"concentration1", "concentration0"}, concentration1, concentration0)}
}

// RSample draws X/(X+Y) from standard gamma draws X of α and Y of β,
// with gradients to both through the draws (see Gamma.RSample).
func (d Beta) RSample(gen *ops.Generator) *graph.Node {
	if bad := d.check("Beta"); bad != nil {
		return bad
	}
	x := standardGammaRSample(gen, d.full(d.Concentration1))
	y := standardGammaRSample(gen, d.full(d.Concentration0))
	return ops.Div(x, ops.Add(x, y))
}

// Sample draws like RSample, without gradients.
func (d Beta) Sample(gen *ops.Generator) *graph.Node { return ops.StopGradient(d.RSample(gen)) }

// LogProb is (α−1)·log x + (β−1)·log(1−x) + log Γ(α+β) − log Γ(α) − log Γ(β).
func (d Beta) LogProb(x *graph.Node) *graph.Node {
	if bad := d.value("Beta", x); bad != nil {
		return bad
	}
	a, b := d.Concentration1, d.Concentration0
	t := ops.Add(xlogy(d.addConst(a, -1), x), xlogy(d.addConst(b, -1), ops.Sub(d.constant(1), x)))
	return ops.Sub(t, lbeta(a, b))
}

// lbeta is log B(a, b) = log Γ(a) + log Γ(b) − log Γ(a+b).
func lbeta(a, b *graph.Node) *graph.Node {
	return ops.Sub(ops.Add(Lgamma(a), Lgamma(b)), Lgamma(ops.Add(a, b)))
}

// Entropy is log B(α, β) − (α−1)·ψ(α) − (β−1)·ψ(β) + (α+β−2)·ψ(α+β).
func (d Beta) Entropy() *graph.Node {
	if bad := d.check("Beta"); bad != nil {
		return bad
	}
	a, b := d.Concentration1, d.Concentration0
	s := ops.Add(a, b)
	t := ops.Add(ops.Mul(d.addConst(a, -1), Digamma(a)), ops.Mul(d.addConst(b, -1), Digamma(b)))
	return d.full(ops.Add(ops.Sub(lbeta(a, b), t), ops.Mul(d.addConst(s, -2), Digamma(s))))
}

// Mean is α/(α+β).
func (d Beta) Mean() *graph.Node {
	if bad := d.check("Beta"); bad != nil {
		return bad
	}
	return d.full(ops.Div(d.Concentration1, ops.Add(d.Concentration1, d.Concentration0)))
}

// Variance is α·β/((α+β)²·(α+β+1)).
func (d Beta) Variance() *graph.Node {
	if bad := d.check("Beta"); bad != nil {
		return bad
	}
	a, b := d.Concentration1, d.Concentration0
	s := ops.Add(a, b)
	return d.full(ops.Div(ops.Mul(a, b), ops.Mul(ops.Square(s), d.addConst(s, 1))))
}

// klBeta is KL(p‖q) = log B(αq, βq) − log B(αp, βp) + (αp−αq)·ψ(αp)
// + (βp−βq)·ψ(βp) + (αq−αp+βq−βp)·ψ(αp+βp), as PyTorch's.
func klBeta(p, q Beta) *graph.Node {
	a, b := p.Concentration1, p.Concentration0
	sp, sq := ops.Add(a, b), ops.Add(q.Concentration1, q.Concentration0)
	t := ops.Sub(lbeta(q.Concentration1, q.Concentration0), lbeta(a, b))
	t = ops.Add(t, ops.Mul(ops.Sub(a, q.Concentration1), Digamma(a)))
	t = ops.Add(t, ops.Mul(ops.Sub(b, q.Concentration0), Digamma(b)))
	return ops.Add(t, ops.Mul(ops.Sub(sq, sp), Digamma(sp)))
}

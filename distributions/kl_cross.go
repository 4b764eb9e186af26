package distributions

import (
	"math"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// klCross holds the divergences between families that PyTorch registers,
// by the families' names, with its formulas.
var klCross = map[[2]string]func(p, q Distribution) *graph.Node{
	{"Beta", "Gamma"}:      func(p, q Distribution) *graph.Node { return klBetaGamma(p.(Beta), q.(Gamma)) },
	{"Beta", "Normal"}:     func(p, q Distribution) *graph.Node { return klBetaNormal(p.(Beta), q.(Normal)) },
	{"Beta", "Uniform"}:    func(p, q Distribution) *graph.Node { return klBetaUniform(p.(Beta), q.(Uniform)) },
	{"Gamma", "Normal"}:    func(p, q Distribution) *graph.Node { return klGammaNormal(p.(Gamma), q.(Normal)) },
	{"Laplace", "Normal"}:  func(p, q Distribution) *graph.Node { return klLaplaceNormal(p.(Laplace), q.(Normal)) },
	{"Normal", "Laplace"}:  func(p, q Distribution) *graph.Node { return klNormalLaplace(p.(Normal), q.(Laplace)) },
	{"Uniform", "Beta"}:    func(p, q Distribution) *graph.Node { return klUniformBeta(p.(Uniform), q.(Beta)) },
	{"Uniform", "Gamma"}:   func(p, q Distribution) *graph.Node { return klUniformGamma(p.(Uniform), q.(Gamma)) },
	{"Uniform", "Normal"}:  func(p, q Distribution) *graph.Node { return klUniformNormal(p.(Uniform), q.(Normal)) },
	{"Gamma", "Beta"}:      klInfinite,
	{"Gamma", "Uniform"}:   klInfinite,
	{"Laplace", "Beta"}:    klInfinite,
	{"Laplace", "Gamma"}:   klInfinite,
	{"Laplace", "Uniform"}: klInfinite,
	{"Normal", "Beta"}:     klInfinite,
	{"Normal", "Gamma"}:    klInfinite,
	{"Normal", "Uniform"}:  klInfinite,
}

// klInfinite is +∞ over the broadcast batch: p has mass where q has none.
func klInfinite(p, q Distribution) *graph.Node {
	bp, _ := batchOf(p)
	bq, _ := batchOf(q)
	shape, _ := broadcast(bp.shape, bq.shape)
	return ops.BroadcastTo(bp.constant(math.Inf(1)), shape...)
}

// infiniteWhere is kl, +∞ where outside is 1.
func infiniteWhere(b batch, outside, kl *graph.Node) *graph.Node {
	return ops.Where(outside, b.constant(math.Inf(1)), kl)
}

// klBetaGamma is −H(p) + log Γ(α) − α·log β − (α−1)·(ψ(a₁) − ψ(a₁+a₀))
// + β·a₁/(a₁+a₀), p = Beta(a₁, a₀), q = Gamma(α, β).
func klBetaGamma(p Beta, q Gamma) *graph.Node {
	a1, s := p.Concentration1, ops.Add(p.Concentration1, p.Concentration0)
	a, b := q.Concentration, q.Rate
	t := ops.Sub(Lgamma(a), ops.Mul(a, ops.Log(b)))
	t = ops.Sub(t, ops.Mul(p.addConst(a, -1), ops.Sub(Digamma(a1), Digamma(s))))
	t = ops.Add(t, ops.Div(ops.Mul(b, a1), s))
	return ops.Sub(t, p.Entropy())
}

// klBetaNormal is −H(p) + ½·log(2πσ²) + (½·E[x²] − μ·E[x] + ½·μ²)/σ².
func klBetaNormal(p Beta, q Normal) *graph.Node {
	s := ops.Add(p.Concentration1, p.Concentration0)
	mean := ops.Div(p.Concentration1, s)
	second := ops.Add(ops.Div(ops.Mul(mean, ops.Sub(p.constant(1), mean)), p.addConst(s, 1)), ops.Square(mean))
	return klToNormal(p.Entropy(), mean, second, q)
}

// klToNormal is −h + ½·log(2πσ²) + (½·m₂ − μ·m₁ + ½·μ²)/σ², the
// divergence from q = N(μ, σ²) of a distribution of entropy h and first
// and second moments m₁ and m₂.
func klToNormal(h, m1, m2 *graph.Node, q Normal) *graph.Node {
	v := ops.Square(q.Scale)
	t := ops.Scale(q.addConst(ops.Log(v), math.Log(2*math.Pi)), 0.5)
	inner := ops.Add(ops.Sub(ops.Scale(m2, 0.5), ops.Mul(q.Loc, m1)), ops.Scale(ops.Square(q.Loc), 0.5))
	return ops.Sub(ops.Add(t, ops.Div(inner, v)), h)
}

// klBetaUniform is −H(p) + log(h−l), +∞ unless [l, h] holds [0, 1].
func klBetaUniform(p Beta, q Uniform) *graph.Node {
	kl := ops.Sub(ops.Log(ops.Sub(q.High, q.Low)), p.Entropy())
	outside := ops.Maximum(ops.Greater(q.Low, p.constant(0)), ops.Less(q.High, p.constant(1)))
	return infiniteWhere(p.batch, outside, kl)
}

// klGammaNormal is KL of Gamma(α, β) from N(μ, σ²), through its entropy
// and its moments α/β and α(α+1)/β².
func klGammaNormal(p Gamma, q Normal) *graph.Node {
	a, b := p.Concentration, p.Rate
	m2 := ops.Div(ops.Mul(a, p.addConst(a, 1)), ops.Square(b))
	return klToNormal(p.Entropy(), ops.Div(a, b), m2, q)
}

// klLaplaceNormal is KL of Laplace(m, b) from N(μ, σ²), through its
// entropy and its moments m and m² + 2b².
func klLaplaceNormal(p Laplace, q Normal) *graph.Node {
	m2 := ops.Add(ops.Square(p.Loc), ops.Scale(ops.Square(p.Scale), 2))
	return klToNormal(p.Entropy(), p.Loc, m2, q)
}

// klNormalLaplace is −log(σ/b) + (√(2/π)·σ·e^(−d²/2σ²) + d·erf(d/(σ√2)))/b
// − ½·(1 + log(π/2)), d = μ − m, p = N(μ, σ²), q = Laplace(m, b).
func klNormalLaplace(p Normal, q Laplace) *graph.Node {
	d := ops.Sub(p.Loc, q.Loc)
	z := ops.Div(d, p.Scale)
	t2 := ops.Scale(ops.Mul(p.Scale, ops.Exp(ops.Scale(ops.Square(z), -0.5))), math.Sqrt(2/math.Pi))
	t3 := ops.Mul(d, ops.Erf(ops.Scale(z, math.Sqrt(0.5))))
	t := ops.Sub(ops.Div(ops.Add(t2, t3), q.Scale), ops.Log(ops.Div(p.Scale, q.Scale)))
	return p.addConst(t, -0.5*(1+math.Log(0.5*math.Pi)))
}

// uniformXLogX is (h·log h − l·log l − (h−l))/(h−l), the mean of log x
// over [l, h] (0·log 0 = 0), for p = Uniform(l, h) and Uniform(1−h, 1−l)
// when flip.
func uniformXLogX(p Uniform, flip bool) *graph.Node {
	l, h := p.Low, p.High
	if flip {
		one := p.constant(1)
		l, h = ops.Sub(one, p.High), ops.Sub(one, p.Low)
	}
	c := ops.Sub(h, l)
	return ops.Div(ops.Sub(ops.Sub(xlogy(h, h), xlogy(l, l)), c), c)
}

// klUniformBeta is −log(h−l) − (a₁−1)·E[log x] − (a₀−1)·E[log(1−x)]
// + log B(a₁, a₀), +∞ unless [0, 1] holds [l, h].
func klUniformBeta(p Uniform, q Beta) *graph.Node {
	t := ops.Sub(lbeta(q.Concentration1, q.Concentration0), ops.Log(ops.Sub(p.High, p.Low)))
	t = ops.Sub(t, ops.Mul(p.addConst(q.Concentration1, -1), uniformXLogX(p, false)))
	t = ops.Sub(t, ops.Mul(p.addConst(q.Concentration0, -1), uniformXLogX(p, true)))
	outside := ops.Maximum(ops.Greater(p.High, p.constant(1)), ops.Less(p.Low, p.constant(0)))
	return infiniteWhere(p.batch, outside, t)
}

// klUniformGamma is −log(h−l) + log Γ(α) − α·log β − (α−1)·E[log x]
// + β·(h+l)/2, +∞ where l < 0.
func klUniformGamma(p Uniform, q Gamma) *graph.Node {
	a, b := q.Concentration, q.Rate
	t := ops.Sub(ops.Sub(Lgamma(a), ops.Mul(a, ops.Log(b))), ops.Log(ops.Sub(p.High, p.Low)))
	t = ops.Sub(t, ops.Mul(p.addConst(a, -1), uniformXLogX(p, false)))
	t = ops.Add(t, ops.Scale(ops.Mul(b, ops.Add(p.High, p.Low)), 0.5))
	return infiniteWhere(p.batch, ops.Less(p.Low, p.constant(0)), t)
}

// klUniformNormal is KL of Uniform(l, h) from N(μ, σ²), through its
// entropy and its moments (h+l)/2 and (h²+hl+l²)/3.
func klUniformNormal(p Uniform, q Normal) *graph.Node {
	l, h := p.Low, p.High
	m2 := ops.Scale(ops.Add(ops.Add(ops.Square(h), ops.Mul(h, l)), ops.Square(l)), 1.0/3)
	return klToNormal(p.Entropy(), ops.Scale(ops.Add(h, l), 0.5), m2, q)
}

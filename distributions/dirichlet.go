package distributions

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Dirichlet is the Dirichlet distribution of concentrations α over the
// probability simplex of the last axis: density
// Γ(Σα)/ΠΓ(αᵢ)·Πxᵢ^(αᵢ−1). Its batch shape is the concentrations' without
// the last axis; LogProb takes points of the concentrations' shape (or one
// that broadcasts with it) and Mean and Variance have that shape.
type Dirichlet struct {
	Concentration *graph.Node
	batch
	k int
}

// NewDirichlet returns the Dirichlet distributions of concentration
// (positive), at least a vector, the categories along the last axis.
func NewDirichlet(concentration *graph.Node) Dirichlet {
	b := newBatch("NewDirichlet", []string{"concentration"}, concentration)
	if b.bad != nil {
		return Dirichlet{Concentration: concentration, batch: b}
	}
	shape := concentration.Shape()
	if len(shape) == 0 || shape[len(shape)-1] == 0 {
		return Dirichlet{Concentration: concentration, batch: batch{bad: fail(b.g, "NewDirichlet",
			"concentration %v has no categories: want a last axis of size ≥ 1", concentration.Type())}}
	}
	b.shape = shape[:len(shape)-1]
	return Dirichlet{Concentration: concentration, batch: b, k: shape[len(shape)-1]}
}

// RSample draws G/ΣG from standard gamma draws G of the concentrations,
// with gradients to them through the draws (see Gamma.RSample).
func (d Dirichlet) RSample(gen *ops.Generator) *graph.Node {
	if bad := d.check("Dirichlet"); bad != nil {
		return bad
	}
	g := standardGammaRSample(gen, d.Concentration)
	return ops.Div(g, ops.SumKeepDims(g, -1))
}

// Sample draws like RSample, without gradients.
func (d Dirichlet) Sample(gen *ops.Generator) *graph.Node { return ops.StopGradient(d.RSample(gen)) }

// LogProb is Σ(αᵢ−1)·log xᵢ + log Γ(Σα) − Σ log Γ(αᵢ), over the last axis
// of x, a point of the simplex.
func (d Dirichlet) LogProb(x *graph.Node) *graph.Node {
	if bad := d.check("Dirichlet"); bad != nil {
		return bad
	}
	if x != nil && graph.Poisoned(x) == nil && x.Graph() == d.g {
		if s := x.Shape(); len(s) == 0 || s[len(s)-1] != d.k {
			return fail(d.g, "Dirichlet.LogProb", "the value's shape %s does not end in the %d categories", graph.ShapeString(s), d.k)
		}
	}
	a := d.Concentration
	event := d.batch
	event.shape = a.Shape()
	if bad := event.value("Dirichlet", x); bad != nil {
		return bad
	}
	t := ops.Sum(xlogy(d.addConst(a, -1), x), -1)
	return ops.Add(t, ops.Sub(Lgamma(ops.Sum(a, -1)), ops.Sum(Lgamma(a), -1)))
}

// Entropy is Σ log Γ(αᵢ) − log Γ(α₀) + (α₀−K)·ψ(α₀) − Σ(αᵢ−1)·ψ(αᵢ),
// α₀ = Σα.
func (d Dirichlet) Entropy() *graph.Node {
	if bad := d.check("Dirichlet"); bad != nil {
		return bad
	}
	a := d.Concentration
	a0 := ops.Sum(a, -1)
	t := ops.Sub(ops.Sum(Lgamma(a), -1), Lgamma(a0))
	t = ops.Add(t, ops.Mul(d.addConst(a0, -float64(d.k)), Digamma(a0)))
	return ops.Sub(t, ops.Sum(ops.Mul(d.addConst(a, -1), Digamma(a)), -1))
}

// Mean is α/α₀.
func (d Dirichlet) Mean() *graph.Node {
	if bad := d.check("Dirichlet"); bad != nil {
		return bad
	}
	return ops.Div(d.Concentration, ops.SumKeepDims(d.Concentration, -1))
}

// Variance is α·(α₀−α)/(α₀²·(α₀+1)).
func (d Dirichlet) Variance() *graph.Node {
	if bad := d.check("Dirichlet"); bad != nil {
		return bad
	}
	a := d.Concentration
	a0 := ops.SumKeepDims(a, -1)
	return ops.Div(ops.Mul(a, ops.Sub(a0, a)), ops.Mul(ops.Square(a0), d.addConst(a0, 1)))
}

// klDirichlet is KL(p‖q) = log Γ(Σαp) − log Γ(Σαq) − Σ(log Γ(αp) − log Γ(αq))
// + Σ(αp−αq)·(ψ(αp) − ψ(Σαp)), as PyTorch's.
func klDirichlet(p, q Dirichlet) *graph.Node {
	a, b := p.Concentration, q.Concentration
	sa := ops.SumKeepDims(a, -1)
	t := ops.Sub(Lgamma(ops.Sum(a, -1)), Lgamma(ops.Sum(b, -1)))
	t = ops.Sub(t, ops.Sum(ops.Sub(Lgamma(a), Lgamma(b)), -1))
	return ops.Add(t, ops.Sum(ops.Mul(ops.Sub(a, b), ops.Sub(Digamma(a), Digamma(sa))), -1))
}

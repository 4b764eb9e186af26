package distributions

import (
	"math"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// StudentT is Student's t distribution of Df degrees of freedom ν,
// location Loc and scale Scale: loc + scale·T for T of density
// Γ((ν+1)/2)/(√(νπ)·Γ(ν/2))·(1 + t²/ν)^(−(ν+1)/2).
type StudentT struct {
	Df, Loc, Scale *graph.Node
	batch
}

// NewStudentT returns the t distributions of degrees of freedom df
// (positive), locations loc and scales scale (positive), of one float
// dtype and shapes that broadcast together.
func NewStudentT(df, loc, scale *graph.Node) StudentT {
	return StudentT{Df: df, Loc: loc, Scale: scale,
		batch: newBatch("NewStudentT", []string{"df", "loc", "scale"}, df, loc, scale)}
}

// RSample draws loc + scale·X/√(Z/ν) from a standard normal X and a χ²
// draw Z of ν degrees of freedom (twice a standard gamma draw of ν/2), as
// PyTorch does, with gradients to loc, scale and, through the gamma draw
// (see Gamma.RSample), ν.
func (d StudentT) RSample(gen *ops.Generator) *graph.Node {
	if bad := d.check("StudentT"); bad != nil {
		return bad
	}
	x := gen.Normal(d.dtype, d.shape...)
	z := ops.Scale(standardGammaRSample(gen, d.full(ops.Scale(d.Df, 0.5))), 2)
	t := ops.Div(x, ops.Sqrt(ops.Div(z, d.Df)))
	return ops.Add(d.Loc, ops.Mul(d.Scale, t))
}

// Sample draws like RSample, without gradients.
func (d StudentT) Sample(gen *ops.Generator) *graph.Node { return ops.StopGradient(d.RSample(gen)) }

// LogProb is −(ν+1)/2·log(1 + y²/ν) − log scale − ½·log(νπ)
// − log Γ(ν/2) + log Γ((ν+1)/2), y = (x−loc)/scale.
func (d StudentT) LogProb(x *graph.Node) *graph.Node {
	if bad := d.value("StudentT", x); bad != nil {
		return bad
	}
	nu := d.Df
	y := ops.Div(ops.Sub(x, d.Loc), d.Scale)
	half := ops.Scale(nu, 0.5)
	z := ops.Add(ops.Log(d.Scale), ops.Scale(ops.Log(nu), 0.5))
	z = ops.Add(d.addConst(z, 0.5*math.Log(math.Pi)), ops.Sub(Lgamma(half), Lgamma(d.addConst(half, 0.5))))
	return ops.Sub(ops.Mul(ops.Scale(d.addConst(nu, 1), -0.5), ops.Log1p(ops.Div(ops.Square(y), nu))), z)
}

// Entropy is log scale + (ν+1)/2·(ψ((ν+1)/2) − ψ(ν/2)) + ½·log ν
// + log B(ν/2, ½).
func (d StudentT) Entropy() *graph.Node {
	if bad := d.check("StudentT"); bad != nil {
		return bad
	}
	nu := d.Df
	half := ops.Scale(nu, 0.5)
	half1 := d.addConst(half, 0.5)
	lb := d.addConst(ops.Sub(Lgamma(half), Lgamma(half1)), 0.5*math.Log(math.Pi)) // log Γ(½) = ½·log π
	t := ops.Mul(half1, ops.Sub(Digamma(half1), Digamma(half)))
	return d.full(ops.Add(ops.Add(ops.Log(d.Scale), t), ops.Add(ops.Scale(ops.Log(nu), 0.5), lb)))
}

// Mean is loc where ν > 1, NaN elsewhere, as PyTorch's.
func (d StudentT) Mean() *graph.Node {
	if bad := d.check("StudentT"); bad != nil {
		return bad
	}
	return d.full(ops.Where(ops.Greater(d.Df, d.constant(1)), d.Loc, d.constant(math.NaN())))
}

// Variance is scale²·ν/(ν−2) where ν > 2, +∞ where 1 < ν ≤ 2 and NaN
// where ν ≤ 1, as PyTorch's.
func (d StudentT) Variance() *graph.Node {
	if bad := d.check("StudentT"); bad != nil {
		return bad
	}
	nu := d.Df
	v := ops.Div(ops.Mul(ops.Square(d.Scale), nu), d.addConst(nu, -2))
	v = ops.Where(ops.Greater(nu, d.constant(2)), v, d.constant(math.Inf(1)))
	return d.full(ops.Where(ops.Greater(nu, d.constant(1)), v, d.constant(math.NaN())))
}

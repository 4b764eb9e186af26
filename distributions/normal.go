package distributions

import (
	"math"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Normal is the normal distribution N(Loc, Scale²), elementwise over the
// broadcast of Loc's and Scale's shapes.
type Normal struct {
	Loc, Scale *graph.Node
	batch
}

// NewNormal returns the normal distributions of means loc and standard
// deviations scale (positive), of one float dtype and shapes that
// broadcast together.
func NewNormal(loc, scale *graph.Node) Normal {
	return Normal{Loc: loc, Scale: scale, batch: newBatch("NewNormal", []string{"loc", "scale"}, loc, scale)}
}

// RSample draws loc + scale·ε with ε standard normal from gen: the draw
// carries gradients to loc and scale.
func (d Normal) RSample(gen *ops.Generator) *graph.Node {
	if bad := d.check("Normal"); bad != nil {
		return bad
	}
	return ops.Add(d.Loc, ops.Mul(d.Scale, gen.Normal(d.dtype, d.shape...)))
}

// Sample draws like RSample, without gradients.
func (d Normal) Sample(gen *ops.Generator) *graph.Node { return ops.StopGradient(d.RSample(gen)) }

// LogProb is −(x−loc)²/(2·scale²) − log scale − ½·log 2π.
func (d Normal) LogProb(x *graph.Node) *graph.Node {
	if bad := d.value("Normal", x); bad != nil {
		return bad
	}
	z := ops.Div(ops.Sub(x, d.Loc), d.Scale)
	return ops.Neg(ops.Add(ops.Scale(ops.Square(z), 0.5), d.addConst(ops.Log(d.Scale), halfLog2Pi)))
}

// Entropy is ½ + ½·log 2π + log scale.
func (d Normal) Entropy() *graph.Node {
	if bad := d.check("Normal"); bad != nil {
		return bad
	}
	return d.full(d.addConst(ops.Log(d.Scale), 0.5+halfLog2Pi))
}

// Mean is loc.
func (d Normal) Mean() *graph.Node {
	if bad := d.check("Normal"); bad != nil {
		return bad
	}
	return d.full(d.Loc)
}

// Variance is scale².
func (d Normal) Variance() *graph.Node {
	if bad := d.check("Normal"); bad != nil {
		return bad
	}
	return d.full(ops.Square(d.Scale))
}

// klNormal is KL(p‖q) = ½·(r + ((μp−μq)/σq)² − 1 − log r) with r = (σp/σq)².
func klNormal(p, q Normal) *graph.Node {
	r := ops.Square(ops.Div(p.Scale, q.Scale))
	t := ops.Square(ops.Div(ops.Sub(p.Loc, q.Loc), q.Scale))
	return ops.Scale(ops.Sub(p.addConst(ops.Add(r, t), -1), ops.Log(r)), 0.5)
}

// Laplace is the Laplace distribution of location Loc and scale Scale,
// of density exp(−|x−loc|/scale)/(2·scale).
type Laplace struct {
	Loc, Scale *graph.Node
	batch
}

// NewLaplace returns the Laplace distributions of locations loc and scales
// scale (positive), of one float dtype and shapes that broadcast together.
func NewLaplace(loc, scale *graph.Node) Laplace {
	return Laplace{Loc: loc, Scale: scale, batch: newBatch("NewLaplace", []string{"loc", "scale"}, loc, scale)}
}

// RSample draws loc − scale·sign(u)·log(1−|u|) for u uniform on
// [ε−1, 1), ε the dtype's machine epsilon, as PyTorch does: the draw
// carries gradients to loc and scale.
func (d Laplace) RSample(gen *ops.Generator) *graph.Node {
	if bad := d.check("Laplace"); bad != nil {
		return bad
	}
	eps := math.Nextafter(1, 2) - 1
	if d.dtype == graph.Float32 {
		eps = float64(math.Nextafter32(1, 2) - 1)
	}
	u := d.addConst(ops.Scale(gen.Uniform(d.dtype, d.shape...), 2-eps), eps-1)
	return ops.Sub(d.Loc, ops.Mul(d.Scale, ops.Mul(ops.Sign(u), ops.Log1p(ops.Neg(ops.Abs(u))))))
}

// Sample draws like RSample, without gradients.
func (d Laplace) Sample(gen *ops.Generator) *graph.Node { return ops.StopGradient(d.RSample(gen)) }

// LogProb is −log(2·scale) − |x−loc|/scale.
func (d Laplace) LogProb(x *graph.Node) *graph.Node {
	if bad := d.value("Laplace", x); bad != nil {
		return bad
	}
	return ops.Neg(ops.Add(d.addConst(ops.Log(d.Scale), math.Ln2), ops.Div(ops.Abs(ops.Sub(x, d.Loc)), d.Scale)))
}

// Entropy is 1 + log(2·scale).
func (d Laplace) Entropy() *graph.Node {
	if bad := d.check("Laplace"); bad != nil {
		return bad
	}
	return d.full(d.addConst(ops.Log(d.Scale), 1+math.Ln2))
}

// Mean is loc.
func (d Laplace) Mean() *graph.Node {
	if bad := d.check("Laplace"); bad != nil {
		return bad
	}
	return d.full(d.Loc)
}

// Variance is 2·scale².
func (d Laplace) Variance() *graph.Node {
	if bad := d.check("Laplace"); bad != nil {
		return bad
	}
	return d.full(ops.Scale(ops.Square(d.Scale), 2))
}

// klLaplace is KL(p‖q) = −log r + |μp−μq|/bq + r·exp(−|μp−μq|/bp) − 1
// with r = bp/bq.
func klLaplace(p, q Laplace) *graph.Node {
	r := ops.Div(p.Scale, q.Scale)
	diff := ops.Abs(ops.Sub(p.Loc, q.Loc))
	t := ops.Add(ops.Div(diff, q.Scale), ops.Mul(r, ops.Exp(ops.Neg(ops.Div(diff, p.Scale)))))
	return p.addConst(ops.Sub(t, ops.Log(r)), -1)
}

package distributions

import (
	"math"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// MultivariateNormal is the normal distribution on vectors of the last
// axis of Loc, of covariance L·Lᵀ for the lower-triangular ScaleTril L
// (positive diagonal; the upper triangle is not read). Its batch shape is
// the broadcast of Loc's without its last axis and ScaleTril's without its
// last two; Mean and Variance have the batch shape and the vectors' size.
type MultivariateNormal struct {
	Loc, ScaleTril *graph.Node
	batch
	n int
}

// NewMultivariateNormal returns the multivariate normal distributions of
// means loc (…, n) and Cholesky factors of their covariances scaleTril
// (…, n, n), of one float dtype and batch shapes that broadcast together.
func NewMultivariateNormal(loc, scaleTril *graph.Node) MultivariateNormal {
	const fn = "NewMultivariateNormal"
	d := MultivariateNormal{Loc: loc, ScaleTril: scaleTril}
	if b := newParams(fn, []string{"loc", "scale_tril"}, loc, scaleTril); b.bad != nil {
		d.batch = b
		return d
	}
	g := loc.Graph()
	ls, ts := loc.Shape(), scaleTril.Shape()
	switch {
	case len(ls) == 0:
		d.batch = batch{bad: fail(g, fn, "loc %v is not a vector", loc.Type())}
	case len(ts) < 2 || ts[len(ts)-1] != ts[len(ts)-2] || ts[len(ts)-1] != ls[len(ls)-1]:
		d.batch = batch{bad: fail(g, fn, "scale_tril has shape %s: want (…, %d, %d) for loc %s", graph.ShapeString(ts),
			ls[len(ls)-1], ls[len(ls)-1], graph.ShapeString(ls))}
	default:
		bs, ok := broadcast(ls[:len(ls)-1], ts[:len(ts)-2])
		if !ok {
			d.batch = batch{bad: fail(g, fn, "the batch shapes of loc %s and scale_tril %s do not broadcast together",
				graph.ShapeString(ls), graph.ShapeString(ts))}
			break
		}
		d.batch, d.n = batch{g: g, dtype: loc.DType(), shape: bs}, ls[len(ls)-1]
	}
	return d
}

// NewMultivariateNormalCovariance returns the multivariate normal
// distributions of means loc and covariances cov (…, n, n), symmetric
// positive-definite, whose Cholesky factors (ops.Cholesky) it holds; the
// gradients with respect to cov are symmetric, as Cholesky's.
func NewMultivariateNormalCovariance(loc, cov *graph.Node) MultivariateNormal {
	if b := newParams("NewMultivariateNormalCovariance", []string{"loc", "cov"}, loc, cov); b.bad != nil {
		return MultivariateNormal{Loc: loc, ScaleTril: cov, batch: b}
	}
	return NewMultivariateNormal(loc, ops.Cholesky(cov))
}

// with returns x broadcast to batch shape bs and the trailing dimensions
// x has beyond its own batch axes (tail of them).
func with(x *graph.Node, bs []int, tail int) *graph.Node {
	s := x.Shape()
	want := append(slices.Clone(bs), s[len(s)-tail:]...)
	if slices.Equal(s, want) {
		return x
	}
	return ops.BroadcastTo(x, want...)
}

// RSample draws loc + L·ε with ε standard normal: the draw carries
// gradients to loc and the scale.
func (d MultivariateNormal) RSample(gen *ops.Generator) *graph.Node {
	if bad := d.check("MultivariateNormal"); bad != nil {
		return bad
	}
	eps := gen.Normal(d.dtype, append(slices.Clone(d.shape), 1, d.n)...)
	// Row i of L times ε: Σⱼ Lᵢⱼ·εⱼ.
	return ops.Add(d.Loc, ops.Sum(ops.Mul(with(d.tril(), d.shape, 2), eps), -1))
}

// Sample draws like RSample, without gradients.
func (d MultivariateNormal) Sample(gen *ops.Generator) *graph.Node {
	return ops.StopGradient(d.RSample(gen))
}

// tril is ScaleTril with its upper triangle zeroed.
func (d MultivariateNormal) tril() *graph.Node { return ops.Tril(d.ScaleTril, 0) }

// halfLogDet is Σ log Lᵢᵢ, half the log-determinant of the covariance.
func (d MultivariateNormal) halfLogDet() *graph.Node {
	return ops.Sum(ops.Log(ops.Diagonal(d.ScaleTril)), -1)
}

// mahalanobis is |L⁻¹·v|² for v (…, n) and L of batch shape bs ⊇ v's.
func mahalanobis(l, v *graph.Node, bs []int, n int) *graph.Node {
	col := ops.Reshape(with(v, bs, 1), append(slices.Clone(bs), n, 1)...)
	return ops.Sum(ops.Square(ops.TriangularSolve(with(l, bs, 2), col, ops.TriangularOptions{})), -2, -1)
}

// LogProb is −½·(n·log 2π + |L⁻¹·(x−loc)|²) − Σ log Lᵢᵢ, for x (…, n).
func (d MultivariateNormal) LogProb(x *graph.Node) *graph.Node {
	if bad := d.check("MultivariateNormal"); bad != nil {
		return bad
	}
	event := d.batch
	event.shape = append(slices.Clone(d.shape), d.n)
	if bad := event.value("MultivariateNormal", x); bad != nil {
		return bad
	}
	if s := x.Shape(); len(s) == 0 || s[len(s)-1] != d.n {
		return fail(d.g, "MultivariateNormal.LogProb", "the value's shape %s does not end in the vectors' size %d", graph.ShapeString(s), d.n)
	}
	bs, _ := broadcast(d.shape, x.Shape()[:len(x.Shape())-1])
	m := mahalanobis(d.ScaleTril, ops.Sub(x, d.Loc), bs, d.n)
	c := 0.5 * float64(d.n) * math.Log(2*math.Pi)
	return ops.Neg(ops.Add(d.addConst(ops.Scale(m, 0.5), c), d.halfLogDet()))
}

// Entropy is ½·n·(1 + log 2π) + Σ log Lᵢᵢ.
func (d MultivariateNormal) Entropy() *graph.Node {
	if bad := d.check("MultivariateNormal"); bad != nil {
		return bad
	}
	return d.full(d.addConst(d.halfLogDet(), 0.5*float64(d.n)*(1+math.Log(2*math.Pi))))
}

// Mean is loc, of the batch shape and n.
func (d MultivariateNormal) Mean() *graph.Node {
	if bad := d.check("MultivariateNormal"); bad != nil {
		return bad
	}
	return with(d.Loc, d.shape, 1)
}

// Variance is the covariance's diagonal, Σⱼ Lᵢⱼ², of the batch shape and n.
func (d MultivariateNormal) Variance() *graph.Node {
	if bad := d.check("MultivariateNormal"); bad != nil {
		return bad
	}
	return with(ops.Sum(ops.Square(d.tril()), -1), d.shape, 1)
}

// klMultivariateNormal is KL(p‖q) = Σ log Lq,ᵢᵢ − Σ log Lp,ᵢᵢ
// + ½·(|Lq⁻¹·Lp|²_F + |Lq⁻¹·(μq−μp)|² − n), as PyTorch's.
func klMultivariateNormal(p, q MultivariateNormal) *graph.Node {
	bs, _ := broadcast(p.shape, q.shape)
	lq := with(q.ScaleTril, bs, 2)
	frob := ops.Sum(ops.Square(ops.TriangularSolve(lq, with(p.tril(), bs, 2), ops.TriangularOptions{})), -2, -1)
	m := mahalanobis(q.ScaleTril, ops.Sub(q.Loc, p.Loc), bs, p.n)
	t := ops.Scale(p.addConst(ops.Add(frob, m), -float64(p.n)), 0.5)
	return ops.Add(ops.Sub(q.halfLogDet(), p.halfLogDet()), t)
}

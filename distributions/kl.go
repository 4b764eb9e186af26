package distributions

import "github.com/nabla-go/nabla/graph"

// KL returns the Kullback–Leibler divergence KL(p‖q), elementwise over the
// broadcast of the batch shapes, for the pairs PyTorch registers among
// this package's families: each family with itself (Normal, Laplace,
// Uniform, Bernoulli, Categorical, Gamma, Beta, Dirichlet,
// MultivariateNormal), and the pairs of different families in klCross
// (Beta‖Gamma, Beta‖Normal, Gamma‖Normal, Uniform‖Normal, …, with +∞ where
// p's support is not inside q's, as PyTorch's). Another pair is an error
// naming both types.
func KL(p, q Distribution) *graph.Node {
	g, bad := klGraph(p, q)
	if bad != nil {
		return bad
	}
	switch p := p.(type) {
	case Categorical:
		if q, ok := q.(Categorical); ok && p.classes != q.classes {
			return fail(g, "KL", "p has %d classes, q %d", p.classes, q.classes)
		}
	case Dirichlet:
		if q, ok := q.(Dirichlet); ok && p.k != q.k {
			return fail(g, "KL", "p has %d categories, q %d", p.k, q.k)
		}
	case MultivariateNormal:
		if q, ok := q.(MultivariateNormal); ok && p.n != q.n {
			return fail(g, "KL", "p is of vectors of %d, q of %d", p.n, q.n)
		}
	}
	_, fp := batchOf(p)
	_, fq := batchOf(q)
	if kl, ok := klSame[fp]; ok && fp == fq {
		return kl(p, q)
	}
	if kl, ok := klCross[[2]string{fp, fq}]; ok {
		return kl(p, q)
	}
	return fail(g, "KL", "no divergence is registered for %T and %T", p, q)
}

// klSame holds each family's divergence from another of its family.
var klSame = map[string]func(p, q Distribution) *graph.Node{
	"Normal":      func(p, q Distribution) *graph.Node { return klNormal(p.(Normal), q.(Normal)) },
	"Laplace":     func(p, q Distribution) *graph.Node { return klLaplace(p.(Laplace), q.(Laplace)) },
	"Uniform":     func(p, q Distribution) *graph.Node { return klUniform(p.(Uniform), q.(Uniform)) },
	"Bernoulli":   func(p, q Distribution) *graph.Node { return klBernoulli(p.(Bernoulli), q.(Bernoulli)) },
	"Categorical": func(p, q Distribution) *graph.Node { return klCategorical(p.(Categorical), q.(Categorical)) },
	"Gamma":       func(p, q Distribution) *graph.Node { return klGamma(p.(Gamma), q.(Gamma)) },
	"Beta":        func(p, q Distribution) *graph.Node { return klBeta(p.(Beta), q.(Beta)) },
	"Dirichlet":   func(p, q Distribution) *graph.Node { return klDirichlet(p.(Dirichlet), q.(Dirichlet)) },
	"MultivariateNormal": func(p, q Distribution) *graph.Node {
		return klMultivariateNormal(p.(MultivariateNormal), q.(MultivariateNormal))
	},
}

// klGraph checks that p and q were made well, of one graph and dtype and of
// batch shapes that broadcast together.
func klGraph(p, q Distribution) (*graph.Graph, *graph.Node) {
	bp, fp := batchOf(p)
	bq, fq := batchOf(q)
	if fp == "" || fq == "" {
		return nil, fail(nil, "KL", "no divergence is registered for %T and %T", p, q)
	}
	if bad := bp.check(fp); bad != nil {
		return nil, bad
	}
	if bad := bq.check(fq); bad != nil {
		return nil, bad
	}
	switch _, ok := broadcast(bp.shape, bq.shape); {
	case bp.g != bq.g:
		return nil, fail(bp.g, "KL", "p and q belong to different graphs")
	case bp.dtype != bq.dtype:
		return nil, fail(bp.g, "KL", "p is %v, q %v: the dtypes differ", bp.dtype, bq.dtype)
	case !ok:
		return nil, fail(bp.g, "KL", "the batch shapes %s and %s do not broadcast together", graph.ShapeString(bp.shape), graph.ShapeString(bq.shape))
	}
	return bp.g, nil
}

// batchOf returns the batch and the family's name of one of this
// package's distributions ("" for another type).
func batchOf(d Distribution) (batch, string) {
	switch d := d.(type) {
	case Normal:
		return d.batch, "Normal"
	case Laplace:
		return d.batch, "Laplace"
	case Uniform:
		return d.batch, "Uniform"
	case Bernoulli:
		return d.batch, "Bernoulli"
	case Categorical:
		return d.batch, "Categorical"
	case Gamma:
		return d.batch, "Gamma"
	case Beta:
		return d.batch, "Beta"
	case Dirichlet:
		return d.batch, "Dirichlet"
	case StudentT:
		return d.batch, "StudentT"
	case MultivariateNormal:
		return d.batch, "MultivariateNormal"
	}
	return batch{}, ""
}

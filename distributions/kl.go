package distributions

import "github.com/nabla-go/nabla/graph"

// KL returns the Kullback–Leibler divergence KL(p‖q), elementwise over the
// broadcast of the batch shapes, for the pairs registered below (those
// PyTorch registers among this package's families): Normal‖Normal,
// Laplace‖Laplace, Uniform‖Uniform, Bernoulli‖Bernoulli,
// Categorical‖Categorical, Gamma‖Gamma, Beta‖Beta, Dirichlet‖Dirichlet and
// MultivariateNormal‖MultivariateNormal. Another pair is an error naming
// both types.
func KL(p, q Distribution) *graph.Node {
	g, bad := klGraph(p, q)
	if bad != nil {
		return bad
	}
	switch p := p.(type) {
	case Normal:
		if q, ok := q.(Normal); ok {
			return klNormal(p, q)
		}
	case Laplace:
		if q, ok := q.(Laplace); ok {
			return klLaplace(p, q)
		}
	case Uniform:
		if q, ok := q.(Uniform); ok {
			return klUniform(p, q)
		}
	case Bernoulli:
		if q, ok := q.(Bernoulli); ok {
			return klBernoulli(p, q)
		}
	case Categorical:
		if q, ok := q.(Categorical); ok {
			if p.classes != q.classes {
				return fail(g, "KL", "p has %d classes, q %d", p.classes, q.classes)
			}
			return klCategorical(p, q)
		}
	case Gamma:
		if q, ok := q.(Gamma); ok {
			return klGamma(p, q)
		}
	case Beta:
		if q, ok := q.(Beta); ok {
			return klBeta(p, q)
		}
	case Dirichlet:
		if q, ok := q.(Dirichlet); ok {
			if p.k != q.k {
				return fail(g, "KL", "p has %d categories, q %d", p.k, q.k)
			}
			return klDirichlet(p, q)
		}
	case MultivariateNormal:
		if q, ok := q.(MultivariateNormal); ok {
			if p.n != q.n {
				return fail(g, "KL", "p is of vectors of %d, q of %d", p.n, q.n)
			}
			return klMultivariateNormal(p, q)
		}
	}
	return fail(g, "KL", "no divergence is registered for %T and %T", p, q)
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

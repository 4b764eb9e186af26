package optimize

import (
	"errors"

	"github.com/nabla-go/nabla/graph"
)

// Problem is a function given as plain Go functions, for MinimizeFunc.
type Problem struct {
	// FuncGrad returns f(x) and writes ∇f(x) into grad. A value or gradient
	// that is not finite marks x outside f's domain. Required.
	FuncGrad func(grad, x []float64) float64
	// Hess writes the Hessian at x into hess, n×n row-major. Newton needs it.
	Hess func(hess, x []float64)
	// HessVec writes H(x)·v into hv. NewtonCG needs it.
	HessVec func(hv, x, v []float64)
}

// MinimizeFunc minimises p's function by method from x0, which it does not
// modify. Misuse (a missing function the method needs, an empty x0, a
// value that is not finite at x0, a bad option) is an error named
// "optimize.MinimizeFunc" with the caller's file:line.
func MinimizeFunc(p Problem, x0 []float64, method Method, opts ...Option) (Result, error) {
	site := graph.CallerSite()
	fail := func(err error) (Result, error) { return Result{}, callError("optimize.MinimizeFunc", site, err) }
	s, err := newSettings(opts)
	switch {
	case err != nil:
		return fail(err)
	case s.feeds != nil:
		return fail(errors.New("WithFeeds is for Minimize's graphs: a Problem's functions take no feeds"))
	case len(x0) == 0:
		return fail(errors.New("x0 is empty"))
	case p.FuncGrad == nil:
		return fail(errors.New("Problem.FuncGrad is nil"))
	case method == Newton && p.Hess == nil:
		return fail(errors.New("Newton needs Problem.Hess, which is nil"))
	case method == NewtonCG && p.HessVec == nil:
		return fail(errors.New("NewtonCG needs Problem.HessVec, which is nil"))
	}
	r, err := minimize(funcObjective(p), x0, method, s)
	if err != nil {
		return r, callError("optimize.MinimizeFunc", site, err)
	}
	return r, nil
}

// funcObjective is a Problem as an objective.
type funcObjective Problem

func (p funcObjective) funcGrad(grad, x []float64) (float64, error) { return p.FuncGrad(grad, x), nil }

func (p funcObjective) hess(h, x []float64) error {
	p.Hess(h, x)
	return nil
}

func (p funcObjective) hessVec(hv, x, v []float64) error {
	p.HessVec(hv, x, v)
	return nil
}

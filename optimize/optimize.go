package optimize

import (
	"errors"
	"fmt"
	"math"

	"github.com/nabla-go/nabla/vm"
)

// Method is a minimisation algorithm.
type Method int

// The methods. Each searches along its direction with the strong-Wolfe line
// search (c₁ = 10⁻⁴, c₂ = 0.9), trying a unit step first.
const (
	// LBFGS is limited-memory BFGS: the inverse Hessian is approximated
	// from the last few steps and gradient changes (WithMemory, 10 by
	// default). It needs gradients only.
	LBFGS Method = iota + 1
	// Newton steps along −H⁻¹∇f with the exact Hessian H, adding a
	// multiple of the identity to H until its Cholesky factorisation
	// succeeds where H is not positive-definite.
	Newton
	// NewtonCG solves H·p = −∇f approximately by conjugate gradients on
	// Hessian–vector products, stopping at a relative residual of
	// min(0.5, √‖∇f‖) or at the first direction of negative curvature; the
	// Hessian is never formed.
	NewtonCG
)

// String is the method's name: "LBFGS", "Newton" or "NewtonCG".
func (m Method) String() string {
	switch m {
	case LBFGS:
		return "LBFGS"
	case Newton:
		return "Newton"
	case NewtonCG:
		return "NewtonCG"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Status says why a run ended.
type Status int

// The ways a run ends.
const (
	// Converged: the gradient's largest element is at most the tolerance.
	Converged Status = iota
	// IterationLimit: the run took the most iterations allowed.
	IterationLimit
	// LineSearchFailed: no step along the search direction met the strong
	// Wolfe conditions, in general because the function's values no longer
	// differ in floating point (SciPy's "precision loss").
	LineSearchFailed
	// Stopped: the callback asked to stop.
	Stopped
	// Failed: evaluating the Hessian failed at an iterate; Minimize returns
	// the error with the result so far.
	Failed
)

// String is the status's message, in SciPy's words where SciPy has them.
func (s Status) String() string {
	switch s {
	case Converged:
		return "Optimization terminated successfully."
	case IterationLimit:
		return "Maximum number of iterations has been exceeded."
	case LineSearchFailed:
		return "Desired error not necessarily achieved due to precision loss."
	case Stopped:
		return "Stopped by the callback."
	case Failed:
		return "Evaluation failed."
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Result is where a run ended and how it got there.
type Result struct {
	X          []float64 // the last iterate, x's elements in row-major order
	F          float64   // f(X)
	Grad       []float64 // ∇f(X)
	GradNorm   float64   // the largest |∇f(X)ᵢ|, the norm the tolerance applies to
	Iterations int       // steps taken
	FuncEvals  int       // evaluations of f, each with its gradient
	HessEvals  int       // Hessians (Newton) or Hessian–vector products (NewtonCG)
	Converged  bool      // Status == Converged
	Status     Status
	Message    string // Status's message, with the line search's reason if it failed
}

// Iteration is what a callback sees after each step.
type Iteration struct {
	Iteration int       // 1 after the first step
	X         []float64 // the new iterate (the callback must not keep it)
	F         float64   // f(X)
	GradNorm  float64   // the largest |∇f(X)ᵢ|
	Step      float64   // the line search's step length α along the direction
	// HessianShift is the τ ≥ 0 Newton added to the Hessian's diagonal to
	// make it positive-definite for this step (0 where it already was).
	HessianShift float64
	FuncEvals    int // so far
	HessEvals    int // so far
}

// Option sets a setting of a run.
type Option func(*settings)

type settings struct {
	gradTol  float64
	maxIter  int
	memory   int
	callback func(Iteration) bool
	feeds    vm.Feeds
	err      error
}

// Defaults of the options.
const (
	DefaultGradTol       = 1e-8 // Optim.jl's g_abstol
	DefaultMaxIterations = 1000
	DefaultMemory        = 10 // L-BFGS's pairs, as SciPy's maxcor
)

// WithGradTol stops the run once every |∇f(x)ᵢ| ≤ tol (tol > 0;
// DefaultGradTol otherwise).
func WithGradTol(tol float64) Option {
	return func(s *settings) {
		if !(tol > 0) || math.IsInf(tol, 1) {
			s.fail(fmt.Errorf("WithGradTol: tolerance %v is not in (0, +Inf)", tol))
		}
		s.gradTol = tol
	}
}

// WithMaxIterations stops the run after n steps (n ≥ 0;
// DefaultMaxIterations otherwise).
func WithMaxIterations(n int) Option {
	return func(s *settings) {
		if n < 0 {
			s.fail(fmt.Errorf("WithMaxIterations: %d is negative", n))
		}
		s.maxIter = n
	}
}

// WithMemory sets how many steps L-BFGS remembers (m ≥ 1; DefaultMemory
// otherwise). Other methods ignore it.
func WithMemory(m int) Option {
	return func(s *settings) {
		if m < 1 {
			s.fail(fmt.Errorf("WithMemory: %d steps: want at least 1", m))
		}
		s.memory = m
	}
}

// WithCallback calls f after every step; the run stops, with status
// Stopped, when f returns true.
func WithCallback(f func(Iteration) (stop bool)) Option {
	return func(s *settings) { s.callback = f }
}

func (s *settings) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func newSettings(opts []Option) (settings, error) {
	s := settings{gradTol: DefaultGradTol, maxIter: DefaultMaxIterations, memory: DefaultMemory}
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	return s, s.err
}

// objective is a function with its derivatives at a point; an error or a
// value that is not finite says the point is outside its domain.
type objective interface {
	// funcGrad returns f(x) and writes ∇f(x) into grad.
	funcGrad(grad, x []float64) (float64, error)
	// hess writes the n×n Hessian at x into h, row-major.
	hess(h, x []float64) error
	// hessVec writes H(x)·v into hv.
	hessVec(hv, x, v []float64) error
}

// errLineSearch is the line search's failure.
var errLineSearch = errors.New("the line search found no step satisfying the strong Wolfe conditions")

// counted counts an objective's evaluations.
type counted struct {
	objective
	funcEvals, hessEvals int
}

func (c *counted) funcGrad(grad, x []float64) (float64, error) {
	c.funcEvals++
	return c.objective.funcGrad(grad, x)
}

func (c *counted) hess(h, x []float64) error {
	c.hessEvals++
	return c.objective.hess(h, x)
}

func (c *counted) hessVec(hv, x, v []float64) error {
	c.hessEvals++
	return c.objective.hessVec(hv, x, v)
}

// searcher gives the descent directions of one method.
type searcher interface {
	// direction writes the search direction at x (with gradient g) into p
	// and returns the first step to try and Newton's diagonal shift.
	direction(p, x, g []float64, iter int) (alpha0, shift float64, err error)
	// update tells the searcher the step s taken and the gradient's change y.
	update(s, y []float64)
}

// checkMethod says whether m is one of the methods.
func checkMethod(m Method) error {
	if m < LBFGS || m > NewtonCG {
		return fmt.Errorf("unknown method %v: want LBFGS, Newton or NewtonCG", m)
	}
	return nil
}

func newSearcher(method Method, obj objective, n int, s settings) searcher {
	switch method {
	case Newton:
		return newNewton(obj, n)
	case NewtonCG:
		return newNewtonCG(obj, n)
	}
	return newLBFGS(n, s.memory)
}

// minimize minimises obj from x0 by method.
func minimize(obj objective, x0 []float64, method Method, s settings) (Result, error) {
	n := len(x0)
	if err := checkMethod(method); err != nil {
		return Result{}, err
	}
	c := &counted{objective: obj}
	dir := newSearcher(method, c, n, s)
	x, g := append([]float64(nil), x0...), make([]float64, n)
	f, err := c.funcGrad(g, x)
	if err != nil {
		return Result{}, fmt.Errorf("at the start: %w", err)
	}
	if bad := notFinite(f, g); bad != "" {
		return Result{}, fmt.Errorf("%s at the start x0 = %v", bad, x0)
	}
	var r Result
	finish := func(st Status, why string) Result {
		r.X, r.F, r.Grad, r.GradNorm = x, f, g, infNorm(g)
		r.FuncEvals, r.HessEvals = c.funcEvals, c.hessEvals
		r.Status, r.Converged, r.Message = st, st == Converged, st.String()
		if why != "" {
			r.Message += " (" + why + ")"
		}
		return r
	}
	p, xt, gt := make([]float64, n), make([]float64, n), make([]float64, n)
	step, dg := make([]float64, n), make([]float64, n)
	var lastErr error
	phi := func(alpha float64) (fa, da float64) {
		for i := range xt {
			xt[i] = x[i] + alpha*p[i]
		}
		ft, err := c.funcGrad(gt, xt)
		switch {
		case err != nil:
			lastErr = err
			return math.Inf(1), math.NaN()
		case notFinite(ft, gt) != "":
			return math.Inf(1), math.NaN()
		}
		return ft, dot(gt, p)
	}
	for {
		if infNorm(g) <= s.gradTol {
			return finish(Converged, ""), nil
		}
		if r.Iterations == s.maxIter {
			return finish(IterationLimit, ""), nil
		}
		alpha0, shift, err := dir.direction(p, x, g, r.Iterations)
		if err != nil {
			return finish(Failed, err.Error()), err
		}
		d0 := dot(g, p)
		if !(d0 < 0) { // not a descent direction (rounding): fall back on −∇f
			for i := range p {
				p[i] = -g[i]
			}
			d0 = -dot(g, g)
		}
		lastErr = nil
		pt, err := lineSearch(phi, linePoint{f: f, d: d0}, alpha0, strongWolfe)
		if err != nil {
			why := err.Error()
			if lastErr != nil {
				why += "; the last evaluation failed: " + lastErr.Error()
			}
			return finish(LineSearchFailed, why), nil
		}
		// The line search's last evaluation was at the step it returns.
		for i := range x {
			step[i], dg[i] = xt[i]-x[i], gt[i]-g[i]
		}
		copy(x, xt)
		copy(g, gt)
		f = pt.f
		dir.update(step, dg)
		r.Iterations++
		if s.callback != nil && s.callback(Iteration{
			Iteration: r.Iterations, X: x, F: f, GradNorm: infNorm(g), Step: pt.alpha,
			HessianShift: shift, FuncEvals: c.funcEvals, HessEvals: c.hessEvals,
		}) {
			return finish(Stopped, ""), nil
		}
	}
}

// notFinite says what is not finite in f and its gradient, or "".
func notFinite(f float64, g []float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Sprintf("the function's value is %v", f)
	}
	if i := firstNotFinite(g); i >= 0 {
		return fmt.Sprintf("the gradient's element %d is %v", i, g[i])
	}
	return ""
}

// firstNotFinite is the index of v's first NaN or infinity, or −1.
func firstNotFinite(v []float64) int {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return i
		}
	}
	return -1
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func infNorm(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

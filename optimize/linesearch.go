package optimize

import "math"

// linePoint is φ(α) = f(x + α·p) and its derivative φ'(α) = ∇f(x + α·p)·p.
type linePoint struct{ alpha, f, d float64 }

// wolfeConstants are the constants of the strong Wolfe conditions:
// sufficient decrease φ(α) ≤ φ(0) + c₁·α·φ'(0) and curvature
// |φ'(α)| ≤ c₂·|φ'(0)|, 0 < c₁ < c₂ < 1.
type wolfeConstants struct{ c1, c2 float64 }

// strongWolfe are the constants of quasi-Newton and Newton methods (Nocedal
// and Wright, §3.1; SciPy's and Optim.jl's defaults).
var strongWolfe = wolfeConstants{c1: 1e-4, c2: 0.9}

// The line search's limits: steps tried while bracketing (each double the
// last) and while zooming into a bracket.
const (
	maxBracketSteps = 50
	maxZoomSteps    = 60
)

// lineSearch finds a step α > 0 satisfying the strong Wolfe conditions for
// φ, starting from the trial step alpha1, by Nocedal and Wright's
// Algorithm 3.5 (bracketing, doubling the step) and Algorithm 3.6 (zoom,
// by safeguarded cubic interpolation); where φ is flat to rounding, the
// sufficient decrease may be Hager and Zhang's approximate one (CG_DESCENT,
// 2005), as in Optim.jl's default line search. at0 holds φ(0) and φ'(0) < 0. phi
// returns +Inf for a point outside the function's domain. On success, the
// last call of phi was at the step returned.
func lineSearch(phi func(alpha float64) (f, d float64), at0 linePoint, alpha1 float64, c wolfeConstants) (linePoint, error) {
	eval := func(alpha float64) linePoint {
		f, d := phi(alpha)
		return linePoint{alpha: alpha, f: f, d: d}
	}
	// Sufficient decrease, or Hager and Zhang's approximate form of it
	// (2c₁ − 1)·φ'(0) ≥ φ'(α) where φ(α) is within rounding of φ(0): near a
	// minimum f's values differ by less than their rounding errors, and
	// only the slope still tells a better point.
	decreases := func(p linePoint) bool {
		return p.f <= at0.f+c.c1*p.alpha*at0.d ||
			(math.Abs(p.f-at0.f) <= flatness*math.Abs(at0.f) && p.d <= (2*c.c1-1)*at0.d)
	}
	curved := func(p linePoint) bool { return math.Abs(p.d) <= -c.c2*at0.d }
	zoom := func(lo, hi linePoint) (linePoint, error) {
		for range maxZoomSteps {
			if math.Abs(hi.alpha-lo.alpha) <= 4*epsilon*math.Max(lo.alpha, hi.alpha) {
				break // the bracket holds no other float
			}
			p := eval(interpolate(lo, hi))
			// Algorithm 3.6 moves hi where φ(α) ≥ φ(lo); where the two are
			// equal, the values have lost all precision (a flat minimum)
			// and only the slope tells: p replaces lo.
			if !decreases(p) || p.f > lo.f {
				hi = p
				continue
			}
			if curved(p) {
				return p, nil
			}
			if p.d*(hi.alpha-lo.alpha) >= 0 {
				hi = lo
			}
			lo = p
		}
		return linePoint{}, errLineSearch
	}
	prev, alpha := at0, alpha1
	for i := range maxBracketSteps {
		p := eval(alpha)
		if !decreases(p) || (i > 0 && p.f >= prev.f) {
			return zoom(prev, p)
		}
		if curved(p) {
			return p, nil
		}
		if p.d >= 0 {
			return zoom(p, prev)
		}
		prev, alpha = p, 2*alpha
	}
	return linePoint{}, errLineSearch
}

// flatness is the relative change in f within which values are taken to
// be rounding (Hager and Zhang's ε, there 10⁻⁶; here well above the
// rounding of a value computed through an n×n factorisation and well below
// any change an optimiser needs to see).
const flatness = 1e-10

// epsilon is float64's machine epsilon.
const epsilon = 0x1p-52

// interpolate returns the minimiser of the cubic through lo and hi (their
// values and slopes; Nocedal and Wright, eq. 3.59), kept a tenth of the
// interval away from its ends so that the bracket shrinks by a tenth at
// least; the midpoint where there is no such minimiser (hi outside the
// domain, or a cubic with no minimum).
func interpolate(lo, hi linePoint) float64 {
	a, b := lo, hi
	mid := (a.alpha + b.alpha) / 2
	if math.IsInf(b.f, 0) || math.IsNaN(b.d) {
		return mid
	}
	d1 := a.d + b.d - 3*(a.f-b.f)/(a.alpha-b.alpha)
	disc := d1*d1 - a.d*b.d
	if disc < 0 {
		return mid
	}
	d2 := math.Copysign(math.Sqrt(disc), b.alpha-a.alpha)
	t := b.alpha - (b.alpha-a.alpha)*(b.d+d2-d1)/(b.d-a.d+2*d2)
	left, right := math.Min(a.alpha, b.alpha), math.Max(a.alpha, b.alpha)
	margin := 0.1 * (right - left)
	if math.IsNaN(t) {
		return mid
	}
	return math.Min(math.Max(t, left+margin), right-margin)
}

package optimize

import "math"

// lbfgs keeps the last m steps sᵢ and gradient changes yᵢ and applies the
// inverse-Hessian approximation they define by the two-loop recursion
// (Nocedal and Wright, Algorithm 7.4), scaled by γ = sᵀy/yᵀy of the latest
// pair (their eq. 7.20).
type lbfgs struct {
	s, y  [][]float64 // a ring of the last pairs, oldest first from next
	rho   []float64   // 1/(yᵢᵀsᵢ)
	alpha []float64
	next  int // the ring's slot the next pair takes
	count int // pairs held
}

func newLBFGS(n, m int) *lbfgs {
	l := &lbfgs{s: make([][]float64, m), y: make([][]float64, m), rho: make([]float64, m), alpha: make([]float64, m)}
	for i := range m {
		l.s[i], l.y[i] = make([]float64, n), make([]float64, n)
	}
	return l
}

// direction is −H·g. The first step, along −g, tries α = min(1, 1/‖g‖₂)
// as SciPy's L-BFGS-B does, since −g has no natural scale.
func (l *lbfgs) direction(p, _, g []float64, _ int) (alpha0, shift float64, err error) {
	for i, v := range g {
		p[i] = -v
	}
	m := len(l.s)
	if l.count == 0 {
		return math.Min(1, 1/math.Sqrt(dot(g, g))), 0, nil
	}
	k := l.next - 1
	for range l.count { // newest to oldest
		k = (k + m) % m
		l.alpha[k] = l.rho[k] * dot(l.s[k], p)
		axpy(-l.alpha[k], l.y[k], p)
		k--
	}
	newest := (l.next - 1 + m) % m
	scale(dot(l.s[newest], l.y[newest])/dot(l.y[newest], l.y[newest]), p)
	k = (l.next - l.count + m) % m
	for range l.count { // oldest to newest
		beta := l.rho[k] * dot(l.y[k], p)
		axpy(l.alpha[k]-beta, l.s[k], p)
		k = (k + 1) % m
	}
	return 1, 0, nil
}

// update keeps the pair unless its curvature sᵀy is not clearly positive
// (the strong Wolfe conditions make it positive; rounding may not).
func (l *lbfgs) update(s, y []float64) {
	sy := dot(s, y)
	if !(sy > 1e-10*math.Sqrt(dot(s, s)*dot(y, y))) {
		return
	}
	copy(l.s[l.next], s)
	copy(l.y[l.next], y)
	l.rho[l.next] = 1 / sy
	l.next = (l.next + 1) % len(l.s)
	l.count = min(l.count+1, len(l.s))
}

// axpy is y += a·x.
func axpy(a float64, x, y []float64) {
	for i, v := range x {
		y[i] += a * v
	}
}

// scale is x *= a.
func scale(a float64, x []float64) {
	for i := range x {
		x[i] *= a
	}
}

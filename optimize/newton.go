package optimize

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// newton gives Newton directions −(H + τI)⁻¹g with the exact Hessian H and
// the least τ ≥ 0 of the sequence of Nocedal and Wright's Algorithm 3.3
// for which the Cholesky factorisation succeeds.
type newton struct {
	obj  objective
	h    []float64
	a    *mat.SymDense
	chol mat.Cholesky
	p    mat.VecDense
}

func newNewton(obj objective, n int) *newton {
	return &newton{obj: obj, h: make([]float64, n*n), a: mat.NewSymDense(n, nil)}
}

// shiftFloor is Algorithm 3.3's β relative to the Hessian's largest
// diagonal element: the first shift tried where H is not positive-definite.
const shiftFloor = 1e-3

func (nt *newton) direction(p, x, g []float64, _ int) (alpha0, shift float64, err error) {
	n := len(x)
	if err := nt.obj.hess(nt.h, x); err != nil {
		return 0, 0, fmt.Errorf("the Hessian: %w", err)
	}
	minDiag, maxDiag := math.Inf(1), 0.0
	for i := range n {
		d := nt.h[i*n+i]
		minDiag, maxDiag = math.Min(minDiag, d), math.Max(maxDiag, math.Abs(d))
	}
	if i := firstNotFinite(nt.h); i >= 0 {
		return 0, 0, fmt.Errorf("the Hessian's element (%d, %d) is %v", i/n, i%n, nt.h[i])
	}
	beta := shiftFloor * math.Max(maxDiag, 1e-8)
	tau := 0.0
	if minDiag <= 0 {
		tau = beta - minDiag
	}
	for {
		for i := range n {
			for j := i; j < n; j++ {
				v := (nt.h[i*n+j] + nt.h[j*n+i]) / 2 // symmetric up to rounding
				if i == j {
					v += tau
				}
				nt.a.SetSym(i, j, v)
			}
		}
		if nt.chol.Factorize(nt.a) {
			break
		}
		tau = math.Max(2*tau, beta)
	}
	if err := nt.chol.SolveVecTo(&nt.p, mat.NewVecDense(n, g)); err != nil {
		// Only a near-singular factor (a condition-number warning) gets here;
		// its solution is still the best direction there is.
		if _, ok := err.(mat.Condition); !ok {
			return 0, 0, err
		}
	}
	for i := range p {
		p[i] = -nt.p.AtVec(i)
	}
	return 1, tau, nil
}

func (*newton) update(_, _ []float64) {}

// newtonCG gives directions from conjugate gradients on H·p = −g, truncated
// (Nocedal and Wright, Algorithm 7.1): it stops at a residual below
// min(0.5, √‖g‖)·‖g‖, or at a direction of non-positive curvature, with
// the iterate so far (−g if it is the first).
type newtonCG struct {
	obj          objective
	z, r, d, hd  []float64
	maxCGPerStep int
}

func newNewtonCG(obj objective, n int) *newtonCG {
	v := func() []float64 { return make([]float64, n) }
	// SciPy allows 20n conjugate-gradient steps; in exact arithmetic n suffice.
	return &newtonCG{obj: obj, z: v(), r: v(), d: v(), hd: v(), maxCGPerStep: 20 * n}
}

func (cg *newtonCG) direction(p, x, g []float64, _ int) (alpha0, shift float64, err error) {
	gNorm := math.Sqrt(dot(g, g))
	tol := math.Min(0.5, math.Sqrt(gNorm)) * gNorm
	for i, v := range g {
		cg.z[i], cg.r[i], cg.d[i] = 0, v, -v
	}
	rr := gNorm * gNorm
	for j := range cg.maxCGPerStep {
		if err := cg.obj.hessVec(cg.hd, x, cg.d); err != nil {
			return 0, 0, fmt.Errorf("a Hessian–vector product: %w", err)
		}
		curvature := dot(cg.d, cg.hd)
		if !(curvature > 0) {
			if j == 0 {
				copy(p, cg.d) // −g
				return 1, 0, nil
			}
			break
		}
		a := rr / curvature
		axpy(a, cg.d, cg.z)
		axpy(a, cg.hd, cg.r)
		rrNext := dot(cg.r, cg.r)
		if math.Sqrt(rrNext) < tol {
			break
		}
		beta := rrNext / rr
		rr = rrNext
		for i, v := range cg.r {
			cg.d[i] = -v + beta*cg.d[i]
		}
	}
	copy(p, cg.z)
	return 1, 0, nil
}

func (*newtonCG) update(_, _ []float64) {}

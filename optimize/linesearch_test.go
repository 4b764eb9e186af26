package optimize

import (
	"fmt"
	"math"
	"testing"
)

// The test functions of Moré and Thuente, "Line search algorithms with
// guaranteed sufficient decrease" (1994), §5: φ and φ' of α ≥ 0, each with
// φ'(0) < 0.
var lineFunctions = []struct {
	name string
	phi  func(a float64) (f, d float64)
}{
	{"MT1 −α/(α²+2)", func(a float64) (float64, float64) {
		const b = 2.0
		return -a / (a*a + b), (a*a - b) / ((a*a + b) * (a*a + b))
	}},
	{"MT2 (α+0.004)⁵ − 2(α+0.004)⁴", func(a float64) (float64, float64) {
		const b = 0.004
		return math.Pow(a+b, 5) - 2*math.Pow(a+b, 4), 5*math.Pow(a+b, 4) - 8*math.Pow(a+b, 3)
	}},
	{"MT3 φ₀ + 2(1−β)/(39π)·sin(39πα/2)", func(a float64) (float64, float64) {
		const b, l = 0.01, 39.0
		f0, d0 := (a-1)*(a-1)/(2*b)+b/2, (a-1)/b
		if a <= 1-b {
			f0, d0 = 1-a, -1
		} else if a >= 1+b {
			f0, d0 = a-1, 1
		}
		return f0 + 2*(1-b)/(l*math.Pi)*math.Sin(l*math.Pi*a/2), d0 + (1-b)*math.Cos(l*math.Pi*a/2)
	}},
	{"Rosenbrock from (−1.2, 1) along −∇f", func(a float64) (float64, float64) {
		var g [2]float64
		rosenbrockProblem.FuncGrad(g[:], []float64{-1.2, 1})
		p := []float64{-g[0], -g[1]}
		x := []float64{-1.2 + a*p[0], 1 + a*p[1]}
		var gx [2]float64
		f := rosenbrockProblem.FuncGrad(gx[:], x)
		return f, dot(gx[:], p)
	}},
}

// TestLineSearchStrongWolfe checks every step the line search returns
// against the strong Wolfe conditions, computed here afresh, for Moré and
// Thuente's functions and constants and for the methods' own, from first
// trial steps 10⁻³ to 10³ apart; and that its last evaluation was at the
// step returned (the minimiser reuses that evaluation's gradient).
func TestLineSearchStrongWolfe(t *testing.T) {
	for _, fn := range lineFunctions {
		for _, c := range []wolfeConstants{{0.001, 0.1}, {1e-4, 0.9}, {0.1, 0.1}} {
			for _, alpha1 := range []float64{1e-3, 1e-1, 1, 10, 1e3} {
				name := fmt.Sprintf("%s c=%v α₁=%v", fn.name, c, alpha1)
				f0, d0 := fn.phi(0)
				var last float64
				evals := 0
				phi := func(a float64) (float64, float64) {
					last = a
					evals++
					return fn.phi(a)
				}
				p, err := lineSearch(phi, linePoint{f: f0, d: d0}, alpha1, c)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				f, d := fn.phi(p.alpha)
				switch {
				case !(p.alpha > 0) || p.f != f || p.d != d || last != p.alpha:
					t.Errorf("%s: returned α=%v φ=%v φ'=%v, last evaluated at %v: want φ(α)=%v φ'(α)=%v", name, p.alpha, p.f, p.d, last, f, d)
				case !(f <= f0+c.c1*p.alpha*d0):
					t.Errorf("%s: α=%v: φ(α)=%v above φ(0)+c₁αφ'(0)=%v", name, p.alpha, f, f0+c.c1*p.alpha*d0)
				case !(math.Abs(d) <= c.c2*math.Abs(d0)):
					t.Errorf("%s: α=%v: |φ'(α)|=%v above c₂|φ'(0)|=%v", name, p.alpha, math.Abs(d), c.c2*math.Abs(d0))
				case evals > 20: // doubling from 10⁻³ alone takes 11 to pass 1.6, MT2's minimiser
					t.Errorf("%s: %d evaluations", name, evals)
				}
			}
		}
	}
}

// TestLineSearchDomain gives a φ that is +Inf past α = 0.3 (outside the
// function's domain) and whose minimum, at 0.25, is near that edge.
func TestLineSearchDomain(t *testing.T) {
	phi := func(a float64) (float64, float64) {
		if a > 0.3 {
			return math.Inf(1), math.NaN()
		}
		return (a - 0.25) * (a - 0.25), 2 * (a - 0.25)
	}
	f0, d0 := phi(0)
	p, err := lineSearch(phi, linePoint{f: f0, d: d0}, 1, strongWolfe)
	if err != nil || !(p.alpha > 0 && p.alpha <= 0.3) || math.Abs(p.d) > 0.9*math.Abs(d0) {
		t.Errorf("got α=%v φ'=%v, %v: want a strong Wolfe step in (0, 0.3]", p.alpha, p.d, err)
	}
	// Nothing but +Inf beyond 0: the search must give up, not loop.
	_, err = lineSearch(func(float64) (float64, float64) { return math.Inf(1), math.NaN() }, linePoint{f: 1, d: -1}, 1, strongWolfe)
	if err != errLineSearch {
		t.Errorf("a φ infinite everywhere: got %v, want %v", err, errLineSearch)
	}
}

// TestFlatNearTheMinimum minimises 10³ + Σ cosh(xᵢ − i), computed with
// rounding noise of 10⁻¹¹ (relative 10⁻¹⁴, as a value computed through a
// large factorisation may have), to a gradient of 10⁻¹⁰: the last steps
// change f by less than the noise, so only the slope can accept them (the
// approximate sufficient decrease).
func TestFlatNearTheMinimum(t *testing.T) {
	p := Problem{
		FuncGrad: func(grad, x []float64) float64 {
			f, sum := 1e3, 0.0
			for i, v := range x {
				f += math.Cosh(v - float64(i))
				grad[i] = math.Sinh(v - float64(i))
				sum += v
			}
			return f + 1e-11*math.Sin(1e13*sum)
		},
		Hess: func(h, x []float64) {
			clear(h)
			for i, v := range x {
				h[i*len(x)+i] = math.Cosh(v - float64(i))
			}
		},
		HessVec: func(hv, x, v []float64) {
			for i := range x {
				hv[i] = math.Cosh(x[i]-float64(i)) * v[i]
			}
		},
	}
	for _, m := range methods {
		r, err := MinimizeFunc(p, []float64{2, -1, 0.5}, m, WithGradTol(1e-10))
		if err != nil || !r.Converged {
			t.Errorf("case %v: %s, %v", m, r.Message, err)
		}
	}
}

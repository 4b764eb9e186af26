package optimize

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// quadratic is a strictly convex ½xᵀAx − bᵀx in n dimensions, A = MMᵀ + I
// of a seeded random M, with its minimiser A⁻¹b from gonum.
type quadratic struct {
	n    int
	a, b []float64
	min  []float64
}

func newQuadratic(t *testing.T, n int) quadratic {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 1))
	m := mat.NewDense(n, n, nil)
	b := make([]float64, n)
	for i := range n {
		b[i] = rng.Float64()*2 - 1
		for j := range n {
			m.Set(i, j, rng.Float64()*2-1)
		}
	}
	var a mat.Dense
	a.Mul(m, m.T())
	for i := range n {
		a.Set(i, i, a.At(i, i)+1)
	}
	var x mat.VecDense
	if err := x.SolveVec(&a, mat.NewVecDense(n, b)); err != nil {
		t.Fatal(err)
	}
	return quadratic{n: n, a: a.RawMatrix().Data, b: b, min: x.RawVector().Data}
}

// build is the quadratic of x, a parameter of shape (n, 1).
func (q quadratic) build(x *graph.Node) *graph.Node {
	g := x.Graph()
	a, _ := graph.FromFloat64s(graph.Float64, q.a, q.n, q.n)
	b, _ := graph.FromFloat64s(graph.Float64, q.b, q.n, 1)
	ax := ops.MatMul(g.Const(a), x)
	return ops.Sub(ops.Scale(ops.Sum(ops.Mul(x, ax)), 0.5), ops.Sum(ops.Mul(g.Const(b), x)))
}

func TestQuadratic(t *testing.T) {
	const n = 6
	q := newQuadratic(t, n)
	for _, c := range []struct {
		method Method
		// firstHessEvals is the most Hessian–vector products the first
		// step may take (NewtonCG: CG ends within n steps in exact
		// arithmetic).
		maxIterations, firstHessEvals int
	}{{Newton, 1, 1}, {NewtonCG, 10, n}, {LBFGS, 30, 0}} {
		g := graph.New()
		x := g.Param("x", graph.NewDense(graph.Float64, n, 1))
		var first int
		r, err := Minimize(q.build(x), x, c.method, WithGradTol(1e-9), WithCallback(func(it Iteration) bool {
			if it.Iteration == 1 {
				first = it.HessEvals
			}
			return false
		}))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Converged || r.Iterations > c.maxIterations || first > c.firstHessEvals {
			t.Errorf("case %v: %d iterations, %d Hessian evaluations in the first (%s): want at most %d and %d",
				c.method, r.Iterations, first, r.Message, c.maxIterations, c.firstHessEvals)
		}
		for i, v := range r.X {
			if math.Abs(v-q.min[i]) > 1e-8 {
				t.Errorf("case %v: x[%d] = %v, want %v", c.method, i, v, q.min[i])
			}
		}
	}
}

// doubleWell is x⁴/4 − x²/2 + y²/2: minima at (±1, 0), a saddle at the
// origin, and a Hessian diag(3x² − 1, 1) indefinite for |x| < 1/√3.
func doubleWell(p *graph.Node) *graph.Node {
	x, y := ops.Slice(p, 0, 0, 1), ops.Slice(p, 0, 1, 2)
	return ops.Sum(ops.Add(ops.Sub(ops.Scale(ops.PowConst(x, 4), 0.25), ops.Scale(ops.Square(x), 0.5)),
		ops.Scale(ops.Square(y), 0.5)))
}

// TestNewtonModifiesAnIndefiniteHessian starts where the Hessian is
// indefinite: the plain Newton step, −H⁻¹∇f, would head for the saddle;
// the modified one must shift H and go downhill to a minimum.
func TestNewtonModifiesAnIndefiniteHessian(t *testing.T) {
	f, x := param(t, []float64{0.1, 1}, doubleWell)
	var shifts []float64
	r, err := Minimize(f, x, Newton, WithCallback(func(it Iteration) bool {
		shifts = append(shifts, it.HessianShift)
		return false
	}))
	if err != nil {
		t.Fatal(err)
	}
	// At (0.1, 1) H = diag(−0.97, 1): Algorithm 3.3's first shift is
	// β − min Hᵢᵢ = 10⁻³ + 0.97, and it succeeds.
	if len(shifts) == 0 || math.Abs(shifts[0]-(0.97+1e-3)) > 1e-12 {
		t.Errorf("shifts %v: want the first 0.971", shifts)
	}
	if last := shifts[len(shifts)-1]; last != 0 {
		t.Errorf("the last shift is %v, want 0 near the minimum", last)
	}
	if !r.Converged || math.Abs(r.X[0]-1) > 1e-8 || math.Abs(r.X[1]) > 1e-8 {
		t.Errorf("ended at %v (%s), want (1, 0)", r.X, r.Message)
	}
}

// TestDomain minimises Σ xᵢ − log xᵢ (minimum at xᵢ = 1) from a point
// whose unit steps leave the domain x > 0: the line search must step back
// from the NaN of log and still converge.
func TestDomain(t *testing.T) {
	for _, m := range methods {
		f, x := param(t, []float64{0.05, 8}, func(x *graph.Node) *graph.Node {
			return ops.Sum(ops.Sub(x, ops.Log(x)))
		})
		r, err := Minimize(f, x, m)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Converged || math.Abs(r.X[0]-1) > 1e-8 || math.Abs(r.X[1]-1) > 1e-8 {
			t.Errorf("case %v: ended at %v (%s), want (1, 1)", m, r.X, r.Message)
		}
	}
}

// rosenbrockProblem is the 2-D Rosenbrock function by hand, for MinimizeFunc.
var rosenbrockProblem = Problem{
	FuncGrad: func(grad, p []float64) float64 {
		x, y := p[0], p[1]
		grad[0] = -2*(1-x) - 400*x*(y-x*x)
		grad[1] = 200 * (y - x*x)
		return (1-x)*(1-x) + 100*(y-x*x)*(y-x*x)
	},
	Hess: rosenbrockHessian,
	HessVec: func(hv, p, v []float64) {
		var h [4]float64
		rosenbrockHessian(h[:], p)
		hv[0], hv[1] = h[0]*v[0]+h[1]*v[1], h[2]*v[0]+h[3]*v[1]
	},
}

func rosenbrockHessian(h, p []float64) {
	x, y := p[0], p[1]
	h[0], h[1], h[2], h[3] = 2-400*(y-3*x*x), -400*x, -400*x, 200
}

// TestMinimizeFunc runs the methods on the Rosenbrock function written by
// hand: they must take the steps they take on the graph's.
func TestMinimizeFunc(t *testing.T) {
	for _, m := range methods {
		x0 := []float64{-1.2, 1}
		r, err := MinimizeFunc(rosenbrockProblem, x0, m, WithGradTol(1e-10))
		if err != nil {
			t.Fatal(err)
		}
		f, x := param(t, x0, rosenbrock)
		want, err := Minimize(f, x, m, WithGradTol(1e-10))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Converged || math.Abs(r.X[0]-1) > 1e-8 || math.Abs(r.X[1]-1) > 1e-8 || x0[0] != -1.2 {
			t.Errorf("case %v: ended at %v (%s) from %v, want (1, 1) from (−1.2, 1)", m, r.X, r.Message, x0)
		}
		if r.Iterations != want.Iterations || r.FuncEvals != want.FuncEvals || r.HessEvals != want.HessEvals {
			t.Errorf("case %v: %d iterations, %d and %d evaluations; the graph's took %d, %d and %d",
				m, r.Iterations, r.FuncEvals, r.HessEvals, want.Iterations, want.FuncEvals, want.HessEvals)
		}
	}
}

func TestStops(t *testing.T) {
	f, x := param(t, []float64{-1.2, 1}, rosenbrock)
	r, err := Minimize(f, x, LBFGS, WithMaxIterations(3))
	if err != nil || r.Status != IterationLimit || r.Iterations != 3 || r.Converged {
		t.Errorf("WithMaxIterations(3): %d iterations, status %v, %v", r.Iterations, r.Status, err)
	}
	r, err = Minimize(f, x, Newton, WithCallback(func(it Iteration) bool { return it.Iteration == 2 }))
	if err != nil || r.Status != Stopped || r.Iterations != 2 || r.Message != "Stopped by the callback." {
		t.Errorf("a callback stopping at 2: %d iterations, status %v (%q), %v", r.Iterations, r.Status, r.Message, err)
	}
	// From the minimum itself: converged with no step.
	f, x = param(t, []float64{1, 1}, rosenbrock)
	r, err = Minimize(f, x, NewtonCG)
	if err != nil || !r.Converged || r.Iterations != 0 || r.FuncEvals != 1 {
		t.Errorf("from the minimum: %+v, %v", r, err)
	}
}

// TestFeeds minimises Σ (x − c)² for an input c fed by WithFeeds.
func TestFeeds(t *testing.T) {
	for _, m := range methods {
		g := graph.New()
		x := g.Param("x", graph.NewDense(graph.Float64, 3))
		c := g.Input("c", graph.Float64, 3)
		feed, _ := graph.FromFloat64s(graph.Float64, []float64{1, -2, 3}, 3)
		r, err := Minimize(ops.Sum(ops.Square(ops.Sub(x, c))), x, m, WithFeeds(vm.Feeds{c: feed}))
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []float64{1, -2, 3} {
			if math.Abs(r.X[i]-want) > 1e-9 {
				t.Errorf("case %v: x = %v, want (1, −2, 3)", m, r.X)
			}
		}
	}
}

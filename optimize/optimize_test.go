package optimize

import (
	"fmt"
	"math"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

var methods = []Method{LBFGS, Newton, NewtonCG}

// rosenbrock is the extended Rosenbrock function of Moré, Garbow and
// Hillstrom (problem 21), Σ 100(x₂ᵢ − x₂ᵢ₋₁²)² + (1 − x₂ᵢ₋₁)² over the
// pairs of x, with its one minimum 0 at (1, …, 1). (SciPy's rosen chains
// every neighbour instead, and from (−1.2, 1, …) in 10 dimensions has a
// local minimum near (−1, 1, …, 1) that Newton's method rightly finds.)
func rosenbrock(x *graph.Node) *graph.Node {
	pairs := ops.Reshape(x, -1, 2)
	head, tail := ops.Slice(pairs, 1, 0, 1), ops.Slice(pairs, 1, 1, 2)
	one := x.Graph().Scalar(1, x.DType())
	return ops.Sum(ops.Add(
		ops.Scale(ops.Square(ops.Sub(tail, ops.Square(head))), 100),
		ops.Square(ops.Sub(one, head))))
}

// param builds a graph with the parameter x at x0 and f of it.
func param(t *testing.T, x0 []float64, f func(*graph.Node) *graph.Node) (fx, x *graph.Node) {
	t.Helper()
	g := graph.New()
	init, err := graph.FromFloat64s(graph.Float64, x0, len(x0))
	if err != nil {
		t.Fatal(err)
	}
	x = g.Param("x", init)
	fx = f(x)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	return fx, x
}

// standardStart is (−1.2, 1) repeated, the usual start of the Rosenbrock
// function in n dimensions.
func standardStart(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = 1
		if i%2 == 0 {
			x[i] = -1.2
		}
	}
	return x
}

func TestRosenbrock(t *testing.T) {
	for _, n := range []int{2, 10} {
		for _, m := range methods {
			t.Run(fmt.Sprintf("%v/n=%d", m, n), func(t *testing.T) {
				f, x := param(t, standardStart(n), rosenbrock)
				r, err := Minimize(f, x, m, WithGradTol(1e-10))
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%d iterations, %d evaluations of f, %d of the Hessian: %s", r.Iterations, r.FuncEvals, r.HessEvals, r.Message)
				if !r.Converged || r.Status != Converged {
					t.Fatalf("status %v: %s", r.Status, r.Message)
				}
				for i, v := range r.X {
					if math.Abs(v-1) > 1e-8 {
						t.Errorf("x[%d] = %v, want 1 within 1e-8", i, v)
					}
				}
				if r.F > 1e-16 || r.GradNorm > 1e-10 {
					t.Errorf("f = %v, |∇f|∞ = %v: want ≈ 0", r.F, r.GradNorm)
				}
				if r.Grad == nil || len(r.X) != n || r.FuncEvals < r.Iterations {
					t.Errorf("result %+v lacks its gradient or counts", r)
				}
			})
		}
	}
}

// TestIterationCounts checks the counts on the 2-D Rosenbrock function
// from (−1.2, 1) loosely against those of the same algorithms elsewhere:
// SciPy's L-BFGS-B takes 30 to 40 iterations, Newton's method with a line
// search about 20 (Nocedal and Wright's exercise 3.1). Truncated CG at
// tolerance min(0.5, √‖∇f‖)·‖∇f‖ stops after one CG step while the gradient
// is large, a Cauchy step that zigzags down the valley: Newton-CG needs
// several times Newton's iterations there.
func TestIterationCounts(t *testing.T) {
	for _, c := range []struct {
		method   Method
		min, max int
	}{{LBFGS, 25, 50}, {Newton, 15, 30}, {NewtonCG, 15, 100}} {
		f, x := param(t, []float64{-1.2, 1}, rosenbrock)
		r, err := Minimize(f, x, c.method, WithGradTol(1e-8))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Converged || r.Iterations < c.min || r.Iterations > c.max {
			t.Errorf("case %v: %d iterations (%s), want %d to %d", c.method, r.Iterations, r.Message, c.min, c.max)
		}
	}
}

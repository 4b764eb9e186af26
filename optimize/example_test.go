package optimize_test

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/optimize"
)

// Newton's method with the exact Hessian on the Rosenbrock function
// (1 − x)² + 100(y − x²)², from (−1.2, 1).
func ExampleMinimize() {
	g := graph.New()
	start, _ := graph.FromFloat64s(graph.Float64, []float64{-1.2, 1}, 2)
	p := g.Param("p", start)
	x, y := ops.Slice(p, 0, 0, 1), ops.Slice(p, 0, 1, 2)
	one := g.Scalar(1, graph.Float64)
	f := ops.Sum(ops.Add(ops.Square(ops.Sub(one, x)), ops.Scale(ops.Square(ops.Sub(y, ops.Square(x))), 100)))

	r, err := optimize.Minimize(f, p, optimize.Newton)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("x = (%.6f, %.6f) after %d iterations: %s\n", r.X[0], r.X[1], r.Iterations, r.Message)
	// Output:
	// x = (1.000000, 1.000000) after 22 iterations: Optimization terminated successfully.
}

// L-BFGS on a function given in plain Go: Σ (xᵢ − i)².
func ExampleMinimizeFunc() {
	p := optimize.Problem{FuncGrad: func(grad, x []float64) float64 {
		f := 0.0
		for i, v := range x {
			f += (v - float64(i)) * (v - float64(i))
			grad[i] = 2 * (v - float64(i))
		}
		return f
	}}
	r, err := optimize.MinimizeFunc(p, make([]float64, 4), optimize.LBFGS)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("x = %.6f, converged: %v\n", r.X, r.Converged)
	// Output:
	// x = [0.000000 1.000000 2.000000 3.000000], converged: true
}

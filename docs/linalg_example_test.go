package docs_test

import (
	"fmt"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// runGrad compiles y and its gradient with respect to x, runs them on the
// n×n matrix xv and prints both, or the error.
func runGrad(y, x *graph.Node, xv []float64, n int) {
	grads, err := compile.Grad(y, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	prog, err := compile.Compile([]*graph.Node{y, grads[0]})
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := vm.New(prog)
	if err != nil {
		fmt.Println(err)
		return
	}
	feed, _ := graph.FromFloat64s(graph.Float64, xv, n, n)
	if err := m.Run(vm.Feeds{x: feed}); err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range []*graph.Node{y, grads[0]} {
		t, _ := m.Value(v)
		fmt.Printf("%.4g\n", t.Float64s())
	}
}

// A symmetric positive-definite input built from an unconstrained X:
// log det(X·Xᵀ + I) at X = [[1, 0], [1, 1]] is log 5, and its gradient
// 2·A⁻¹·X = [[0.8, −0.4], [0.4, 0.8]].
func Example_symmetricInput() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 2)
	a := ops.Add(ops.MatMulT(x, x, false, true), ops.Eye(g, graph.Float64, 2))
	runGrad(ops.LogDet(a), x, []float64{1, 0, 1, 1}, 2)
	// Output:
	// [1.609]
	// [0.8 -0.4 0.4 0.8]
}

// LogDet's gradient with respect to A itself is A⁻¹, symmetric: at
// A = [[2, 1], [1, 3]], [[0.6, −0.2], [−0.2, 0.4]], with both
// off-diagonal elements sharing what only the lower one's value decides.
func Example_symmetricGradient() {
	g := graph.New()
	a := g.Input("a", graph.Float64, 2, 2)
	runGrad(ops.LogDet(a), a, []float64{2, 1, 1, 3}, 2)
	// Output:
	// [1.609]
	// [0.6 -0.2 -0.2 0.4]
}

// Det is 0 at a singular matrix, but its gradient, det(A)·A⁻ᵀ, is built
// with Inverse, so differentiating there fails the run.
func Example_detAtSingular() {
	g := graph.New()
	a := g.Input("a", graph.Float64, 2, 2)
	runGrad(ops.Sum(ops.Det(a)), a, []float64{1, 2, 2, 4}, 2)
	// Output:
	// nabla: Inverse (node Inverse #8 float64(2,2)): the diagonal element 2 is zero, the inversion could not be completed because the input matrix is singular (built at linalg_example_test.go:15)
}

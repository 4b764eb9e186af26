package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nabla-go/nabla/graph"
)

// TestMatrixExpForward checks exponentials known in closed form: of a
// diagonal matrix, the exponentials of its diagonal; of the nilpotent
// [[0 1] [0 0]], I + N; of the rotation generator [[0 −t] [t 0]], the
// rotation by t (t = 10 needs scaling and squaring); of 0×0 matrices,
// nothing.
func TestMatrixExpForward(t *testing.T) {
	exp := func(xs ...*graph.Node) *graph.Node { return MatrixExp(xs[0]) }
	c, s := math.Cos(10), math.Sin(10)
	runForward(t, []forwardCase{
		{"diagonal", []values{of([]int{2, 2}, 1, 0, 0, -2)}, exp, []int{2, 2}, []float64{math.E, 0, 0, math.Exp(-2)}},
		{"nilpotent", []values{of([]int{2, 2}, 0, 1, 0, 0)}, exp, []int{2, 2}, []float64{1, 1, 0, 1}},
		{"rotations batched", []values{of([]int{2, 2, 2}, 0, -0.7, 0.7, 0, 0, -10, 10, 0)}, exp, []int{2, 2, 2},
			[]float64{math.Cos(0.7), -math.Sin(0.7), math.Sin(0.7), math.Cos(0.7), c, -s, s, c}},
		{"zero", []values{of([]int{3, 3}, make([]float64, 9)...)}, exp, []int{3, 3}, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}},
	})
}

// TestMatrixExpAgainstGonum compares MatrixExp with gonum's (mat.Dense.Exp)
// on random matrices of 1-norm about 10 (so scaled and squared), at
// orders below and above the switch to the blocked product, and checks
// that a NaN makes the whole matrix NaN.
func TestMatrixExpAgainstGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{5, 40} {
		a := make([]float64, n*n)
		for i := range a {
			a[i] = (2*r.Float64() - 1) * 20 / float64(n)
		}
		var want mat.Dense
		want.Exp(mat.NewDense(n, n, a))
		for _, dt := range dtypes {
			g := graph.New()
			got := graph.Float64s(eval(t, MatrixExp(g.Const(dense(t, dt, []int{n, n}, a...))), nil))
			tol := 1e-12
			if dt == graph.Float32 {
				tol = 1e-4
			}
			matchesGonum(t, fmt.Sprintf("n=%d %v", n, dt), got, want.RawMatrix().Data, tol)
		}
	}
	g := graph.New()
	got := graph.Float64s(eval(t, MatrixExp(g.Const(dense(t, graph.Float64, []int{2, 2}, 1, math.NaN(), 0, 1))), nil))
	for i, v := range got {
		if !math.IsNaN(v) {
			t.Errorf("exp of a matrix holding NaN: element %d is %v, want NaN", i, v)
		}
	}
}

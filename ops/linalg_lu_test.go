package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nabla-go/nabla/graph"
)

// TestLUForward solves, inverts and takes determinants of matrices done by
// hand: [[2 1 1] [4 −6 0] [−2 7 2]]·x = (5, −2, 9) has x = (1, 1, 2) and
// det −16 (2·(−12) − 1·8 + 1·16); the swap [[0 1] [1 0]] needs a pivot and
// has det −1; [[4 7] [2 6]]⁻¹ = [[6 −7] [−2 4]]/10; [[1 2] [2 4]] is
// singular, det 0, sign 0 and log |det| = −∞.
func TestLUForward(t *testing.T) {
	a := of([]int{3, 3}, 2, 1, 1, 4, -6, 0, -2, 7, 2)
	swap := of([]int{2, 2}, 0, 1, 1, 0)
	singular := of([]int{2, 2}, 1, 2, 2, 4)
	solve := func(xs ...*graph.Node) *graph.Node { return Solve(xs[0], xs[1]) }
	one := func(f func(*graph.Node) *graph.Node) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return f(xs[0]) }
	}
	sign := func(x *graph.Node) *graph.Node { s, _ := SlogDet(x); return s }
	logAbs := func(x *graph.Node) *graph.Node { _, l := SlogDet(x); return l }
	diag := of([]int{2, 2, 2}, -2, 0, 0, 3, 0, 1, 1, 0)
	runForward(t, []forwardCase{
		{"Solve", []values{a, of([]int{3, 1}, 5, -2, 9)}, solve, []int{3, 1}, []float64{1, 1, 2}},
		{"Solve with a pivot", []values{swap, of([]int{2, 2}, 3, 5, 4, 6)}, solve, []int{2, 2}, []float64{4, 6, 3, 5}},
		{"Solve batched", []values{of([]int{2, 2, 2}, 0, 1, 1, 0, 2, 0, 0, 4), of([]int{2, 2, 1}, 3, 4, 2, 8)}, solve,
			[]int{2, 2, 1}, []float64{4, 3, 1, 2}},
		{"Inverse", []values{of([]int{2, 2}, 4, 7, 2, 6)}, one(Inverse), []int{2, 2}, []float64{0.6, -0.7, -0.2, 0.4}},
		{"Inverse with a pivot", []values{swap}, one(Inverse), []int{2, 2}, []float64{0, 1, 1, 0}},
		{"Det", []values{a}, one(Det), nil, []float64{-16}},
		{"Det batched", []values{of([]int{3, 2, 2}, 0, 1, 1, 0, 4, 7, 2, 6, 1, 2, 2, 4)}, one(Det), []int{3}, []float64{-1, 10, 0}},
		{"Det of 0×0 matrices", []values{of([]int{2, 0, 0})}, one(Det), []int{2}, []float64{1, 1}},
		{"LogDet of 0×0 matrices", []values{of([]int{2, 0, 0})}, one(LogDet), []int{2}, []float64{0, 0}},
		{"Trace of empty matrices", []values{of([]int{2, 0, 3})}, one(Trace), []int{2}, []float64{0, 0}},
		{"SlogDet sign", []values{diag}, one(sign), []int{2}, []float64{-1, -1}},
		{"SlogDet log", []values{diag}, one(logAbs), []int{2}, []float64{math.Log(6), 0}},
		{"SlogDet of singular", []values{singular}, one(sign), nil, []float64{0}},
		{"SlogDet log of singular", []values{singular}, one(logAbs), nil, []float64{math.Inf(-1)}},
	})
}

// TestLUAgainstGonum compares Solve, Inverse and Det with gonum's LU
// (mat.Dense.Solve, mat.Det) on random matrices, at orders on both sides
// of the switch to LAPACK.
func TestLUAgainstGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{5, lapackLUOrder + 3} {
		a, b := make([]float64, n*n), make([]float64, n*2)
		for i := range a {
			a[i] = 2*r.Float64() - 1
		}
		for i := range b {
			b[i] = 2*r.Float64() - 1
		}
		var x, inv mat.Dense
		if err := x.Solve(mat.NewDense(n, n, a), mat.NewDense(n, 2, b)); err != nil {
			t.Fatal(err)
		}
		if err := inv.Inverse(mat.NewDense(n, n, a)); err != nil {
			t.Fatal(err)
		}
		det := mat.Det(mat.NewDense(n, n, a))
		for _, dt := range dtypes {
			g := graph.New()
			ca, cb := g.Const(dense(t, dt, []int{n, n}, a...)), g.Const(dense(t, dt, []int{n, 2}, b...))
			tol := 1e-9
			if dt == graph.Float32 {
				tol = 2e-3
			}
			name := fmt.Sprintf("n=%d %v", n, dt)
			matchesGonum(t, name+" Solve", graph.Float64s(eval(t, Solve(ca, cb), nil)), x.RawMatrix().Data, tol)
			matchesGonum(t, name+" Inverse", graph.Float64s(eval(t, Inverse(ca), nil)), inv.RawMatrix().Data, tol)
			_, logAbs := SlogDet(ca)
			matchesGonum(t, name+" SlogDet", graph.Float64s(eval(t, logAbs, nil)), []float64{math.Log(math.Abs(det))}, tol)
			if n < lapackLUOrder { // a large determinant is far from 1: compared through its log above
				matchesGonum(t, name+" Det", graph.Float64s(eval(t, Det(ca), nil)), []float64{det}, tol)
			}
		}
	}
}

// matchesGonum fails naming the first element of got farther than tol
// (relative to the largest of want, at least 1) from want.
func matchesGonum(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	scale := 1.0
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i, w := range want {
		if math.Abs(got[i]-w) > tol*scale {
			t.Errorf("case %s: element %d: got %v, want %v", name, i, got[i], w)
			return
		}
	}
}

// TestLUSingularErrors: a singular matrix makes Solve and Inverse fail
// naming the batch element and the zero pivot, whichever path
// factorises it.
func TestLUSingularErrors(t *testing.T) {
	big := lapackLUOrder + 4
	bigSingular := make([]float64, big*big)
	for i := range big {
		if i != big-2 {
			bigSingular[i*big+i] = 1
		}
	}
	b := func(g *graph.Graph, dt graph.Type) *graph.Node { return g.Const(graph.NewDenseOf(dt)) }
	cases := []struct {
		name string
		y    func(g *graph.Graph) *graph.Node
		want string
	}{
		{"Solve", func(g *graph.Graph) *graph.Node {
			return Solve(g.Const(dense(t, graph.Float64, []int{2, 2}, 1, 2, 2, 4)), b(g, graph.TypeOf(graph.Float64, 2, 1)))
		}, "the diagonal element 2 is zero, the solve could not be completed because the input matrix is singular"},
		{"Inverse batched", func(g *graph.Graph) *graph.Node {
			return Inverse(g.Const(dense(t, graph.Float32, []int{2, 2, 2}, 1, 0, 0, 1, 0, 0, 0, 1)))
		}, "batch element 1: the diagonal element 1 is zero, the inversion could not be completed because the input matrix is singular"},
		{"Inverse large, through LAPACK", func(g *graph.Graph) *graph.Node {
			return Inverse(g.Const(dense(t, graph.Float64, []int{big, big}, bigSingular...)))
		}, fmt.Sprintf("the diagonal element %d is zero, the inversion could not be completed because the input matrix is singular", big-1)},
		{"Solve large float32", func(g *graph.Graph) *graph.Node {
			return Solve(g.Const(dense(t, graph.Float32, []int{big, big}, bigSingular...)), b(g, graph.TypeOf(graph.Float32, big, 1)))
		}, fmt.Sprintf("the diagonal element %d is zero, the solve could not be completed because the input matrix is singular", big-1)},
	}
	for _, c := range cases {
		err := forwardErr(t, c.y(graph.New()))
		if err == nil || err.Error() != c.want {
			t.Errorf("case %v: got error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestLUBuildErrors: shapes that do not fit are build errors naming the
// op, the shapes and the caller.
func TestLUBuildErrors(t *testing.T) {
	runErrors(t, []errorCase{
		{"Solve rows", func(g *graph.Graph) *graph.Node {
			return Solve(g.Input("a", graph.Float64, 2, 3, 3), g.Input("b", graph.Float64, 2, 2, 1))
		}, "Solve", []string{"shapes (2,3,3) and (2,2,1): the right-hand side must have A's leading axes and 3 rows"}},
		{"Inverse of a non-square matrix", func(g *graph.Graph) *graph.Node { return Inverse(g.Input("a", graph.Float64, 2, 3)) },
			"Inverse", []string{"shape (2,3): the matrices are not square"}},
		{"Det of a vector", func(g *graph.Graph) *graph.Node { return Det(g.Input("a", graph.Float64, 3)) },
			"Det", []string{"shape (3) is not a matrix or a batch of matrices"}},
		{"SlogDet of a non-square batch", func(g *graph.Graph) *graph.Node {
			s, _ := SlogDet(g.Input("a", graph.Float32, 2, 3, 2))
			return s
		}, "SlogDetSign", []string{"shape (2,3,2): the matrices are not square"}},
	})
}

// TestSolveFromTheRight: X·op(A) = B, solved by the direct loop and, from
// lapackLUOrder, by the blocked LU, has a residual X·op(A) − B at
// rounding level, for both transposes and a batch.
func TestSolveFromTheRight(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{5, lapackLUOrder + 6} {
		for _, trans := range []bool{false, true} {
			const batch, k = 2, 3
			a, b := make([]float64, batch*n*n), make([]float64, batch*k*n)
			for i := range a {
				a[i] = (2*r.Float64() - 1) / float64(n)
			}
			for m := range batch {
				for i := range n {
					a[m*n*n+i*n+i] += 1
				}
			}
			for i := range b {
				b[i] = 2*r.Float64() - 1
			}
			g := graph.New()
			ca, cb := g.Const(dense(t, graph.Float64, []int{batch, n, n}, a...)), g.Const(dense(t, graph.Float64, []int{batch, k, n}, b...))
			x := graph.Float64s(eval(t, graph.Apply(SolveOp(trans, true), ca, cb), nil))
			for m := range batch {
				for i := range k {
					for j := range n {
						s := -b[m*k*n+i*n+j]
						for l := range n {
							opA := a[m*n*n+l*n+j] // op(A)[l][j]
							if trans {
								opA = a[m*n*n+j*n+l]
							}
							s += x[m*k*n+i*n+l] * opA
						}
						if math.Abs(s) > 1e-12 {
							t.Fatalf("n=%d transposed %v: residual %v at batch %d row %d column %d", n, trans, s, m, i, j)
						}
					}
				}
			}
		}
	}
}

package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// TestCholeskyForward factorises matrices whose factors are known by hand:
// [[4 12 -16] [12 37 -43] [-16 -43 98]] = L·Lᵀ with L = [[2 0 0] [6 1 0]
// [-8 5 3]], and [[25 15 -5] [15 18 0] [-5 0 11]] with L = [[5 0 0]
// [3 3 0] [-1 1 3]]. The upper triangle of the input is never read.
func TestCholeskyForward(t *testing.T) {
	a := []float64{4, 12, -16, 12, 37, -43, -16, -43, 98}
	b := []float64{25, 15, -5, 15, 18, 0, -5, 0, 11}
	la := []float64{2, 0, 0, 6, 1, 0, -8, 5, 3}
	lb := []float64{5, 0, 0, 3, 3, 0, -1, 1, 3}
	junkAbove := []float64{4, 99, 99, 12, 37, 99, -16, -43, 98}
	chol := func(xs ...*graph.Node) *graph.Node { return Cholesky(xs[0]) }
	logDet := func(xs ...*graph.Node) *graph.Node { return LogDet(xs[0]) }
	runForward(t, []forwardCase{
		{"Cholesky", []values{of([]int{3, 3}, a...)}, chol, []int{3, 3}, la},
		{"Cholesky batched", []values{of([]int{2, 1, 3, 3}, append(a, b...)...)}, chol, []int{2, 1, 3, 3}, append(la, lb...)},
		{"Cholesky reads the lower triangle", []values{of([]int{3, 3}, junkAbove...)}, chol, []int{3, 3}, la},
		// det = (2·1·3)² = 36 and (5·3·3)² = 2025.
		{"LogDet batched", []values{of([]int{2, 3, 3}, append(a, b...)...)}, logDet, []int{2}, []float64{math.Log(36), math.Log(2025)}},
		{"Cholesky of 1×1", []values{of([]int{1, 1}, 9)}, chol, []int{1, 1}, []float64{3}},
	})
}

// TestTriangularSolveForward solves systems by hand. With A = [[2 0] [1 4]]
// and b = (2, 9): A·x = b gives x = (1, 2); Aᵀ·x = b gives x₂ = 9/4,
// x₁ = (2 − 9/4)/2 = −1/8; x·A = (4, 8) gives x = (1, 2); with a unit
// diagonal, [[1 0] [1 1]]·x = b gives x = (2, 7). The triangle not named
// is never read (99s).
func TestTriangularSolveForward(t *testing.T) {
	lower := of([]int{2, 2}, 2, 99, 1, 4)
	upper := of([]int{2, 2}, 2, 1, 99, 4) // Aᵀ stored as upper
	col, row := of([]int{2, 1}, 2, 9), of([]int{1, 2}, 4, 8)
	solve := func(o TriangularOptions) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return TriangularSolve(xs[0], xs[1], o) }
	}
	runForward(t, []forwardCase{
		{"lower left", []values{lower, col}, solve(TriangularOptions{}), []int{2, 1}, []float64{1, 2}},
		{"lower transposed", []values{lower, col}, solve(TriangularOptions{Transpose: true}), []int{2, 1}, []float64{-0.125, 2.25}},
		{"upper", []values{upper, col}, solve(TriangularOptions{Upper: true}), []int{2, 1}, []float64{-0.125, 2.25}},
		{"upper transposed", []values{upper, col}, solve(TriangularOptions{Upper: true, Transpose: true}), []int{2, 1}, []float64{1, 2}},
		{"lower right", []values{lower, row}, solve(TriangularOptions{Right: true}), []int{1, 2}, []float64{1, 2}},
		{"unit diagonal", []values{lower, col}, solve(TriangularOptions{UnitDiagonal: true}), []int{2, 1}, []float64{2, 7}},
		{"batched", []values{of([]int{2, 2, 2}, 2, 0, 1, 4, 1, 0, 0, 2), of([]int{2, 2, 1}, 2, 9, 3, 4)},
			solve(TriangularOptions{}), []int{2, 2, 1}, []float64{1, 2, 3, 2}},
	})
}

// spd returns a random symmetric positive-definite n×n matrix, X·Xᵀ + n·I.
func spd(r *rand.Rand, n int) []float64 {
	x := make([]float64, n*n)
	for i := range x {
		x[i] = 2*r.Float64() - 1
	}
	a := make([]float64, n*n)
	for i := range n {
		for j := range n {
			for k := range n {
				a[i*n+j] += x[i*n+k] * x[j*n+k]
			}
		}
		a[i*n+i] += float64(n)
	}
	return a
}

// TestLogDetAndCholeskySolveAgainstLU compares LogDet with the log of the
// determinant from gonum's LU factorisation (mat.Det), and CholeskySolve
// with its LU solve (mat.Dense.Solve), on random positive-definite
// matrices in a batch, at orders on both sides of the switch to LAPACK.
func TestLogDetAndCholeskySolveAgainstLU(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{4, lapackCholeskyOrder + 3} {
		for _, dt := range dtypes {
			const batch, k = 2, 3
			var as, bs, wantDet, wantX []float64
			for range batch {
				a, b := spd(r, n), make([]float64, n*k)
				for i := range b {
					b[i] = 2*r.Float64() - 1
				}
				var x mat.Dense
				if err := x.Solve(mat.NewDense(n, n, a), mat.NewDense(n, k, b)); err != nil {
					t.Fatal(err)
				}
				var lu mat.LU
				lu.Factorize(mat.NewDense(n, n, a))
				logDet, sign := lu.LogDet()
				if sign != 1 {
					t.Fatalf("case n=%d: LU says the determinant's sign is %v", n, sign)
				}
				as, bs = append(as, a...), append(bs, b...)
				wantDet, wantX = append(wantDet, logDet), append(wantX, x.RawMatrix().Data...)
			}
			g := graph.New()
			a := g.Const(dense(t, dt, []int{batch, n, n}, as...))
			b := g.Const(dense(t, dt, []int{batch, n, k}, bs...))
			tol := 1e-10
			if dt == graph.Float32 {
				tol = 1e-4
			}
			ld := graph.Float64s(eval(t, LogDet(a), nil))
			x := graph.Float64s(eval(t, CholeskySolve(Cholesky(a), b), nil))
			for i, w := range wantDet {
				if math.Abs(ld[i]-w) > tol*math.Abs(w) {
					t.Errorf("case n=%d %v: log det %d: got %v, want %v", n, dt, i, ld[i], w)
				}
			}
			for i, w := range wantX {
				if math.Abs(x[i]-w) > tol*10 {
					t.Errorf("case n=%d %v: solution element %d: got %v, want %v", n, dt, i, x[i], w)
					break
				}
			}
		}
	}
}

// TestCholeskyLAPACKMatchesDirect: large float64 matrices go through
// LAPACK's blocked dpotrf; their factor must equal the direct loop's.
func TestCholeskyLAPACKMatchesDirect(t *testing.T) {
	n := lapackCholeskyOrder + 5
	a := spd(rand.New(rand.NewPCG(2, 2)), n)
	lapack, direct := make([]float64, n*n), make([]float64, n*n)
	if k := choleskyMatrix(lapack, a, n); k != 0 {
		t.Fatalf("LAPACK path: minor %d not positive-definite", k)
	}
	if k := choleskyDirect(direct, a, n); k != 0 {
		t.Fatalf("direct loop: minor %d not positive-definite", k)
	}
	for i := range lapack {
		if math.Abs(lapack[i]-direct[i]) > 1e-12 {
			t.Fatalf("element (%d,%d): LAPACK %v, direct %v", i/n, i%n, lapack[i], direct[i])
		}
	}
}

// TestLinalgKernelErrors: matrices that are not positive-definite and
// singular triangular systems are errors naming the batch element (where
// there is a batch) and the failing minor or diagonal element, as
// torch.linalg words them, whichever path factorises.
func TestLinalgKernelErrors(t *testing.T) {
	const notPD = "the factorization could not be completed because the input is not positive-definite " +
		"(the leading minor of order %d is not positive-definite)"
	big := lapackCholeskyOrder + 6
	bigBad := make([]float64, big*big)
	for i := range big {
		bigBad[i*big+i] = 1
	}
	bigBad[(big-3)*big+big-3] = -1
	cases := []struct {
		name  string
		build func(g *graph.Graph) *graph.Node
		want  string
	}{
		{"indefinite 2×2", func(g *graph.Graph) *graph.Node {
			return Cholesky(g.Const(dense(t, graph.Float64, []int{2, 2}, 1, 2, 2, 1)))
		}, fmt.Sprintf(notPD, 2)},
		{"second of a batch", func(g *graph.Graph) *graph.Node {
			return Cholesky(g.Const(dense(t, graph.Float64, []int{2, 2, 2}, 1, 0, 0, 1, 1, 2, 2, 1)))
		}, "batch element 1: " + fmt.Sprintf(notPD, 2)},
		{"negative first pivot", func(g *graph.Graph) *graph.Node {
			return Cholesky(g.Const(dense(t, graph.Float64, []int{1, 2, 2}, -1, 0, 0, 1)))
		}, "batch element 0: " + fmt.Sprintf(notPD, 1)},
		{"NaN", func(g *graph.Graph) *graph.Node {
			return Cholesky(g.Const(dense(t, graph.Float64, []int{2, 2}, 1, 0, 0, math.NaN())))
		}, fmt.Sprintf(notPD, 2)},
		{"large, through LAPACK", func(g *graph.Graph) *graph.Node {
			return Cholesky(g.Const(dense(t, graph.Float64, []int{big, big}, bigBad...)))
		}, fmt.Sprintf(notPD, big-2)},
		{"large float32", func(g *graph.Graph) *graph.Node {
			return Cholesky(g.Const(dense(t, graph.Float32, []int{big, big}, bigBad...)))
		}, fmt.Sprintf(notPD, big-2)},
		{"singular triangular", func(g *graph.Graph) *graph.Node {
			a := g.Const(dense(t, graph.Float32, []int{2, 2, 2}, 1, 0, 0, 1, 1, 0, 5, 0))
			return TriangularSolve(a, g.Const(dense(t, graph.Float32, []int{2, 2, 1}, 1, 1, 1, 1)), TriangularOptions{})
		}, "batch element 1: the triangular matrix is singular: its diagonal element (2,2) is zero"},
	}
	for _, c := range cases {
		err := forwardErr(t, c.build(graph.New()))
		if err == nil || err.Error() != c.want {
			t.Errorf("case %v: got error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestLinalgBuildErrors: shapes that do not fit are build errors naming
// the op, the shapes and the caller.
func TestLinalgBuildErrors(t *testing.T) {
	runErrors(t, []errorCase{
		{"Cholesky of a non-square matrix", func(g *graph.Graph) *graph.Node { return Cholesky(g.Input("a", graph.Float64, 2, 3)) },
			"Cholesky", []string{"shape (2,3): the matrices are not square"}},
		{"Cholesky of a vector", func(g *graph.Graph) *graph.Node { return Cholesky(g.Input("a", graph.Float64, 3)) },
			"Cholesky", []string{"shape (3) is not a matrix or a batch of matrices"}},
		{"TriangularSolve rows", func(g *graph.Graph) *graph.Node {
			return TriangularSolve(g.Input("a", graph.Float64, 3, 3), g.Input("b", graph.Float64, 2, 3), TriangularOptions{})
		}, "TriangularSolve", []string{"shapes (3,3) and (2,3): the right-hand side must have A's leading axes and 3 rows"}},
		{"TriangularSolve right columns", func(g *graph.Graph) *graph.Node {
			return TriangularSolve(g.Input("a", graph.Float64, 3, 3), g.Input("b", graph.Float64, 3, 2), TriangularOptions{Right: true})
		}, "TriangularSolve", []string{"shapes (3,3) and (3,2): the right-hand side must have A's leading axes and 3 columns"}},
		{"TriangularSolve batch", func(g *graph.Graph) *graph.Node {
			return TriangularSolve(g.Input("a", graph.Float64, 2, 3, 3), g.Input("b", graph.Float64, 3, 3, 1), TriangularOptions{})
		}, "TriangularSolve", []string{"shapes (2,3,3) and (3,3,1)"}},
		{"CholeskySolve dtypes", func(g *graph.Graph) *graph.Node {
			return CholeskySolve(g.Input("l", graph.Float64, 3, 3), g.Input("b", graph.Float32, 3, 1))
		}, "CholeskySolve", []string{"float64(3,3)", "float32(3,1)"}},
		{"LogDet of a non-square batch", func(g *graph.Graph) *graph.Node { return LogDet(g.Input("a", graph.Float64, 2, 2, 3)) },
			"LogDet", []string{"shape (2,2,3): the matrices are not square"}},
	})
}

// BenchmarkCholesky factorises a batch of small matrices (the loop with no
// per-matrix overhead) and one large one (LAPACK's blocked dpotrf).
func BenchmarkCholesky(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, c := range []struct{ batch, n int }{{4096, 4}, {1, 256}} {
		var vals []float64
		for range c.batch {
			vals = append(vals, spd(r, c.n)...)
		}
		a := dense(b, graph.Float64, []int{c.batch, c.n, c.n}, vals...)
		out := dense(b, graph.Float64, []int{c.batch, c.n, c.n}, make([]float64, len(vals))...)
		b.Run(fmt.Sprintf("%dx%dx%d", c.batch, c.n, c.n), func(b *testing.B) {
			for b.Loop() {
				if err := (choleskyOp{}).Forward(out, []*tensor.Dense{a}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTriangularSolveDirectMatchesBLAS: small systems are solved by
// substitution, large ones by BLAS's trsm; for every combination of the
// options both give the same solution.
func TestTriangularSolveDirectMatchesBLAS(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	n, k := blasTriangularOrder+4, 3
	a := make([]float64, n*n)
	for i := range a {
		a[i] = (2*r.Float64() - 1) / float64(n)
	}
	for i := range n {
		a[i*n+i] = 1 + r.Float64()
	}
	for bits := range 16 {
		o := TriangularOptions{Upper: bits&1 != 0, Right: bits&2 != 0, Transpose: bits&4 != 0, UnitDiagonal: bits&8 != 0}
		rows, cols := n, k
		if o.Right {
			rows, cols = k, n
		}
		b := make([]float64, rows*cols)
		for i := range b {
			b[i] = 2*r.Float64() - 1
		}
		blas := make([]float64, len(b))
		if err := triangularSolveKernel(o, solveShape{batch: 1, n: n, rows: rows, cols: cols}, blas, a, b); err != nil {
			t.Fatal(err)
		}
		direct := slices.Clone(b)
		triangularSolveDirect(o, a, direct, n, rows, cols)
		for i := range direct {
			if math.Abs(direct[i]-blas[i]) > 1e-12 {
				t.Errorf("case %+v: element %d: substitution %v, trsm %v", o, i, direct[i], blas[i])
				break
			}
		}
	}
}

package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nabla-go/nabla/graph"
)

// TestQRForward factorises [[12 −51 4] [6 167 −68] [−4 24 −41]], whose QR
// is done by hand in many textbooks: with LAPACK's signs (R's diagonal
// −sign(head)·norm: −14, then −175 as the reflected second column's head
// is 173.9, and −35 for the last, Q being a rotation), Q = −[[6/7 −69/175
// −58/175] [3/7 158/175 6/175] [−2/7 6/35 −33/35]] and R = −[[14 21 −14]
// [0 175 −70] [0 0 35]]. A tall batch checks shapes and A = Q·R.
func TestQRForward(t *testing.T) {
	a := of([]int{3, 3}, 12, -51, 4, 6, 167, -68, -4, 24, -41)
	q := func(xs ...*graph.Node) *graph.Node { q, _ := QR(xs[0]); return q }
	r := func(xs ...*graph.Node) *graph.Node { _, r := QR(xs[0]); return r }
	product := func(xs ...*graph.Node) *graph.Node { q, r := QR(xs[0]); return batchMatMul(q, r, false, false) }
	tall := of([]int{2, 3, 2}, 1, 2, 3, 4, 5, 6, 0, 1, 1, 0, 2, 2)
	runForward(t, []forwardCase{
		{"Q", []values{a}, q, []int{3, 3}, []float64{-6. / 7, 69. / 175, 58. / 175, -3. / 7, -158. / 175, -6. / 175, 2. / 7, -6. / 35, 33. / 35}},
		{"R", []values{a}, r, []int{3, 3}, []float64{-14, -21, 14, 0, -175, 70, 0, 0, -35}},
		{"tall batch Q·R", []values{tall}, product, []int{2, 3, 2}, tall.vals},
		{"R of a column already reduced", []values{of([]int{2, 1}, -3, 0)}, r, []int{1, 1}, []float64{-3}},
	})
}

// TestQRAgainstGonum compares the factors with gonum's (mat.QR, LAPACK's
// dgeqrf and dorgqr, so the same signs) on random tall matrices, at
// widths on both sides of the switch to LAPACK.
func TestQRAgainstGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, mn := range [][2]int{{7, 4}, {lapackQROrder + 9, lapackQROrder + 2}} {
		m, n := mn[0], mn[1]
		a := make([]float64, m*n)
		for i := range a {
			a[i] = 2*r.Float64() - 1
		}
		var f mat.QR
		f.Factorize(mat.NewDense(m, n, a))
		var wq, wr mat.Dense
		f.QTo(&wq)
		f.RTo(&wr)
		// gonum's Q is m×m and R m×n: the reduced factors are their first
		// n columns and rows.
		wantQ, wantR := make([]float64, 0, m*n), make([]float64, 0, n*n)
		for i := range m {
			wantQ = append(wantQ, wq.RawRowView(i)[:n]...)
		}
		for i := range n {
			wantR = append(wantR, wr.RawRowView(i)[:n]...)
		}
		for _, dt := range dtypes {
			g := graph.New()
			q, rr := QR(g.Const(dense(t, dt, []int{m, n}, a...)))
			tol := 1e-12
			if dt == graph.Float32 {
				tol = 1e-4
			}
			name := fmt.Sprintf("%d×%d %v", m, n, dt)
			matchesGonum(t, name+" Q", graph.Float64s(eval(t, q, nil)), wantQ, tol)
			matchesGonum(t, name+" R", graph.Float64s(eval(t, rr, nil)), wantR, tol)
		}
	}
}

// TestQRBuildErrors: a wide matrix is a build error.
func TestQRBuildErrors(t *testing.T) {
	runErrors(t, []errorCase{
		{"wide", func(g *graph.Graph) *graph.Node { q, _ := QR(g.Input("a", graph.Float64, 2, 3)); return q },
			"QROrthogonal", []string{"shape (2,3): the matrices are wide (2 < 3 columns): the reduced QR of a wide matrix is not supported yet"}},
	})
}

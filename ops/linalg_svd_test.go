package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nabla-go/nabla/graph"
)

// TestSVDForward decomposes matrices done by hand. A = [[3 0] [4 5]] has
// AᵀA = [[25 20] [20 25]], so S = (3√5, √5), V's columns (1, 1)/√2 and
// (1, −1)/√2 and U = A·V·S⁻¹, columns (1, 3)/√10 and (3, −1)/√10; with a
// zero column added (wide), Vh gains a zero column. [[1 1] [1 1]] has
// S = (2, 0): U's second column completes the first to an orthonormal
// basis.
func TestSVDForward(t *testing.T) {
	r5, r2, r10 := math.Sqrt(5), 1/math.Sqrt2, 1/math.Sqrt(10)
	a := of([]int{2, 2}, 3, 0, 4, 5)
	wide := of([]int{2, 3}, 3, 0, 0, 4, 5, 0)
	part := func(i int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { u, s, vh := SVD(xs[0]); return []*graph.Node{u, s, vh}[i] }
	}
	rebuilt := func(xs ...*graph.Node) *graph.Node {
		u, s, vh := SVD(xs[0])
		return batchMatMul(scaleColumns(u, s), vh, false, false)
	}
	runForward(t, []forwardCase{
		{"U", []values{a}, part(0), []int{2, 2}, []float64{r10, 3 * r10, 3 * r10, -r10}},
		{"S", []values{a}, part(1), []int{2}, []float64{3 * r5, r5}},
		{"Vh", []values{a}, part(2), []int{2, 2}, []float64{r2, r2, r2, -r2}},
		{"wide U", []values{wide}, part(0), []int{2, 2}, []float64{r10, 3 * r10, 3 * r10, -r10}},
		{"wide Vh", []values{wide}, part(2), []int{2, 3}, []float64{r2, r2, 0, r2, -r2, 0}},
		{"rank 1 S", []values{of([]int{2, 2}, 1, 1, 1, 1)}, part(1), []int{2}, []float64{2, 0}},
		{"rank 1 U", []values{of([]int{2, 2}, 1, 1, 1, 1)}, part(0), []int{2, 2}, []float64{r2, r2, r2, -r2}},
		{"batched rebuilt", []values{of([]int{2, 3, 2}, 1, 2, 3, 4, 5, 6, -1, 0, 2, 2, 0, 1)}, rebuilt, []int{2, 3, 2},
			[]float64{1, 2, 3, 4, 5, 6, -1, 0, 2, 2, 0, 1}},
	})
}

// TestSVDAgainstGonum compares the singular values with gonum's (mat.SVD,
// LAPACK's dgesvd) and checks U·diag(S)·Vh = A, UᵀU = I and Vh·Vhᵀ = I on
// random tall and wide matrices, at sizes on both sides of the switch to
// LAPACK.
func TestSVDAgainstGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	for _, mn := range [][2]int{{6, 4}, {4, 6}, {lapackSVDOrder + 8, lapackSVDOrder + 3}, {lapackSVDOrder + 1, lapackSVDOrder + 6}} {
		m, n := mn[0], mn[1]
		k := min(m, n)
		a := make([]float64, m*n)
		for i := range a {
			a[i] = 2*r.Float64() - 1
		}
		var svd mat.SVD
		if !svd.Factorize(mat.NewDense(m, n, a), mat.SVDNone) {
			t.Fatalf("%d×%d: gonum did not converge", m, n)
		}
		want := svd.Values(nil)
		for _, dt := range dtypes {
			g := graph.New()
			u, s, vh := SVD(g.Const(dense(t, dt, []int{m, n}, a...)))
			tol := 1e-12
			if dt == graph.Float32 {
				tol = 1e-5
			}
			name := fmt.Sprintf("%d×%d %v", m, n, dt)
			uv, sv, vhv := graph.Float64s(eval(t, u, nil)), graph.Float64s(eval(t, s, nil)), graph.Float64s(eval(t, vh, nil))
			matchesGonum(t, name+" S", sv, want, tol)
			usv, utu, vvt, eye := make([]float64, m*n), make([]float64, k*k), make([]float64, k*k), make([]float64, k*k)
			for i := range k {
				eye[i*k+i] = 1
			}
			for i := range m {
				for j := range n {
					for l := range k {
						usv[i*n+j] += uv[i*k+l] * sv[l] * vhv[l*n+j]
					}
				}
			}
			for i := range k {
				for j := range k {
					for l := range m {
						utu[i*k+j] += uv[l*k+i] * uv[l*k+j]
					}
					for l := range n {
						vvt[i*k+j] += vhv[i*n+l] * vhv[j*n+l]
					}
				}
			}
			matchesGonum(t, name+" U·S·Vh", usv, a, tol*float64(k))
			matchesGonum(t, name+" UᵀU", utu, eye, tol*float64(k))
			matchesGonum(t, name+" Vh·Vhᵀ", vvt, eye, tol*float64(k))
		}
	}
}

// TestSVDNonFinite: a NaN is a run-time error, not singular values of NaN.
func TestSVDNonFinite(t *testing.T) {
	g := graph.New()
	_, s, _ := SVD(g.Const(dense(t, graph.Float32, []int{2, 2, 2}, 1, 0, 0, 1, 1, 0, math.Inf(1), 1)))
	want := "batch element 1: the singular value algorithm failed to converge (a NaN or infinity in the input?)"
	if err := forwardErr(t, s); err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
}

package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nabla-go/nabla/graph"
)

// TestEighForward decomposes matrices done by hand: [[2 1] [1 2]] has
// eigenvalues 1 and 3 with vectors (1, −1)/√2 and (1, 1)/√2 (each
// oriented with its largest component, the first of equal ones,
// positive); diag(3, −1, 2) has −1, 2, 3 with the unit vectors e₂, e₃,
// e₁; the upper triangle is never read (99).
func TestEighForward(t *testing.T) {
	h := 1 / math.Sqrt2
	eigenvalues := func(xs ...*graph.Node) *graph.Node { v, _ := Eigh(xs[0]); return v }
	eigenvectors := func(xs ...*graph.Node) *graph.Node { _, v := Eigh(xs[0]); return v }
	pair := of([]int{2, 2}, 2, 99, 1, 2)
	diag := of([]int{3, 3}, 3, 0, 0, 0, -1, 0, 0, 0, 2)
	runForward(t, []forwardCase{
		{"values", []values{pair}, eigenvalues, []int{2}, []float64{1, 3}},
		{"vectors", []values{pair}, eigenvectors, []int{2, 2}, []float64{h, h, -h, h}},
		{"diagonal values", []values{diag}, eigenvalues, []int{3}, []float64{-1, 2, 3}},
		{"diagonal vectors", []values{diag}, eigenvectors, []int{3, 3}, []float64{0, 0, 1, 1, 0, 0, 0, 1, 0}},
		{"batched values", []values{of([]int{2, 1, 1}, 5, -4)}, eigenvalues, []int{2, 1}, []float64{5, -4}},
	})
}

// TestEighAgainstGonum compares the eigenvalues with gonum's (mat.EigenSym,
// LAPACK's dsyev) and checks A·V = V·diag(λ) and VᵀV = I, on random
// symmetric matrices at orders on both sides of the switch to LAPACK.
func TestEighAgainstGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{2, 7, lapackEighOrder - 1, lapackEighOrder + 5} {
		sym := mat.NewSymDense(n, nil)
		for i := range n {
			for j := 0; j <= i; j++ {
				sym.SetSym(i, j, 2*r.Float64()-1)
			}
		}
		var es mat.EigenSym
		if !es.Factorize(sym, false) {
			t.Fatalf("n=%d: gonum did not converge", n)
		}
		want := es.Values(nil)
		a := make([]float64, n*n)
		for i := range n {
			for j := range n {
				a[i*n+j] = sym.At(i, j)
			}
		}
		for _, dt := range dtypes {
			g := graph.New()
			values, vectors := Eigh(g.Const(dense(t, dt, []int{n, n}, a...)))
			tol := 1e-12
			if dt == graph.Float32 {
				tol = 1e-5
			}
			name := fmt.Sprintf("n=%d %v", n, dt)
			w, v := graph.Float64s(eval(t, values, nil)), graph.Float64s(eval(t, vectors, nil))
			matchesGonum(t, name+" values", w, want, tol)
			av, vl, vtv, eye := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
			for i := range n {
				eye[i*n+i] = 1
				for j := range n {
					vl[i*n+j] = v[i*n+j] * w[j]
					for k := range n {
						av[i*n+j] += a[i*n+k] * v[k*n+j]
						vtv[i*n+j] += v[k*n+i] * v[k*n+j]
					}
				}
			}
			matchesGonum(t, name+" A·V", av, vl, tol*float64(n))
			matchesGonum(t, name+" VᵀV", vtv, eye, tol*float64(n))
		}
	}
}

// TestEighNonFinite: a NaN is a run-time error, not eigenvalues of NaN.
func TestEighNonFinite(t *testing.T) {
	g := graph.New()
	v, _ := Eigh(g.Const(dense(t, graph.Float64, []int{2, 2, 2}, 1, 0, 0, 1, 1, 0, math.NaN(), 1)))
	want := "batch element 1: the eigenvalue algorithm failed to converge (a NaN or infinity in the input?)"
	if err := forwardErr(t, v); err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
}

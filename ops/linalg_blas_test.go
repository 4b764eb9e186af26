package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	native "gonum.org/v1/gonum/blas/gonum"
)

// levelThree's routines agree with gonum's own to rounding, for every
// combination of options and scalars, with leading dimensions past the
// rows' ends, on sizes that take both the blocked path and gonum's loops,
// and leave the elements outside their output (the other triangle, the
// padding) as they were: the whole buffers are compared.
func TestLevelThreeBLAS(t *testing.T) {
	if _, ok := blas64.Implementation().(levelThree); !ok {
		t.Fatalf("blas64 implementation is %T, want levelThree", blas64.Implementation())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.Float64()*2 - 1
		}
		return x
	}
	var ours levelThree
	var theirs native.Implementation
	trans := []blas.Transpose{blas.NoTrans, blas.Trans}
	for _, sz := range [][3]int{{100, 70, 90}, {5, 7, 3}, {130, 33, 64}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, tA := range trans {
			for _, tB := range trans {
				for _, ab := range [][2]float64{{1, 1}, {-1, 1}, {0.5, 0}, {2, -0.25}} {
					name := fmt.Sprintf("Dgemm %c%c %d×%d×%d alpha %v beta %v", tA, tB, m, n, k, ab[0], ab[1])
					lda, ldb, ldc := k+3, n+2, n+5
					if tA == blas.Trans {
						lda = m + 3
					}
					if tB == blas.Trans {
						ldb = k + 2
					}
					a, b, c := random(max(m, k)*lda), random(max(n, k)*ldb), random(m*ldc)
					want := append([]float64(nil), c...)
					ours.Dgemm(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
					theirs.Dgemm(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
					agree(t, name, c, want)
				}
			}
		}
	}
	for _, nk := range [][2]int{{100, 70}, {20, 10}, {64, 192}} {
		n, k := nk[0], nk[1]
		for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, tA := range trans {
				name := fmt.Sprintf("Dsyrk %c%c n %d k %d", ul, tA, n, k)
				lda := k + 1
				if tA == blas.Trans {
					lda = n + 1
				}
				a, c := random(max(n, k)*lda), random(n*(n+3))
				want := append([]float64(nil), c...)
				ours.Dsyrk(ul, tA, n, k, -1, a, lda, 0.75, c, n+3)
				theirs.Dsyrk(ul, tA, n, k, -1, a, lda, 0.75, want, n+3)
				agree(t, name, c, want)
			}
		}
	}
	for _, mn := range [][2]int{{100, 70}, {150, 37}, {9, 12}} {
		m, n := mn[0], mn[1]
		for _, s := range []blas.Side{blas.Left, blas.Right} {
			for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
				for _, tA := range trans {
					for _, d := range []blas.Diag{blas.NonUnit, blas.Unit} {
						name := fmt.Sprintf("Dtrsm %c%c%c%c %d×%d", s, ul, tA, d, m, n)
						order := m
						if s == blas.Right {
							order = n
						}
						// Off-diagonal elements small against the diagonal:
						// well conditioned whichever triangle is read. A
						// unit diagonal is not read at all: NaN there.
						lda := order + 2
						a := random(order * lda)
						for i := range a {
							a[i] /= float64(order)
						}
						for i := range order {
							a[i*lda+i] = 1 + rng.Float64()
							if d == blas.Unit {
								a[i*lda+i] = math.NaN()
							}
						}
						b := random(m * (n + 4))
						want := append([]float64(nil), b...)
						ours.Dtrsm(s, ul, tA, d, m, n, 1.5, a, lda, b, n+4)
						theirs.Dtrsm(s, ul, tA, d, m, n, 1.5, a, lda, want, n+4)
						agree(t, name, b, want)
					}
				}
			}
		}
	}
}

// Arguments gonum refuses are gonum's own panics, on every path.
func TestLevelThreeBLASPanics(t *testing.T) {
	var ours levelThree
	a := make([]float64, 64*64)
	for name, call := range map[string]func(){
		"Dgemm short C": func() { ours.Dgemm(blas.NoTrans, blas.NoTrans, 64, 64, 64, 1, a, 64, a, 64, 0, a[:10], 64) },
		"Dsyrk bad lda": func() { ours.Dsyrk(blas.Lower, blas.NoTrans, 64, 64, 1, a, 3, 0, a, 64) },
		"Dtrsm bad side": func() {
			ours.Dtrsm('x', blas.Lower, blas.NoTrans, blas.Unit, 64, 64, 1, a, 64, a, 64)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			call()
		}()
	}
}

// agree fails t where got and want differ by more than 1e-12 relative to
// want's largest element.
func agree(t *testing.T, name string, got, want []float64) {
	t.Helper()
	scale := 0.0
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= 1e-12*scale) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			t.Errorf("%s: element %d is %v, want %v", name, i, got[i], want[i])
			return
		}
	}
}

// The recursive LU gives gonum's Dgetrf's factors and pivots, for square,
// tall and wide matrices stored with padding, and a singular one.
func TestGetrfMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, mn := range [][2]int{{200, 200}, {150, 90}, {90, 150}, {17, 40}, {130, 130}} {
		m, n := mn[0], mn[1]
		lda := n + 3
		a := make([]float64, m*lda)
		for i := range a {
			a[i] = rng.Float64()*2 - 1
		}
		if m == 130 { // rank deficient: row 7 is twice row 3
			for j := range n {
				a[7*lda+j] = 2 * a[3*lda+j]
			}
		}
		want := append([]float64(nil), a...)
		got, wantPiv, gotPiv := a, make([]int, min(m, n)), make([]int, min(m, n))
		lapackImpl.Dgetrf(m, n, want, lda, wantPiv)
		levelThree{}.getrf(m, n, got, lda, gotPiv)
		name := fmt.Sprintf("%d×%d", m, n)
		if fmt.Sprint(gotPiv) != fmt.Sprint(wantPiv) {
			t.Errorf("%s: pivots %v, want %v", name, gotPiv, wantPiv)
		}
		agree(t, name, got, want)
	}
}

// Factorisations on several goroutines at once share levelThree and its
// scratch, and each gives the bits it gives alone.
func TestLevelThreeConcurrent(t *testing.T) {
	const n, workers = 96, 4
	rng := rand.New(rand.NewPCG(5, 6))
	a := make([]float64, n*n)
	for i := range a {
		a[i] = rng.Float64()*2 - 1
	}
	spdA := make([]float64, n*n) // A·Aᵀ/n + I
	for i := range n {
		for j := range n {
			s := 0.0
			for k := range n {
				s += a[i*n+k] * a[j*n+k]
			}
			spdA[i*n+j] = s / n
		}
		spdA[i*n+i]++
	}
	factor := func() (chol, lu []float64) {
		chol, lu = append([]float64(nil), spdA...), append([]float64(nil), a...)
		if !lapackImpl.Dpotrf(blas.Lower, n, chol, n) {
			t.Error("Dpotrf failed")
		}
		levelThree{}.getrf(n, n, lu, n, make([]int, n))
		return chol, lu
	}
	wantChol, wantLU := factor()
	results := make([][2][]float64, workers)
	done := make(chan int)
	for w := range workers {
		go func() {
			for range 5 {
				c, l := factor()
				results[w] = [2][]float64{c, l}
			}
			done <- w
		}()
	}
	for range workers {
		w := <-done
		for k, want := range [2][]float64{wantChol, wantLU} {
			for i := range want {
				if math.Float64bits(results[w][k][i]) != math.Float64bits(want[i]) {
					t.Fatalf("worker %d, factorisation %d: element %d is %v, alone %v", w, k, i, results[w][k][i], want[i])
				}
			}
		}
	}
}

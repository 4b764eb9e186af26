package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/internal/kernel/parallel"
)

// rowsProblem is m rows of A and of C, each in its own slice followed by
// padding that C's writes must leave alone, and a k×n matrix B.
type rowsProblem[E elem] struct {
	m, n, k, ldb int
	a, c         [MaxRows][]E
	b            []E
}

// newRowsProblem makes a problem whose B has rows ldb elements apart.
func newRowsProblem[E elem](rng *rand.Rand, m, n, k, ldb int) rowsProblem[E] {
	pr := rowsProblem[E]{m: m, n: n, k: k, ldb: ldb}
	fill := func(size int) []E {
		x := make([]E, size)
		for i := range x {
			x[i] = E(rng.Float64()*2 - 1)
		}
		return x
	}
	for r := range m {
		pr.a[r] = fill(k)
		pr.c[r] = append(fill(n), sentinel, sentinel, sentinel)
	}
	pr.b = fill(max(k-1, 0)*pr.ldb + n)
	return pr
}

// run computes pr's rows on copies of C.
func (pr rowsProblem[E]) run(acc bool) [MaxRows][]E {
	var c [MaxRows][]E
	for r := range pr.m {
		c[r] = append([]E(nil), pr.c[r]...)
	}
	MulRows(pr.m, pr.n, pr.k, &pr.a, pr.b, pr.ldb, &c, acc)
	return c
}

// MulRows against a float64 loop over the definition, on every kernel
// set, both dtypes, every number of rows, with and without acc, for
// widths and depths on either side of the vector widths and the column
// blocks.
func TestMulRowsMatchesNaiveLoop(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		testMulRows[float64](t)
		testMulRows[float32](t)
	})
}

var rowsShapes = func() (s [][2]int) {
	for _, n := range []int{1, 3, 4, 5, 8, 13, 16, 17, 31, 64, 65, 100} {
		for _, k := range []int{1, 2, 7, 64, 67} {
			s = append(s, [2]int{n, k})
		}
	}
	return append(s, [2]int{0, 5}, [2]int{5, 0})
}()

func testMulRows[E elem](t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	eps := 0x1p-53
	if _, ok := any(E(0)).(float32); ok {
		eps = 0x1p-24
	}
	for m := 1; m <= MaxRows; m++ {
		for _, s := range rowsShapes {
			n, k := s[0], s[1]
			pr := newRowsProblem[E](rng, m, n, k, n+pad)
			for _, acc := range []bool{false, true} {
				got := pr.run(acc)
				for r := range m {
					for j, g := range got[r] {
						if j >= n {
							if g != sentinel {
								t.Fatalf("%T m=%d n=%d k=%d acc=%v: row %d's padding [%d] changed to %v", E(0), m, n, k, acc, r, j, g)
							}
							continue
						}
						want, mag := 0.0, 0.0
						if acc {
							want = float64(pr.c[r][j])
							mag = math.Abs(want)
						}
						for l := range k {
							v := float64(pr.a[r][l]) * float64(pr.b[l*pr.ldb+j])
							want += v
							mag += math.Abs(v)
						}
						if tol := 2 * float64(k+2) * eps * mag; !(math.Abs(float64(g)-want) <= tol) {
							t.Fatalf("%T m=%d n=%d k=%d acc=%v: C[%d][%d] = %v, want %v (±%g)", E(0), m, n, k, acc, r, j, g, want, tol)
						}
					}
				}
			}
		}
	}
}

// Each row MulRows computes has the bits of Mul's product of that row
// alone (a matrix–vector product): computing rows together changes no
// bit.
func TestMulRowsGiveTheOneRowBits(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		checkOneRowBits[float64](t)
		checkOneRowBits[float32](t)
	})
}

func checkOneRowBits[E elem](t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for m := 2; m <= MaxRows; m++ {
		for _, s := range rowsShapes {
			n, k := s[0], s[1]
			pr := newRowsProblem[E](rng, m, n, k, n+pad)
			for _, acc := range []bool{false, true} {
				got := pr.run(acc)
				for r := range m {
					one := Product{Acc: acc, M: 1, N: n, K: k, Lda: k, Ldb: pr.ldb, Ldc: n}
					c := append([]E(nil), pr.c[r][:n]...)
					Mul(nil, one, pr.a[r], pr.b, c)
					for j := range c {
						if got[r][j] != c[j] {
							t.Fatalf("%T m=%d n=%d k=%d acc=%v: C[%d][%d] = %v together, %v alone", E(0), m, n, k, acc, r, j, got[r][j], c[j])
						}
					}
				}
			}
		}
	}
}

func TestMulRowsAllocatesNothing(t *testing.T) {
	pr := newRowsProblem[float64](rand.New(rand.NewPCG(1, 1)), 3, 64, 64, 64)
	c := pr.c
	if n := testing.AllocsPerRun(10, func() { MulRows(pr.m, pr.n, pr.k, &pr.a, pr.b, pr.ldb, &c, false) }); n != 0 {
		t.Fatalf("MulRows allocates %v times a call", n)
	}
}

func TestMulRowsRejectsShortSlices(t *testing.T) {
	pr := newRowsProblem[float64](rand.New(rand.NewPCG(1, 1)), 2, 8, 8, 8)
	for _, f := range []func(){
		func() { MulRows(2, 8, 8, &pr.a, pr.b[:len(pr.b)-1], pr.ldb, &pr.c, false) },
		func() { MulRows(3, 8, 8, &pr.a, pr.b, pr.ldb, &pr.c, false) },
		func() { MulRows(5, 8, 8, &pr.a, pr.b, pr.ldb, &pr.c, false) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}

// BenchmarkFewRows times products of 1 to 4 rows by a 64×64 matrix, in
// GFLOP/s: as Mul computes the rows stacked (mul), and as MulRows
// computes them, each row a slice of its own (rows):
//
//	go test -run '^$' -bench FewRows ./internal/kernel/gemm/
func BenchmarkFewRows(b *testing.B) {
	forEachKernelB(b, func(b *testing.B) {
		for m := 1; m <= 4; m++ {
			s := [3]int{m, 64, 64}
			b.Run(fmt.Sprintf("f64/%dx64x64/mul", m), func(b *testing.B) { benchFewRows[float64](b, s) })
			b.Run(fmt.Sprintf("f64/%dx64x64/rows", m), func(b *testing.B) { benchMulRows[float64](b, m) })
			b.Run(fmt.Sprintf("f32/%dx64x64/mul", m), func(b *testing.B) { benchFewRows[float32](b, s) })
			b.Run(fmt.Sprintf("f32/%dx64x64/rows", m), func(b *testing.B) { benchMulRows[float32](b, m) })
		}
	})
}

func benchFewRows[E elem](b *testing.B, s [3]int) {
	pr := newProblem[E](rand.New(rand.NewPCG(1, 1)), s[0], s[1], s[2], false, false, false, false)
	e := parallel.NewExec(parallel.New(1))
	for b.Loop() {
		Mul(e, pr.p, pr.a, pr.b, pr.c)
	}
	reportFlops(b, s)
}

func benchMulRows[E elem](b *testing.B, m int) {
	pr := newRowsProblem[E](rand.New(rand.NewPCG(1, 1)), m, 64, 64, 64)
	for b.Loop() {
		MulRows(m, 64, 64, &pr.a, pr.b, pr.ldb, &pr.c, false)
	}
	reportFlops(b, [3]int{m, 64, 64})
}

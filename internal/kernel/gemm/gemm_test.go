package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/internal/kernel/parallel"
	"github.com/nabla-go/nabla/internal/kernel/race"
)

// problem is one product with its operands, C's initial value included,
// stored with padded leading dimensions so that writes outside C show.
type problem[E elem] struct {
	p       Product
	a, b, c []E
}

// pad is added to every leading dimension when a problem is padded.
const pad = 3

// sentinel fills the padding of C: a product must leave it alone.
const sentinel = -12345

func newProblem[E elem](rng *rand.Rand, m, n, k int, transA, transB, acc, padded bool) problem[E] {
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	p := Product{TransA: transA, TransB: transB, Acc: acc, M: m, N: n, K: k, Lda: ac, Ldb: bc, Ldc: n}
	if padded {
		p.Lda, p.Ldb, p.Ldc = p.Lda+pad, p.Ldb+pad, p.Ldc+pad
	}
	fill := func(rows, ld int) []E {
		x := make([]E, rows*ld)
		for i := range x {
			x[i] = E(rng.Float64()*2 - 1)
		}
		return x
	}
	pr := problem[E]{p: p, a: fill(ar, p.Lda), b: fill(br, p.Ldb), c: fill(m, p.Ldc)}
	for i := range m {
		for j := n; j < p.Ldc; j++ {
			pr.c[i*p.Ldc+j] = sentinel
		}
	}
	return pr
}

func (pr problem[E]) at(x []E, ld int, trans bool, i, j int) float64 {
	if trans {
		i, j = j, i
	}
	return float64(x[i*ld+j])
}

// check compares got, the result of pr, with a float64 triple loop: every
// element within a few roundings of the terms' magnitude, padding intact.
func (pr problem[E]) check(t *testing.T, got []E) {
	t.Helper()
	p := pr.p
	var z E
	eps := 0x1p-53
	if any(z) == any(float32(0)) {
		eps = 0x1p-24
	}
	for i := range p.M {
		for j := range p.Ldc {
			g := float64(got[i*p.Ldc+j])
			if j >= p.N {
				if g != sentinel {
					t.Fatalf("%+v: C[%d,%d] outside the product changed to %v", p, i, j, g)
				}
				continue
			}
			want, mag := 0.0, 0.0
			if p.Acc {
				want = float64(pr.c[i*p.Ldc+j])
				mag = math.Abs(want)
			}
			for l := range p.K {
				v := pr.at(pr.a, p.Lda, p.TransA, i, l) * pr.at(pr.b, p.Ldb, p.TransB, l, j)
				want += v
				mag += math.Abs(v)
			}
			if tol := 2 * float64(p.K+2) * eps * mag; !(math.Abs(g-want) <= tol) {
				t.Fatalf("%+v: C[%d,%d] = %v, want %v (±%g)", p, i, j, g, want, tol)
			}
		}
	}
}

// run computes pr on a copy of C with threads workers.
func (pr problem[E]) run(threads int) []E {
	c := append([]E(nil), pr.c...)
	var e *parallel.Exec
	if threads > 1 {
		pool := parallel.New(threads)
		defer pool.Close()
		e = parallel.NewExec(pool)
	}
	Mul(e, pr.p, pr.a, pr.b, c)
	return c
}

// shapes covers the edges of every kernel's blocking: one element, primes,
// tall and skinny, depth one, and sizes either side of mr, nr, kc and mc.
func shapes() [][3]int {
	s := [][3]int{
		{1, 1, 1}, {1, 1, 7}, {1, 9, 5}, {9, 1, 5}, {2, 3, 4}, {13, 17, 19}, {37, 41, 43},
		{300, 3, 2}, {3, 300, 2}, {13, 1, 37}, {1, 13, 37}, {33, 1, 64}, {1, 33, 64}, {1, 1, 3}, {5, 3, 600}, {20, 30, 1}, {1, 1, 300}, {64, 64, 64}, {100, 120, 90},
	}
	for _, ks := range available {
		for _, k := range [][5]int{
			{ks.f64.mr, ks.f64.nr, ks.f64.kc, ks.f64.mc, ks.f64.nc},
			{ks.f32.mr, ks.f32.nr, ks.f32.kc, ks.f32.mc, ks.f32.nc},
		} {
			mr, nr, kc, mc, nc := k[0], k[1], k[2], k[3], k[4]
			for _, d := range []int{-1, 0, 1} {
				s = append(s, [3]int{mr + d, nr + d, 5}, [3]int{mr, nr, kc + d},
					[3]int{mc + d, nr + 1, 3}, [3]int{2, nc + d, 3}, [3]int{mc + d, 2*nr + d, kc + d})
			}
		}
	}
	return s
}

func forEachKernel(t *testing.T, f func(t *testing.T)) {
	for _, name := range Kernels() {
		t.Run(name, func(t *testing.T) {
			prev, err := Use(name)
			if err != nil {
				t.Fatal(err)
			}
			defer Use(prev)
			f(t)
		})
	}
}

func TestMulMatchesTripleLoop(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		testShapes[float64](t)
		testShapes[float32](t)
	})
}

func testShapes[E elem](t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range shapes() {
		for flags := range 16 {
			ta, tb, acc, padded := flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
			pr := newProblem[E](rng, s[0], s[1], s[2], ta, tb, acc, padded)
			pr.check(t, pr.run(1))
		}
	}
}

// Every element is computed the same way whatever the number of threads.
func TestMulIsTheSameOnAnyNumberOfThreads(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, s := range [][3]int{{64, 256, 784}, {200, 130, 300}, {7, 3000, 20}, {500, 9, 40}} {
			for flags := range 8 {
				pr := newProblem[float64](rng, s[0], s[1], s[2], flags&1 != 0, flags&2 != 0, flags&4 != 0, false)
				one := pr.run(1)
				pr.check(t, one)
				for _, threads := range []int{2, 3} {
					got := pr.run(threads)
					for i := range one {
						if math.Float64bits(got[i]) != math.Float64bits(one[i]) {
							t.Fatalf("%+v: %d threads: C[%d] = %v, one thread %v", pr.p, threads, i, got[i], one[i])
						}
					}
				}
			}
		}
	})
}

// NaN and infinities propagate as in the triple loop, in every path:
// 0·Inf is NaN even where a row of the other operand is zero.
func TestMulPropagatesNaN(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		for _, s := range [][3]int{{1, 5, 4}, {5, 1, 4}, {20, 20, 20}} {
			for flags := range 4 {
				ta, tb := flags&1 != 0, flags&2 != 0
				pr := newProblem[float64](rand.New(rand.NewPCG(5, 6)), s[0], s[1], s[2], ta, tb, false, false)
				clear(pr.a)
				pr.b[0] = math.Inf(1) // B(0,0): every C(i,0) sums 0·Inf
				got := pr.run(1)
				if !math.IsNaN(got[0]) {
					t.Errorf("%+v: C[0,0] = %v, want NaN", pr.p, got[0])
				}
			}
		}
	})
}

func TestMulRejectsShortSlices(t *testing.T) {
	p := Product{M: 2, N: 2, K: 2, Lda: 2, Ldb: 2, Ldc: 2}
	defer func() {
		if r := recover(); r == nil || fmt.Sprint(r) != "gemm: B is 2×2 (leading dimension 2) but has 3 elements" {
			t.Fatalf("recovered %v", r)
		}
	}()
	Mul[float64](nil, p, make([]float64, 4), make([]float64, 3), make([]float64, 4))
}

// A machine that runs the same product again allocates nothing, and
// neither do serial callers.
func TestMulReusesBuffers(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop values: allocations are counted without it")
	}
	forEachKernel(t, func(t *testing.T) {
		pool := parallel.New(2)
		defer pool.Close()
		e := parallel.NewExec(pool)
		for _, s := range [][3]int{{64, 256, 784}, {32, 1, 33}, {1, 32, 33}, {9, 1, 2}, {300, 40, 300}} {
			for flags := range 8 {
				pr := newProblem[float32](rand.New(rand.NewPCG(7, 8)), s[0], s[1], s[2], flags&1 != 0, flags&2 != 0, flags&4 != 0, false)
				Mul(e, pr.p, pr.a, pr.b, pr.c)
				if n := testing.AllocsPerRun(10, func() { Mul(e, pr.p, pr.a, pr.b, pr.c) }); n != 0 {
					t.Fatalf("%+v: %v allocations per product", pr.p, n)
				}
				if n := testing.AllocsPerRun(10, func() { Mul(nil, pr.p, pr.a, pr.b, pr.c) }); n != 0 {
					t.Fatalf("%+v: %v allocations per serial product", pr.p, n)
				}
			}
		}
	})
}

// FuzzMul checks a product on every kernel set.
func FuzzMul(f *testing.F) {
	f.Add(uint16(1), uint16(1), uint16(1), uint8(0), uint8(0), uint64(1))
	f.Add(uint16(7), uint16(17), uint16(257), uint8(5), uint8(1), uint64(2))
	f.Add(uint16(97), uint16(9), uint16(3), uint8(15), uint8(2), uint64(3))
	f.Add(uint16(25), uint16(33), uint16(260), uint8(16), uint8(0), uint64(4))
	f.Fuzz(func(t *testing.T, m, n, k uint16, flags, threads uint8, seed uint64) {
		m, n, k = m%200, n%200, k%300
		ta, tb, acc, padded := flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
		th := 1 + int(threads%3)
		forEachKernel(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 9))
			if flags&16 != 0 {
				pr := newProblem[float32](rng, int(m), int(n), int(k), ta, tb, acc, padded)
				pr.check(t, pr.run(th))
				return
			}
			pr := newProblem[float64](rng, int(m), int(n), int(k), ta, tb, acc, padded)
			pr.check(t, pr.run(th))
		})
	})
}

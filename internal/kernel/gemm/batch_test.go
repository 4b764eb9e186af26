package gemm

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/internal/kernel/parallel"
)

// MulBatch gives each product the bits of its own call of Mul, for every
// flag, on products that take each of Mul's paths (a matrix–vector
// product, dot products, packed tiles: attention's 64×64·16 with B
// transposed among them, and depth 0), with an operand shared (stride 0)
// or not, serially and on an Exec's threads; and it panics, naming the
// product, where a slice is too short for the last one.
func TestMulBatchGivesMulsBits(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		checkBatch[float32](t)
		checkBatch[float64](t)
	})
}

func checkBatch[E elem](t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	pool := parallel.New(3)
	defer pool.Close()
	for _, s := range [][3]int{{64, 64, 16}, {64, 16, 64}, {1, 9, 5}, {9, 1, 5}, {8, 12, 70}, {13, 17, 19}, {5, 7, 0}} {
		for flags := range 8 {
			ta, tb, acc := flags&1 != 0, flags&2 != 0, flags&4 != 0
			for _, shared := range []int{-1, 0, 1} { // no operand shared, A, B
				const batch = 3
				ps := make([]problem[E], batch)
				for i := range ps {
					ps[i] = newProblem[E](rng, s[0], s[1], s[2], ta, tb, acc, false)
				}
				p := ps[0].p
				la, lb, lc := len(ps[0].a), len(ps[0].b), len(ps[0].c)
				var a, b, c []E
				for i := range ps {
					if shared == 0 {
						ps[i].a = ps[0].a
					}
					if shared == 1 {
						ps[i].b = ps[0].b
					}
					a, b, c = append(a, ps[i].a...), append(b, ps[i].b...), append(c, ps[i].c...)
				}
				sa, sb := la, lb
				if shared == 0 {
					a, sa = a[:la], 0
				}
				if shared == 1 {
					b, sb = b[:lb], 0
				}
				for _, e := range []*parallel.Exec{nil, parallel.NewExec(pool)} {
					got := append([]E(nil), c...)
					MulBatch(e, p, batch, sa, sb, lc, a, b, got)
					for i := range ps {
						want := append([]E(nil), ps[i].c...)
						Mul(e, p, ps[i].a, ps[i].b, want)
						for j, v := range want {
							if g := got[i*lc+j]; g != v {
								t.Fatalf("%s: product %d, C[%d] = %v batched, %v alone",
									fmt.Sprintf("%T %+v shared=%d exec=%v", E(0), p, shared, e != nil), i, j, g, v)
							}
						}
					}
				}
			}
		}
	}
	p := Product{M: 2, N: 2, K: 2, Lda: 2, Ldb: 2, Ldc: 2}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "product 2 of 3") {
			t.Fatalf("MulBatch with a short C: recovered %v, want a panic naming product 2 of 3", r)
		}
	}()
	MulBatch(nil, p, 3, 4, 4, 4, make([]E, 12), make([]E, 12), make([]E, 11))
}

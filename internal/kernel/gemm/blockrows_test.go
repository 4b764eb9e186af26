package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Products of A transposed computed a block of BlockRows rows at a time,
// each block a product of its own, give the full product's bits, for
// every kernel, on one thread and on three, with B as stored and
// transposed, rows either side of mc and 2·mc (B packed or read where it
// is stored), few columns (the narrow tiles) and depths either side of kc;
// blocks of one tile and of many; and BlockRows declines the products it
// cannot cut.
func TestBlockRowsGiveTheFullProductsBits(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		checkBlockRows[float64](t)
		checkBlockRows[float32](t)
	})
}

func checkBlockRows[E elem](t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	k := kernelFor[E]()
	for _, m := range []int{2, k.mr + 1, k.mc - 1, 2*k.mc + 1, 256, 10} {
		for _, n := range []int{3, 10, 784} {
			for _, depth := range []int{2, 64, k.kc + 3} {
				for flags := range 4 {
					tb, padded := flags&1 != 0, flags&2 != 0
					pr := newProblem[E](rng, m, n, depth, true, tb, false, padded)
					for _, elems := range []int{1, 4096} {
						r := BlockRows[E](pr.p, elems)
						if r <= 0 || r%tilesFor[E](pr.p).mr != 0 {
							t.Fatalf("%+v: BlockRows = %d, want a positive multiple of the tile height", pr.p, r)
						}
						for _, threads := range []int{1, 3} {
							name := fmt.Sprintf("%T %+v rows=%d threads=%d", E(0), pr.p, r, threads)
							want := pr.run(threads)
							got := pr.runBlocks(threads, r)
							for i := range want {
								if got[i] != want[i] {
									t.Fatalf("%s: C[%d] = %v by blocks, %v in full", name, i, got[i], want[i])
								}
							}
						}
					}
				}
			}
		}
	}
	for _, p := range []Product{
		{M: 8, N: 8, K: 8, Lda: 8, Ldb: 8, Ldc: 8},               // A as stored: blocks of one row are vector products
		{TransA: true, M: 8, N: 8, K: 1, Lda: 8, Ldb: 8, Ldc: 8}, // depth 1
		{TransA: true, M: 1, N: 8, K: 8, Lda: 1, Ldb: 8, Ldc: 8}, // one row
	} {
		if r := BlockRows[E](p, 64); r != 0 {
			t.Errorf("%+v: BlockRows = %d, want 0", p, r)
		}
	}
}

// runBlocks computes pr on a copy of C a block of rows rows at a time.
func (pr problem[E]) runBlocks(threads, rows int) []E {
	c := append([]E(nil), pr.c...)
	p := pr.p
	for r0 := 0; r0 < p.M; r0 += rows {
		q := p
		q.M = min(rows, p.M-r0)
		pr := problem[E]{p: q, a: pr.a[r0:], b: pr.b, c: c[r0*p.Ldc:]}
		block := pr.run(threads)
		copy(c[r0*p.Ldc:], block)
	}
	return c
}

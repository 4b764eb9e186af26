package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Products that read A where it is stored (a set's microDirect, or
// microDirectT for a transposed A; where B is read in place, or in a
// piece of the product with one panel of B) give the bits of the same
// products with every panel of A packed, on one thread and on three
// (whose pieces cut the panels), for every flag, for rows either side of
// the block (mc) and of the bound on reading B in place (2·mc), and for
// columns either side of one panel (nr).
func TestDirectAGivesThePackedBits(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		checkDirect[float32](t)
		checkDirect[float64](t)
	})
}

func checkDirect[E elem](t *testing.T) {
	k := kernelOf[E](active)
	if k.microDirect == nil || k.microDirectT == nil {
		t.Skipf("%s has no kernels reading A in place", active.name)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, m := range []int{k.mr + 1, k.mc + 1, 2*k.mc + 1, 3*k.mc + 5} {
		for _, n := range []int{k.nr - 3, k.nr, k.nr + 1, 3 * k.nr} {
			for _, depth := range []int{16, k.kc + 3} {
				for flags := range 16 {
					ta, tb, acc, padded := flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
					pr := newProblem[E](rng, m, n, depth, ta, tb, acc, padded)
					for _, threads := range []int{1, 3} {
						got := pr.run(threads)
						pr.check(t, got)
						direct, directT := k.microDirect, k.microDirectT
						k.microDirect, k.microDirectT = nil, nil
						want := pr.run(threads)
						k.microDirect, k.microDirectT = direct, directT
						for i := range want {
							if got[i] != want[i] {
								t.Fatalf("%s: C[%d] = %v reading A in place, %v packed",
									fmt.Sprintf("%T %+v threads=%d", E(0), pr.p, threads), i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Products with few columns that run on a set's narrow tiles give the bits
// of its own wide tiles, on one thread and on three, for every flag and
// for sizes either side of both sets' blocks (mc, kc).
func TestNarrowTilesGiveTheWideTilesBits(t *testing.T) {
	for _, ks := range available {
		if ks.narrow == nil {
			continue
		}
		t.Run(ks.name, func(t *testing.T) {
			prev, err := Use(ks.name)
			if err != nil {
				t.Fatal(err)
			}
			defer Use(prev)
			checkNarrow[float32](t, ks)
			checkNarrow[float64](t, ks)
		})
	}
}

func checkNarrow[E elem](t *testing.T, ks *kernels) {
	rng := rand.New(rand.NewPCG(5, 6))
	wide, narrow := kernelOf[E](ks), kernelOf[E](ks.narrow)
	var ms []int
	for _, mc := range []int{wide.mc, narrow.mc} {
		ms = append(ms, mc-1, mc+1, 2*mc, 2*mc+1)
	}
	ms = append(ms, 1, 7, 64)
	for _, m := range ms {
		for _, n := range []int{2, narrow.nr - 1, narrow.nr} {
			for _, k := range []int{16, wide.kc + 3} {
				for flags := range 16 {
					ta, tb, acc, padded := flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
					pr := newProblem[E](rng, m, n, k, ta, tb, acc, padded)
					for _, threads := range []int{1, 3} {
						name := fmt.Sprintf("%T %+v threads=%d", E(0), pr.p, threads)
						got := pr.run(threads)
						pr.check(t, got)
						set := ks.narrow
						ks.narrow = nil
						want := pr.run(threads)
						ks.narrow = set
						for i := range want {
							if got[i] != want[i] {
								t.Fatalf("%s: C[%d] = %v on the narrow tiles, %v on the wide ones", name, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// geluDeriv gives the bits of the ops it stands for, each run by its own
// Forward over the whole tensor, in both dtypes, for lengths either side
// of its block, with -0, ±Inf, NaN, and values where Φ and φ underflow or
// round to 1; in place too.
func TestGELUDerivGivesTheOpsBits(t *testing.T) {
	for _, dtype := range dtypes {
		for _, n := range []int{1, 7, softmaxBlock, softmaxBlock + 9, 5*softmaxBlock + 3} {
			t.Run(fmt.Sprintf("%v/n=%d", dtype, n), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), 11))
				xs := make([]float64, n)
				for i := range xs {
					xs[i] = rng.NormFloat64() * 3
				}
				specials := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), -40, 40, -9, 1e-30}
				for i, v := range specials {
					xs[(i*37)%n] = v
				}
				g := graph.New()
				x := g.Input("x", dtype, n)
				feeds := map[*graph.Node]*tensor.Dense{x: dense(t, dtype, []int{n}, xs...)}
				got := graph.Float64s(eval(t, geluDeriv(x), feeds))
				want := graph.Float64s(eval(t, geluDerivOf(x), feeds))
				in := dense(t, dtype, []int{n}, xs...)
				if err := (geluDerivOp{}).Forward(in, []*tensor.Dense{in}); err != nil {
					t.Fatal(err)
				}
				inPlace := graph.Float64s(in)
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("x = %v: %v, the ops give %v", xs[i], got[i], want[i])
					}
					if math.Float64bits(inPlace[i]) != math.Float64bits(want[i]) {
						t.Fatalf("x = %v, in place: %v, the ops give %v", xs[i], inPlace[i], want[i])
					}
				}
			})
		}
	}
}

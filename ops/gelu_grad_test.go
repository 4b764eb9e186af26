package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// geluDeriv gives, in float64, the bits of the ops it stands for, each
// run by its own Forward over the whole tensor, and in float32 values
// within vmath.GELUDeriv32's bound of Φ(x) + x·φ(x) in float64
// (6·2^-24·(Φ + |x|·φ), or 2^-26 below -5.5), for lengths either side of
// its block, with -0, ±Inf, NaN, and values where Φ and φ underflow or
// round to 1; in place too, with the same bits.
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
					if dtype == graph.Float32 {
						x := float64(float32(xs[i]))
						cdf, pdf := 0.5*math.Erfc(-x*sqrtHalf), math.Exp(-x*x/2)*invSqrt2Pi
						ref, tol := cdf+x*pdf, 6*0x1p-24*(cdf+math.Abs(x)*pdf)
						if x < -5.5 {
							tol = max(tol, 0x1p-26)
						}
						if math.IsInf(x, 0) || x != x {
							ref, tol = math.NaN(), 0 // x·φ is ∞·0, as in the ops
						}
						if d := math.Abs(got[i] - ref); !(d <= tol+0x1p-149) && !(ref != ref && got[i] != got[i]) {
							t.Fatalf("x = %v: %v, want %v within %v", x, got[i], ref, tol)
						}
						want[i] = got[i]
					}
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("x = %v: %v, the ops give %v", xs[i], got[i], want[i])
					}
					if math.Float64bits(inPlace[i]) != math.Float64bits(want[i]) {
						t.Fatalf("x = %v, in place: %v, want %v", xs[i], inPlace[i], want[i])
					}
				}
			})
		}
	}
}

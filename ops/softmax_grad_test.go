package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// softmaxGrad gives the bits of the ops it stands for, Mul(y, Sub(g,
// SumKeepDims(Mul(g, y), -1))), each run by its own Forward, in both
// dtypes, for rows shorter than, as long as and longer than a block (and
// not multiples of four), with -0, ±Inf and NaN among the values.
func TestSoftmaxGradGivesTheOpsBits(t *testing.T) {
	for _, dtype := range dtypes {
		for _, n := range []int{1, 3, 16, 64, softmaxBlock, softmaxBlock + 5, 3*softmaxBlock + 2} {
			t.Run(fmt.Sprintf("%v/n=%d", dtype, n), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), 9))
				rows := 2*softmaxBlock/n + 20
				ys, gs := make([]float64, rows*n), make([]float64, rows*n)
				for i := range ys {
					ys[i], gs[i] = rng.Float64(), rng.NormFloat64()
				}
				specials := []float64{math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 0}
				for r := range min(rows, len(specials)) {
					gs[r*n+r%n] = specials[r]
				}
				ys[len(ys)-1] = math.NaN()
				g := graph.New()
				y := g.Input("y", dtype, rows, n)
				gr := g.Input("g", dtype, rows, n)
				feeds := map[*graph.Node]*tensor.Dense{y: dense(t, dtype, []int{rows, n}, ys...), gr: dense(t, dtype, []int{rows, n}, gs...)}
				got := graph.Float64s(eval(t, softmaxGrad(y, gr), feeds))
				want := graph.Float64s(eval(t, softmaxGradOf(y, gr, -1), feeds))
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
						t.Fatalf("element %d: %v, the ops give %v", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// sumProducts, which forms the products a block at a time, adds them as
// sumFloats adds them all formed at once, for every length up to four
// blocks.
func TestSumProductsIsSumFloats(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for n := 0; n <= 4*softmaxBlock+3; n++ {
		g, y, p := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range g {
			g[i], y[i] = float32(rng.NormFloat64()*1e3), float32(rng.Float64())
			p[i] = g[i] * y[i]
		}
		if got, want := sumProducts(g, y), sumFloats(p); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("n=%d: %v, sumFloats gives %v", n, got, want)
		}
	}
}

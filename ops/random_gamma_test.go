package ops

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mathext"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/stattest"
)

// drawGamma draws RandomGamma of the concentrations alpha at step 0.
func drawGamma(t *testing.T, s Stream, dtype tensor.Dtype, alpha []float64) []float64 {
	t.Helper()
	a, err := graph.FromFloat64s(dtype, alpha, len(alpha))
	if err != nil {
		t.Fatal(err)
	}
	out := graph.NewDense(dtype, len(alpha))
	if err := (randomGammaOp{s: s}).Forward(out, []*tensor.Dense{graph.NewDense(graph.Float64), a}); err != nil {
		t.Fatal(err)
	}
	return graph.Float64s(out)
}

// 2·10⁵ draws of each concentration, below 1 (the boosted branch), at 1
// and above, pass the Kolmogorov–Smirnov test against the gamma distribution
// function (gonum's regularized incomplete gamma) at level 0.001 (√n·D < 1.95) and have its mean
// and variance within five standard errors; float32 draws too.
func TestRandomGammaKS(t *testing.T) {
	const n = 200_000
	for i, alpha := range []float64{0.05, 0.3, 1, 2.5, 40} {
		for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
			if alpha < 0.1 && dtype == graph.Float32 {
				continue // 1% of the draws fall below float32's smallest normal, floored there: ties the test does not allow
			}
			a := make([]float64, n)
			for j := range a {
				a[j] = alpha
			}
			x := drawGamma(t, Stream{Seed: 7, ID: uint32(i)}, dtype, a)
			mean, variance, _, _ := moments(x)
			what := fmt.Sprintf("%v α=%v", dtype, alpha)
			// Standard errors: √(α/n) for the mean, √((μ₄ − σ⁴)/n) with
			// μ₄ = 3α(α+2) for the variance.
			if se := math.Sqrt(alpha / n); math.Abs(mean-alpha) > 5*se {
				t.Errorf("%s: mean %v, want %v ± %v", what, mean, alpha, 5*se)
			}
			if se := math.Sqrt((3*alpha*(alpha+2) - alpha*alpha) / n); math.Abs(variance-alpha) > 5*se {
				t.Errorf("%s: variance %v, want %v ± %v", what, variance, alpha, 5*se)
			}
			cdf := func(x float64) float64 { return mathext.GammaIncReg(alpha, x) }
			d := stattest.KS(x, cdf)
			t.Logf("%s: KS √n·D = %.3f, p = %.3f", what, d, stattest.KolmogorovP(d))
			if d > 1.95 {
				t.Errorf("%s: KS √n·D = %v, over 1.95", what, d)
			}
			if slices.Min(x) <= 0 {
				t.Errorf("%s: a draw %v is not positive", what, slices.Min(x))
			}
		}
	}
}

// Each element owns its counters: a draw of a prefix of the
// concentrations is the prefix of the draw, whatever the other elements'
// rejections; other streams and steps differ; a concentration that is not
// positive gives NaN, and a tiny one a positive value.
func TestRandomGammaCounters(t *testing.T) {
	alpha := []float64{0.5, 3, 1e-3, 100, 1, 0.9}
	s := Stream{Seed: 3, ID: 1}
	full := drawGamma(t, s, graph.Float64, alpha)
	if prefix := drawGamma(t, s, graph.Float64, alpha[:3]); !slices.Equal(prefix, full[:3]) {
		t.Errorf("prefix: got %v, want %v", prefix, full[:3])
	}
	other := drawGamma(t, Stream{Seed: 3, ID: 2}, graph.Float64, alpha)
	for i := range full {
		if full[i] == other[i] || !(full[i] > 0) {
			t.Errorf("element %d: stream 1 gave %v, stream 2 %v", i, full[i], other[i])
		}
	}
	bad := drawGamma(t, s, graph.Float64, []float64{0, -1, math.NaN(), math.Inf(1)})
	for i, v := range bad {
		if !math.IsNaN(v) {
			t.Errorf("bad concentration %d: got %v, want NaN", i, v)
		}
	}
}

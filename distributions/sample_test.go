package distributions_test

import (
	"math"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/distributions"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/stattest"
	"github.com/nabla-go/nabla/ops"
)

// sampleMoments returns the mean and variance of x.
func sampleMoments(x []float64) (mean, variance float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(x))
}

// 10⁶ samples of Normal(1.5, 2), Laplace(−1, 0.5), Uniform(−2, 3) and
// Bernoulli(logit 0.4) have the distribution's mean and variance within
// five standard errors (σ⁴ for the variance's: √((μ₄ − σ⁴)/n)), and the
// continuous ones pass the Kolmogorov–Smirnov test at level 0.001
// (√n·D < 1.95).
func TestSampleMoments(t *testing.T) {
	const n = 1_000_000
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 2024)
	full := func(v float64) *graph.Node { return ops.BroadcastTo(g.Scalar(v, graph.Float64), n) }
	normal := distributions.NewNormal(full(1.5), g.Scalar(2, graph.Float64))
	laplace := distributions.NewLaplace(full(-1), g.Scalar(0.5, graph.Float64))
	uniform := distributions.NewUniform(full(-2), g.Scalar(3, graph.Float64))
	bernoulli := distributions.NewBernoulli(full(0.4))
	cases := []struct {
		name           string
		d              distributions.Distribution
		mean, variance float64
		mu4            float64 // fourth central moment
		cdf            func(float64) float64
	}{
		{"Normal", normal, 1.5, 4, 3 * 16, func(x float64) float64 { return 0.5 * math.Erfc(-(x-1.5)/2/math.Sqrt2) }},
		{"Laplace", laplace, -1, 0.5, 24 * math.Pow(0.5, 4), func(x float64) float64 {
			if x < -1 {
				return 0.5 * math.Exp((x+1)/0.5)
			}
			return 1 - 0.5*math.Exp(-(x+1)/0.5)
		}},
		{"Uniform", uniform, 0.5, 25.0 / 12, math.Pow(5, 4) / 80, func(x float64) float64 { return min(max((x+2)/5, 0), 1) }},
	}
	p := 1 / (1 + math.Exp(-0.4))
	outs := []*graph.Node{bernoulli.Sample(gen)}
	for _, c := range cases {
		outs = append(outs, c.d.Sample(gen))
	}
	got := run(t, gen.Updates(), outs...)
	for i, c := range cases {
		mean, variance := sampleMoments(got[i+1])
		if tol := 5 * math.Sqrt(c.variance/n); math.Abs(mean-c.mean) > tol {
			t.Errorf("%s mean: got %v, want %v ± %v", c.name, mean, c.mean, tol)
		}
		if tol := 5 * math.Sqrt((c.mu4-c.variance*c.variance)/n); math.Abs(variance-c.variance) > tol {
			t.Errorf("%s variance: got %v, want %v ± %v", c.name, variance, c.variance, tol)
		}
		d := stattest.KS(got[i+1], c.cdf)
		t.Logf("%s: KS √n·D = %.3f, p = %.3f", c.name, d, stattest.KolmogorovP(d))
		if d > 1.95 {
			t.Errorf("%s: √n·D = %v, over 1.95", c.name, d)
		}
	}
	ones := 0.0
	for _, v := range got[0] {
		ones += v
	}
	if tol := 5 * math.Sqrt(p*(1-p)/n); math.Abs(ones/n-p) > tol {
		t.Errorf("Bernoulli frequency: got %v, want %v ± %v", ones/n, p, tol)
	}
}

// Pearson's χ² of 10⁵ Categorical draws of probabilities softmax(logits)
// over 4 classes is below 16.27, the 0.001 quantile of χ² with 3 degrees
// of freedom; each draw is a class index.
func TestCategoricalChiSquared(t *testing.T) {
	const n = 100_000
	logits := []float64{0.1, -2, 1.3, 0.4}
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 5)
	row := constant(t, g, graph.Float64, logits, 1, 4)
	d := distributions.NewCategorical(ops.BroadcastTo(row, n, 4))
	sample := d.Sample(gen) // before gen.Updates(), which is nil until the first draw
	draws := run(t, gen.Updates(), sample)[0]
	counts := make([]float64, 4)
	for i, c := range draws {
		if c != math.Trunc(c) || c < 0 || c > 3 {
			t.Fatalf("draw %d: %v is not a class", i, c)
		}
		counts[int(c)]++
	}
	z := 0.0
	for _, l := range logits {
		z += math.Exp(l)
	}
	want := make([]float64, len(logits))
	for k, l := range logits {
		want[k] = n * math.Exp(l) / z
	}
	chi2 := stattest.ChiSquared(counts, want)
	t.Logf("χ² = %.2f, p = %.3f", chi2, stattest.ChiSquaredP(chi2, len(logits)-1))
	if chi2 > 16.27 {
		t.Errorf("χ² = %v over 16.27 (counts %v)", chi2, counts)
	}
}

// RSample carries gradients to the parameters: for a location-scale
// sample x = loc + scale·ε, d Σx/d loc is the count and d Σx/d scale is
// Σ(x−loc)/scale; for Uniform, d Σx/d low = Σ(1−u), d Σx/d high = Σu with
// u = (x−low)/(high−low). Sample carries none.
func TestRSampleGradients(t *testing.T) {
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 3)
	a := g.Param("a", graph.NewDense(graph.Float64))
	b := g.Param("b", graph.NewDense(graph.Float64))
	graph.SetFloat(a.Value(), 0, 0.5)
	graph.SetFloat(b.Value(), 0, 2)
	for _, c := range []struct {
		name string
		d    distributions.Reparameterized
	}{
		{"Normal", distributions.NewNormal(ops.BroadcastTo(a, 7), b)},
		{"Laplace", distributions.NewLaplace(ops.BroadcastTo(a, 7), b)},
		{"Uniform", distributions.NewUniform(ops.BroadcastTo(a, 7), b)},
	} {
		x := c.d.RSample(gen)
		grads, err := compile.Grad(ops.Sum(x), a, b)
		if err != nil {
			t.Fatal(err)
		}
		v := run(t, gen.Updates(), x, grads[0], grads[1])
		var wantA, wantB float64
		for _, xi := range v[0] {
			if c.name == "Uniform" {
				u := (xi - 0.5) / 1.5
				wantA, wantB = wantA+1-u, wantB+u
			} else {
				wantA, wantB = wantA+1, wantB+(xi-0.5)/2
			}
		}
		if math.Abs(v[1][0]-wantA) > 1e-12 || math.Abs(v[2][0]-wantB) > 1e-12 {
			t.Errorf("%s: gradients %v, %v, want %v, %v", c.name, v[1][0], v[2][0], wantA, wantB)
		}
		if _, err := compile.Grad(ops.Sum(c.d.Sample(gen)), a); err == nil || !strings.Contains(err.Error(), "has no gradient") {
			t.Errorf("%s: gradient of Sample: got %v, want none", c.name, err)
		}
	}
}

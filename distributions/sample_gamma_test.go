package distributions_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mathext"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/distributions"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/stattest"
	"github.com/nabla-go/nabla/ops"
)

// checkMoments checks that the sample x has mean and variance within five
// standard errors of want's: √(σ²/n) for the mean, √((m₄ − s⁴)/n) for the
// variance, m₄ the sample's fourth central moment.
func checkMoments(t *testing.T, what string, x []float64, mean, variance float64) {
	t.Helper()
	m, v := sampleMoments(x)
	m4 := 0.0
	for _, xi := range x {
		m4 += math.Pow(xi-m, 4)
	}
	n := float64(len(x))
	m4 /= n
	if se := math.Sqrt(variance / n); math.Abs(m-mean) > 5*se {
		t.Errorf("%s: mean %v, want %v ± %v", what, m, mean, 5*se)
	}
	if se := math.Sqrt((m4 - v*v) / n); math.Abs(v-variance) > 5*se {
		t.Errorf("%s: variance %v, want %v ± %v", what, v, variance, 5*se)
	}
}

// 2·10⁵ samples (seeded) of Gamma(0.4, 2), Gamma(3, 0.5), Beta(0.5, 2.5),
// StudentT(9, 1, 2) and each category of Dirichlet(0.5, 1, 2.5) have the
// distribution's mean and variance (as Mean and Variance give them)
// within five standard errors; the Gamma and Beta samples pass the
// Kolmogorov–Smirnov test at level 0.001 (√n·D < 1.95) against the
// regularized incomplete gamma and beta functions.
func TestGammaFamilySamples(t *testing.T) {
	const n = 200_000
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 17)
	full := func(v float64) *graph.Node { return ops.BroadcastTo(g.Scalar(v, graph.Float64), n) }
	cases := []struct {
		name string
		d    distributions.Distribution
		cdf  func(float64) float64
	}{
		{"Gamma(0.4, 2)", distributions.NewGamma(full(0.4), full(2)), func(x float64) float64 { return mathext.GammaIncReg(0.4, 2*x) }},
		{"Gamma(3, 0.5)", distributions.NewGamma(full(3), full(0.5)), func(x float64) float64 { return mathext.GammaIncReg(3, 0.5*x) }},
		{"Beta(0.5, 2.5)", distributions.NewBeta(full(0.5), full(2.5)), func(x float64) float64 { return mathext.RegIncBeta(0.5, 2.5, x) }},
		{"StudentT(9, 1, 2)", distributions.NewStudentT(full(9), full(1), full(2)), nil},
	}
	var outs []*graph.Node
	for _, c := range cases {
		outs = append(outs, c.d.Sample(gen), c.d.Mean(), c.d.Variance())
	}
	dir := distributions.NewDirichlet(ops.BroadcastTo(constant(t, g, graph.Float64, []float64{0.5, 1, 2.5}, 1, 3), n, 3))
	outs = append(outs, dir.Sample(gen), dir.Mean(), dir.Variance())
	vals := run(t, gen.Updates(), outs...)
	for i, c := range cases {
		x := vals[3*i]
		checkMoments(t, c.name, x, vals[3*i+1][0], vals[3*i+2][0])
		if c.cdf != nil {
			d := stattest.KS(x, c.cdf)
			t.Logf("%s: KS √n·D = %.3f, p = %.3f", c.name, d, stattest.KolmogorovP(d))
			if d > 1.95 {
				t.Errorf("%s: KS √n·D = %v, over 1.95", c.name, d)
			}
		}
	}
	d := vals[3*len(cases)]
	for k := range 3 {
		col := make([]float64, n)
		for i := range col {
			col[i] = d[3*i+k]
		}
		sum := d[3*k] + d[3*k+1] + d[3*k+2] // each draw lies on the simplex
		if math.Abs(sum-1) > 1e-15 {
			t.Errorf("Dirichlet draw %d sums to %v", k, sum)
		}
		checkMoments(t, fmt.Sprintf("Dirichlet category %d", k), col, vals[3*len(cases)+1][k], vals[3*len(cases)+2][k])
	}
}

// 2·10⁵ samples of a two-dimensional MultivariateNormal have its mean and
// its covariance L·Lᵀ within five standard errors, and RSample carries
// gradients: d Σx/d loc is the count per coordinate and d Σxᵢ/d Lᵢⱼ is
// Σεⱼ, ε = L⁻¹(x − loc), zero above the diagonal.
func TestMultivariateNormalSamples(t *testing.T) {
	const n = 200_000
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 19)
	loc := g.Param("loc", graph.NewDense(graph.Float64, 2))
	l := g.Param("l", graph.NewDense(graph.Float64, 2, 2))
	for i, v := range []float64{1, -2} {
		graph.SetFloat(loc.Value(), i, v)
	}
	for i, v := range []float64{1.5, 7, -0.6, 0.8} { // 7 lies above the diagonal: not read
		graph.SetFloat(l.Value(), i, v)
	}
	d := distributions.NewMultivariateNormal(ops.BroadcastTo(loc, n, 2), l)
	x := d.RSample(gen)
	grads, err := compile.Grad(ops.Sum(x), loc, l)
	if err != nil {
		t.Fatal(err)
	}
	vals := run(t, gen.Updates(), x, grads[0], grads[1])
	xs, ys := make([]float64, n), make([]float64, n)
	cov, e0, e1 := 0.0, 0.0, 0.0
	for i := range n {
		xs[i], ys[i] = vals[0][2*i], vals[0][2*i+1]
		cov += (xs[i] - 1) * (ys[i] + 2)
		a := (xs[i] - 1) / 1.5
		e0 += a
		e1 += (ys[i] + 2 + 0.6*a) / 0.8
	}
	// Σ = L·Lᵀ = [[2.25, −0.9], [−0.9, 1]].
	checkMoments(t, "x", xs, 1, 2.25)
	checkMoments(t, "y", ys, -2, 1)
	// The sample covariance's standard error is √((σₓ²σᵧ² + σₓᵧ²)/n).
	if se := math.Sqrt((2.25 + 0.81) / n); math.Abs(cov/n+0.9) > 5*se {
		t.Errorf("covariance %v, want −0.9 ± %v", cov/n, 5*se)
	}
	if vals[1][0] != n || vals[1][1] != n {
		t.Errorf("d Σx/d loc: got %v, want [%d %d]", vals[1], n, n)
	}
	want := []float64{e0, 0, e0, e1}
	for i, w := range want {
		if math.Abs(vals[2][i]-w) > 1e-9*max(1, math.Abs(w)) {
			t.Errorf("d Σx/d L[%d]: got %v, want %v", i, vals[2][i], w)
		}
	}
}

// meanWithin checks that the sample mean of x is within five standard
// errors of want.
func meanWithin(t *testing.T, what string, x []float64, want float64) {
	t.Helper()
	m, v := sampleMoments(x)
	if se := math.Sqrt(v / float64(len(x))); math.Abs(m-want) > 5*se {
		t.Errorf("%s: mean %v, want %v ± %v", what, m, want, 5*se)
	}
}

// The implicitly reparameterised samples carry unbiased gradients: over
// 2·10⁵ seeded draws, d x/dα of Gamma(2.5, 2) averages d E[x]/dα = 1/β and
// x·dx/dα averages ½·d E[x²]/dα = (2α+1)/(2β²); dx/dα of Beta(2, 3)
// averages β/(α+β)², and dx₀/dα₀ of Dirichlet(0.5, 1, 2.5) averages
// (s−α₀)/s², s the concentrations' sum; d Σx/dβ of the Gamma is −Σx/β. The
// third derivative in α is an error.
func TestGammaFamilyRSampleGradients(t *testing.T) {
	const n = 200_000
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 23)
	param := func(name string, v float64, shape ...int) *graph.Node {
		p := g.Param(name, graph.NewDense(graph.Float64, shape...))
		for i := range p.Type().Size() {
			graph.SetFloat(p.Value(), i, v)
		}
		return p
	}
	alpha, rate := param("alpha", 2.5, n), param("rate", 2)
	x := distributions.NewGamma(alpha, rate).RSample(gen)
	a1, a0 := param("a1", 2, n), param("a0", 3, n)
	b := distributions.NewBeta(a1, a0).RSample(gen)
	conc := g.Param("conc", graph.NewDense(graph.Float64, n, 3))
	for i := range n {
		for k, v := range []float64{0.5, 1, 2.5} {
			graph.SetFloat(conc.Value(), 3*i+k, v)
		}
	}
	first := constant(t, g, graph.Float64, []float64{1, 0, 0}, 3)
	dir := distributions.NewDirichlet(conc).RSample(gen)
	grads, err := compile.Grad(ops.Add(ops.Add(ops.Sum(x), ops.Sum(b)), ops.Sum(ops.Mul(dir, first))), alpha, rate, a1, conc)
	if err != nil {
		t.Fatal(err)
	}
	vals := run(t, gen.Updates(), append([]*graph.Node{x}, grads...)...)
	xs, dAlpha := vals[0], vals[1]
	meanWithin(t, "Gamma dx/dα", dAlpha, 0.5)
	prod := make([]float64, n)
	sum := 0.0
	for i := range prod {
		prod[i] = xs[i] * dAlpha[i]
		sum += xs[i]
	}
	meanWithin(t, "Gamma x·dx/dα", prod, 6.0/8)
	if want := -sum / 2; math.Abs(vals[2][0]-want) > 1e-9*math.Abs(want) {
		t.Errorf("d Σx/dβ: got %v, want %v", vals[2][0], want)
	}
	meanWithin(t, "Beta dx/dα", vals[3], 3.0/25)
	d0 := make([]float64, n)
	for i := range d0 {
		d0[i] = vals[4][3*i]
	}
	meanWithin(t, "Dirichlet dx₀/dα₀", d0, 3.5/16)

	second, err := compile.Grad(ops.Sum(grads[0]), alpha)
	if err != nil {
		t.Fatalf("second derivative: %v", err)
	}
	_, err = compile.Grad(ops.Sum(second[0]), alpha)
	if err == nil || !strings.Contains(err.Error(), "the reparameterised gradient of a gamma draw differentiates twice") {
		t.Errorf("third derivative: got %v, want an error", err)
	}
}

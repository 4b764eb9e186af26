package distributions_test

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/distributions"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// A gamma RSample differentiates twice in its concentration, in both
// modes, and says so at the third derivative rather than giving a wrong
// value. L = Σ(G(α)/β)² has the diagonal Hessian 2·(G′² + G·G″)/β² in α:
// compile.Hessian (forward over reverse) equals it from the reverse-mode
// G′ and G″, HVP along ones is its diagonal, and a third derivative
// (the gradient of the Hessian's trace) is an error naming the reason.
// The forward-mode derivative equals the reverse one, and the mixed
// second derivative ∂²L/∂α∂β is −4·Σ G·G′/β³.
func TestGammaRSampleDifferentiatesTwice(t *testing.T) {
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 5)
	alpha := g.Param("alpha", graph.NewDense(graph.Float64, 4))
	for i, v := range []float64{0.4, 1, 2.5, 7} {
		graph.SetFloat(alpha.Value(), i, v)
	}
	rate := g.Param("rate", graph.NewDense(graph.Float64))
	graph.SetFloat(rate.Value(), 0, 1.5)
	x := distributions.NewGamma(alpha, rate).RSample(gen)
	loss := ops.Sum(ops.Square(x))

	gs, err := compile.Grad(loss, alpha, rate)
	if err != nil {
		t.Fatal(err)
	}
	hess, err := compile.Hessian(loss, alpha)
	if err != nil {
		t.Fatal(err)
	}
	hvp, err := compile.HVP(loss, alpha, g.Const(ones(4)))
	if err != nil {
		t.Fatal(err)
	}
	const want = "the reparameterised gradient of a gamma draw differentiates twice"
	trace := ops.Sum(ops.Mul(hess, g.Const(eye(4))))
	if _, err := compile.Grad(trace, alpha); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("third derivative: got %v, want %q", err, want)
	} else {
		t.Logf("third derivative: %v", err)
	}

	// G and dG/dα from the first derivative of Σ G (G = x·β).
	G := ops.Mul(x, rate)
	dG, err := compile.Grad(ops.Sum(G), alpha)
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := compile.JVP([]*graph.Node{G}, []*graph.Node{alpha}, []*graph.Node{g.Const(ones(4))})
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := compile.Grad(gs[1], alpha)
	if err != nil {
		t.Fatalf("∂²L/∂α∂β: %v", err)
	}
	d2G, err := compile.Grad(ops.Sum(dG[0]), alpha)
	if err != nil {
		t.Fatal(err)
	}
	v := run(t, gen.Updates(), G, dG[0], fwd[0], mixed[0], d2G[0], hess, hvp)
	b := 1.5
	for i := range 4 {
		G, G1, G2 := v[0][i], v[1][i], v[4][i]
		want := 2 * (G1*G1 + G*G2) / (b * b)
		for j := range 4 {
			h := v[5][4*i+j]
			if j != i && h != 0 || j == i && math.Abs(h-want) > 1e-12*math.Abs(want) {
				t.Errorf("Hessian (%d, %d) = %v, want %v", i, j, h, map[bool]float64{true: want}[i == j])
			}
		}
		if math.Abs(v[6][i]-want) > 1e-12*math.Abs(want) {
			t.Errorf("HVP %d = %v, want %v", i, v[6][i], want)
		}
		if v[1][i] != v[2][i] {
			t.Errorf("element %d: forward mode dG/dα %v, reverse %v", i, v[2][i], v[1][i])
		}
		if m := -4 * G * G1 / (b * b * b); math.Abs(v[3][i]-m) > 1e-12*math.Abs(m) {
			t.Errorf("element %d: ∂²L/∂α∂β = %v, want %v", i, v[3][i], m)
		}
		if !(v[1][i] > 0) {
			t.Errorf("element %d: dG/dα = %v, want a positive derivative", i, v[1][i])
		}
	}
}

func eye(n int) *tensor.Dense {
	d := graph.NewDense(graph.Float64, n, n)
	for i := range n {
		graph.SetFloat(d, i*n+i, 1)
	}
	return d
}

func ones(n int) *tensor.Dense {
	d := graph.NewDense(graph.Float64, n)
	for i := range n {
		graph.SetFloat(d, i, 1)
	}
	return d
}

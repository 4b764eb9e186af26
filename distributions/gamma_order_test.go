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

// A gamma RSample differentiates once in its concentration, in both
// modes, and says so rather than giving a wrong value: the second
// derivative in α (reverse over reverse, forward over reverse: Hessian,
// HVP) is an error naming the reason. Derivatives that differentiate the
// draw once are right: the forward-mode derivative equals the reverse
// one, and the mixed second derivative ∂²L/∂α∂β of L = Σ(G(α)/β)² is
// −4·Σ G·G′/β³, with G′ the first derivative the gradient gives.
func TestGammaRSampleDifferentiatesOnce(t *testing.T) {
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
	const want = "the reparameterised gradient of a gamma draw differentiates once"

	gs, err := compile.Grad(loss, alpha, rate)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compile.Grad(ops.Sum(gs[0]), alpha); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("reverse over reverse: got %v, want %q", err, want)
	}
	if _, err := compile.Hessian(loss, alpha); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Hessian: got %v, want %q", err, want)
	} else {
		t.Logf("Hessian: %v", err)
	}
	if _, err := compile.HVP(loss, alpha, g.Const(graph.NewDense(graph.Float64, 4))); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("HVP: got %v, want %q", err, want)
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
	v := run(t, gen.Updates(), G, dG[0], fwd[0], mixed[0])
	b := 1.5
	for i := range 4 {
		if v[1][i] != v[2][i] {
			t.Errorf("element %d: forward mode dG/dα %v, reverse %v", i, v[2][i], v[1][i])
		}
		want := -4 * v[0][i] * v[1][i] / (b * b * b)
		if math.Abs(v[3][i]-want) > 1e-12*math.Abs(want) {
			t.Errorf("element %d: ∂²L/∂α∂β = %v, want %v", i, v[3][i], want)
		}
		if !(v[1][i] > 0) {
			t.Errorf("element %d: dG/dα = %v, want a positive derivative", i, v[1][i])
		}
	}
}

func ones(n int) *tensor.Dense {
	d := graph.NewDense(graph.Float64, n)
	for i := range n {
		graph.SetFloat(d, i, 1)
	}
	return d
}

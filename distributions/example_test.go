package distributions_test

import (
	"fmt"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/distributions"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A reparameterised sample from N(μ, σ²) and its KL divergence from
// N(0, 1), the two terms of a VAE's loss, with the gradient of the KL
// with respect to μ (by hand: KL = ½(σ² + μ² − 1 − log σ²) summed,
// 0.125 + 0.8069, and dKL/dμ = μ); each run draws a fresh sample.
func Example() {
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 1)
	mu := g.Param("mu", graph.NewDense(graph.Float64, 2))
	sigma := g.Param("sigma", graph.NewDense(graph.Float64, 2))
	graph.SetFloat(mu.Value(), 0, 0.5)
	graph.SetFloat(sigma.Value(), 0, 1)
	graph.SetFloat(sigma.Value(), 1, 2)
	q := distributions.NewNormal(mu, sigma)
	prior := distributions.NewNormal(g.Scalar(0, graph.Float64), g.Scalar(1, graph.Float64))
	z := q.RSample(gen)
	kl := ops.Sum(distributions.KL(q, prior))
	grads, err := compile.Grad(kl, mu)
	if err != nil {
		fmt.Println(err)
		return
	}
	prog, err := compile.Compile([]*graph.Node{z, kl, grads[0]}, compile.WithUpdates(gen.Updates()))
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := vm.New(prog)
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		if err := m.Run(nil); err != nil {
			fmt.Println(err)
			return
		}
		zv, _ := m.Value(z)
		klv, _ := m.Value(kl)
		dmu, _ := m.Value(grads[0])
		fmt.Printf("z %.4f  KL %.4f  dKL/dμ %.1f\n", zv.Float64s(), graph.Float(klv, 0), dmu.Float64s())
	}
	// Output:
	// z [0.0861 -0.4947]  KL 0.9319  dKL/dμ [0.5 0.0]
	// z [1.2514 1.7568]  KL 0.9319  dKL/dμ [0.5 0.0]
}

// A two-dimensional normal of covariance Σ = [[4, 2], [2, 3]], held as its
// Cholesky factor: its log-density at the mean is −log 2π − ½·log det Σ
// (det Σ = 8), its entropy 1 + log 2π + ½·log det Σ, and its divergence
// from the standard normal ½·(tr Σ − 2 − log det Σ).
func ExampleNewMultivariateNormalCovariance() {
	g := graph.New()
	loc := g.Const(graph.NewDense(graph.Float64, 2))
	cov, _ := graph.FromFloat64s(graph.Float64, []float64{4, 2, 2, 3}, 2, 2)
	eye, _ := graph.FromFloat64s(graph.Float64, []float64{1, 0, 0, 1}, 2, 2)
	d := distributions.NewMultivariateNormalCovariance(loc, g.Const(cov))
	std := distributions.NewMultivariateNormal(loc, g.Const(eye))
	vals, err := vm.Eval(nil, d.LogProb(loc), d.Entropy(), distributions.KL(d, std))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("log p(μ) %.6f  entropy %.6f  KL %.6f\n", graph.Float(vals[0], 0), graph.Float(vals[1], 0), graph.Float(vals[2], 0))
	// Output:
	// log p(μ) -2.877598  entropy 3.877598  KL 1.460279
}

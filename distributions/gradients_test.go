package distributions_test

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/distributions"
	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func vals(t *testing.T, v ...float64) *tensor.Dense {
	d, err := graph.FromFloat64s(graph.Float64, v, len(v))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// LogProb, Entropy and KL differentiate to first and second order with
// respect to every parameter (and LogProb's value, for the continuous
// families), as finite differences say (gradcheck, float64), at points
// away from Laplace's kink and inside Uniform's support.
func TestGradientsToSecondOrder(t *testing.T) {
	labels := func(in []*graph.Node) *graph.Node { return in[0].Graph().Const(vals(t, 2, 0)) }
	cases := []struct {
		name   string
		fn     func(in []*graph.Node) *graph.Node
		inputs []*tensor.Dense
	}{
		{"Normal.LogProb", func(in []*graph.Node) *graph.Node {
			return distributions.NewNormal(in[0], in[1]).LogProb(in[2])
		}, []*tensor.Dense{vals(t, 0.3, -1.2), vals(t, 0.5, 1.7), vals(t, 0.1, 0.4)}},
		{"Laplace.LogProb", func(in []*graph.Node) *graph.Node {
			return distributions.NewLaplace(in[0], in[1]).LogProb(in[2])
		}, []*tensor.Dense{vals(t, 0.3, -1.2), vals(t, 0.5, 1.7), vals(t, 0.1, 0.4)}},
		{"Uniform.LogProb", func(in []*graph.Node) *graph.Node {
			return distributions.NewUniform(in[0], in[1]).LogProb(in[2])
		}, []*tensor.Dense{vals(t, -1, 0.5), vals(t, 1, 3), vals(t, 0.2, 2.9)}},
		{"Bernoulli.LogProb", func(in []*graph.Node) *graph.Node {
			return distributions.NewBernoulli(in[0]).LogProb(in[0].Graph().Const(vals(t, 0, 1, 1)))
		}, []*tensor.Dense{vals(t, -3, 0.2, 4.5)}},
		{"Categorical.LogProb", func(in []*graph.Node) *graph.Node {
			return distributions.NewCategorical(ops.Reshape(in[0], 2, 3)).LogProb(labels(in))
		}, []*tensor.Dense{vals(t, 0.1, -2, 1.3, 5, 0, -1)}},
		{"Normal.Entropy", func(in []*graph.Node) *graph.Node {
			return distributions.NewNormal(in[0], in[1]).Entropy()
		}, []*tensor.Dense{vals(t, 0.3), vals(t, 0.5, 1.7)}},
		{"Bernoulli.Entropy", func(in []*graph.Node) *graph.Node { return distributions.NewBernoulli(in[0]).Entropy() },
			[]*tensor.Dense{vals(t, -3, 0.2, 4.5)}},
		{"Categorical.Entropy", func(in []*graph.Node) *graph.Node {
			return distributions.NewCategorical(ops.Reshape(in[0], 2, 3)).Entropy()
		}, []*tensor.Dense{vals(t, 0.1, -2, 1.3, 5, 0, -1)}},
		{"KL Normal", func(in []*graph.Node) *graph.Node {
			return distributions.KL(distributions.NewNormal(in[0], in[1]), distributions.NewNormal(in[2], in[3]))
		}, []*tensor.Dense{vals(t, 0.3, -1.2), vals(t, 0.5, 1.7), vals(t, 1, 0.2), vals(t, 2, 0.9)}},
		{"KL Laplace", func(in []*graph.Node) *graph.Node {
			return distributions.KL(distributions.NewLaplace(in[0], in[1]), distributions.NewLaplace(in[2], in[3]))
		}, []*tensor.Dense{vals(t, 0.3, -1.2), vals(t, 0.5, 1.7), vals(t, 1, 0.2), vals(t, 2, 0.9)}},
		{"KL Bernoulli", func(in []*graph.Node) *graph.Node {
			return distributions.KL(distributions.NewBernoulli(in[0]), distributions.NewBernoulli(in[1]))
		}, []*tensor.Dense{vals(t, -3, 0.2, 4.5), vals(t, 1, -0.7, 2)}},
		{"KL Categorical", func(in []*graph.Node) *graph.Node {
			return distributions.KL(distributions.NewCategorical(ops.Reshape(in[0], 2, 3)), distributions.NewCategorical(ops.Reshape(in[1], 2, 3)))
		}, []*tensor.Dense{vals(t, 0.1, -2, 1.3, 5, 0, -1), vals(t, 1, 0.5, -0.5, 0, 0, 0)}},
		{"Lgamma and Polygamma", func(in []*graph.Node) *graph.Node {
			return ops.Add(distributions.Lgamma(in[0]), distributions.Polygamma(2, in[0]))
		}, []*tensor.Dense{vals(t, 0.05, 0.7, 3.2, 12, -1.5)}},
		{"Gamma.LogProb", func(in []*graph.Node) *graph.Node {
			return distributions.NewGamma(in[0], in[1]).LogProb(in[2])
		}, []*tensor.Dense{vals(t, 0.3, 2.5), vals(t, 1.5, 0.5), vals(t, 0.2, 1.7)}},
		{"Gamma.Entropy", func(in []*graph.Node) *graph.Node { return distributions.NewGamma(in[0], in[1]).Entropy() },
			[]*tensor.Dense{vals(t, 0.3, 2.5), vals(t, 1.5, 0.5)}},
		{"Beta.LogProb", func(in []*graph.Node) *graph.Node {
			return distributions.NewBeta(in[0], in[1]).LogProb(in[2])
		}, []*tensor.Dense{vals(t, 0.5, 2.5), vals(t, 3, 1.2), vals(t, 0.1, 0.7)}},
		{"Beta.Entropy", func(in []*graph.Node) *graph.Node { return distributions.NewBeta(in[0], in[1]).Entropy() },
			[]*tensor.Dense{vals(t, 0.5, 2.5), vals(t, 3, 1.2)}},
		{"Dirichlet.LogProb", func(in []*graph.Node) *graph.Node {
			return distributions.NewDirichlet(ops.Reshape(in[0], 2, 3)).LogProb(ops.Reshape(in[1], 2, 3))
		}, []*tensor.Dense{vals(t, 0.5, 1, 2.5, 4, 0.2, 1.5), vals(t, 0.2, 0.3, 0.5, 0.7, 0.01, 0.29)}},
		{"Dirichlet.Entropy", func(in []*graph.Node) *graph.Node {
			return distributions.NewDirichlet(ops.Reshape(in[0], 2, 3)).Entropy()
		}, []*tensor.Dense{vals(t, 0.5, 1, 2.5, 4, 0.2, 1.5)}},
		{"StudentT.LogProb", func(in []*graph.Node) *graph.Node {
			return distributions.NewStudentT(in[0], in[1], in[2]).LogProb(in[3])
		}, []*tensor.Dense{vals(t, 2.5, 30), vals(t, 0.3, -1.2), vals(t, 0.5, 1.7), vals(t, 0.1, 0.4)}},
		{"StudentT.Entropy", func(in []*graph.Node) *graph.Node {
			return distributions.NewStudentT(in[0], in[1], in[2]).Entropy()
		}, []*tensor.Dense{vals(t, 2.5, 30), vals(t, 0.3, -1.2), vals(t, 0.5, 1.7)}},
		{"MultivariateNormal.LogProb", func(in []*graph.Node) *graph.Node {
			return distributions.NewMultivariateNormal(in[0], ops.Reshape(in[1], 3, 3)).LogProb(ops.Reshape(in[2], 2, 3))
		}, []*tensor.Dense{vals(t, 0.3, -1.2, 2), vals(t, 1.5, 0, 0, -0.4, 0.8, 0, 0.3, 0.2, 2.1), vals(t, 0.1, 0.4, -2.5, 1, -1, 0)}},
		{"KL Gamma", func(in []*graph.Node) *graph.Node {
			return distributions.KL(distributions.NewGamma(in[0], in[1]), distributions.NewGamma(in[2], in[3]))
		}, []*tensor.Dense{vals(t, 0.3, 2.5), vals(t, 1, 2), vals(t, 1.2, 0.7), vals(t, 0.4, 2.5)}},
		{"KL Beta", func(in []*graph.Node) *graph.Node {
			return distributions.KL(distributions.NewBeta(in[0], in[1]), distributions.NewBeta(in[2], in[3]))
		}, []*tensor.Dense{vals(t, 0.5, 2.5), vals(t, 0.5, 1), vals(t, 1.5, 0.8), vals(t, 2, 0.3)}},
		{"KL Dirichlet", func(in []*graph.Node) *graph.Node {
			return distributions.KL(distributions.NewDirichlet(in[0]), distributions.NewDirichlet(in[1]))
		}, []*tensor.Dense{vals(t, 0.5, 1, 2.5), vals(t, 2, 0.7, 3)}},
		{"KL MultivariateNormal", func(in []*graph.Node) *graph.Node {
			p := distributions.NewMultivariateNormal(in[0], ops.Reshape(in[1], 2, 2))
			return distributions.KL(p, distributions.NewMultivariateNormal(in[2], ops.Reshape(in[3], 2, 2)))
		}, []*tensor.Dense{vals(t, 0.3, -1.2), vals(t, 1.5, 0, -0.4, 0.8), vals(t, 1, 0), vals(t, 0.7, 0, 0.5, 1.3)}},
		{"KL Beta‖Normal", func(in []*graph.Node) *graph.Node {
			return distributions.KL(distributions.NewBeta(in[0], in[1]), distributions.NewNormal(in[2], in[3]))
		}, []*tensor.Dense{vals(t, 0.5, 2.5), vals(t, 0.5, 1), vals(t, 0.3, -1.2), vals(t, 0.5, 1.7)}},
		{"KL Gamma‖Normal", func(in []*graph.Node) *graph.Node {
			return distributions.KL(distributions.NewGamma(in[0], in[1]), distributions.NewNormal(in[2], in[3]))
		}, []*tensor.Dense{vals(t, 0.3, 2.5), vals(t, 1, 2), vals(t, 0.3, -1.2), vals(t, 0.5, 1.7)}},
		{"KL Normal‖Laplace", func(in []*graph.Node) *graph.Node {
			return distributions.KL(distributions.NewNormal(in[0], in[1]), distributions.NewLaplace(in[2], in[3]))
		}, []*tensor.Dense{vals(t, 0.3, -1.2), vals(t, 0.5, 1.7), vals(t, 1, 0.2), vals(t, 2, 0.9)}},
		{"KL Uniform‖Gamma", func(in []*graph.Node) *graph.Node {
			return distributions.KL(distributions.NewUniform(in[0], in[1]), distributions.NewGamma(in[2], in[3]))
		}, []*tensor.Dense{vals(t, 0.1, 2), vals(t, 0.9, 7.5), vals(t, 0.3, 2.5), vals(t, 1, 2)}},
		{"KL Uniform‖Beta", func(in []*graph.Node) *graph.Node {
			return distributions.KL(distributions.NewUniform(in[0], in[1]), distributions.NewBeta(in[2], in[3]))
		}, []*tensor.Dense{vals(t, 0.1, 0.25), vals(t, 0.9, 0.5), vals(t, 0.5, 2.5), vals(t, 0.5, 1)}},
	}
	for _, c := range cases {
		scalar := func(in []*graph.Node) *graph.Node { return ops.Sum(c.fn(in)) }
		if err := gradcheck.Check(scalar, c.inputs, gradcheck.Options{}); err != nil {
			t.Errorf("%s: first order: %v", c.name, err)
		}
		if err := gradcheck.GradGradCheck(scalar, c.inputs, gradcheck.Options{Seed: 1}); err != nil {
			t.Errorf("%s: second order: %v", c.name, err)
		}
	}
}

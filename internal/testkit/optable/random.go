package optable

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// randomNoGrad is why random ops give no gradient.
const randomNoGrad = "a draw is piecewise constant in its step and its probabilities: Backward returns none"

// randomRows are the random ops' rows: a step (held, like labels) and the
// inputs giving shapes or probabilities. Their kernels are checked (the
// same values on every device); their inputs get no gradient.
func randomRows(v Values) []Case {
	s := ops.Stream{Seed: 42, ID: 3}
	step := TensorOf(nil, 5)
	rows := []Case{
		row("RandomUniform", "matrix", func(in []*graph.Node) *graph.Node {
			return ops.RandomUniform(in[0], s, graph.Float64, 3, 5)
		}, step),
		row("RandomNormal", "odd length", func(in []*graph.Node) *graph.Node {
			return ops.RandomNormal(in[0], s, graph.Float64, 7)
		}, step),
		row("RandomUniformLike", "matrix", func(in []*graph.Node) *graph.Node {
			return ops.RandomUniformLike(in[0], s, in[1])
		}, step, v.Signed(2, 3)),
		row("RandomNormalLike", "rank 3", func(in []*graph.Node) *graph.Node {
			return ops.RandomNormalLike(in[0], s, in[1])
		}, step, v.Signed(2, 1, 3)),
		row("RandomInt", "float64 values", func(in []*graph.Node) *graph.Node {
			return ops.RandomInt(in[0], s, -4, 9, graph.Float64, 2, 5)
		}, step),
		row("RandomCategorical", "rows of logits", func(in []*graph.Node) *graph.Node {
			return ops.RandomCategorical(in[0], s, in[1])
		}, step, v.Signed(4, 3)),
		row("RandomPermutation", "float64 indices", func(in []*graph.Node) *graph.Node {
			return ops.RandomPermutation(in[0], s, 7, graph.Float64)
		}, step),
		row("RandomGamma", "concentrations below and above 1", func(in []*graph.Node) *graph.Node {
			return ops.RandomGamma(in[0], s, in[1])
		}, step, v.Uniform(0.2, 3, 2, 3)),
	}
	bernoulli := row("RandomBernoulli", "probabilities", func(in []*graph.Node) *graph.Node {
		return ops.RandomBernoulli(in[0], s, in[1])
	}, step, v.Uniform(0.1, 0.9, 2, 3))
	bernoulli.Composite = true // a comparison of a uniform draw with p, NaN where p has no distribution
	rows = append(rows, bernoulli)
	for i := range rows {
		rows[i].Checked, rows[i].NoGrad = []int{}, randomNoGrad
		rows[i].NoGradInputs = []int{0}
		if len(rows[i].Inputs) > 1 {
			rows[i].NoGradInputs = []int{0, 1}
		}
	}
	return rows
}

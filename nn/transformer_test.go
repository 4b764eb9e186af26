package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// sinesBlock is a TransformerBlock name (embed 4, 2 heads, feed-forward
// 6, causal) with drop probability p, its parameters filled as in
// TestTransformerBlockMatchesPyTorch and its dropout seeded by seed.
func sinesBlock(t *testing.T, g *graph.Graph, name string, p float64, seed uint64) *TransformerBlock {
	b := NewTransformerBlock(g, name, 4, 2, 6, p, true, WithRand(rand.New(rand.NewPCG(seed, 0))))
	require.NoError(t, g.Err())
	for i, n := range NamedParameters(b) {
		require.NoError(t, sinesInit(0.1*float64(i+1), 0.3)(nil, n.Node.Value(), 0, 0))
	}
	return b
}

// A block's dropout, PyTorch's three modules, drops in training and is
// the identity in evaluation, where the block equals one without dropout;
// the gradients agree with finite differences to second order with
// dropout on (its masks are fixed by the seed and the step).
func TestTransformerBlockDropout(t *testing.T) {
	g := graph.New()
	b, plain := sinesBlock(t, g, "block", 0.5, 1), sinesBlock(t, g, "plain", 0, 1)
	require.Contains(t, b.String(), "(dropout): Dropout(p=0.5)")
	require.Contains(t, b.String(), "(dropout2): Dropout(p=0.5)")
	require.NotContains(t, plain.String(), "Dropout")
	x := g.Input("x", graph.Float64, 2, 3, 4)
	SetTraining(b, true)
	train := b.Forward(x)
	SetTraining(b, false)
	eval := b.Forward(x)
	out, err := vm.Eval(vm.Feeds{x: sines(t, 0.15, 1, 2, 3, 4)}, train, eval, plain.Forward(x))
	require.NoError(t, err)
	require.Equal(t, graph.Float64s(out[2]), graph.Float64s(out[1]), "evaluation: no dropout")
	require.NotEqual(t, graph.Float64s(out[2]), graph.Float64s(out[0]), "training: dropout")

	checkGradients(t, func(in []*graph.Node) *graph.Node {
		b := sinesBlock(t, in[0].Graph(), "block", 0.3, 2)
		b.Linear1.Weight = in[1]
		return weighted(b.Forward(in[0]))
	}, []*tensor.Dense{sines(t, 0.15, 1, 2, 3, 4), sines(t, 0.4, 0.3, 6, 4)})
}

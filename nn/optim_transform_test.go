package nn

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TestTransformGradients: SGD steps along the transformed gradient. For
// y = x·Wᵀ with x = (1, 2) and loss Σy, dL/dW = x; tripled by the
// transform, lr 0.5 moves W by -1.5·x = (-1.5, -3).
func TestTransformGradients(t *testing.T) {
	g := graph.New()
	lin := NewLinear(g, "l", 2, 1, false)
	x := g.Input("x", graph.Float64, 1, 2)
	loss := ops.Sum(lin.Forward(x))
	var seen []string
	triple := func(grads []*graph.Node, params []Named) ([]*graph.Node, error) {
		out := make([]*graph.Node, len(grads))
		for i, gr := range grads {
			seen = append(seen, params[i].Name)
			out[i] = ops.Scale(gr, 3)
		}
		return out, nil
	}
	updates, err := TrainingUpdates(NewSGD(SGDConfig{LR: 0.5}), loss, lin, TransformGradients(triple))
	require.NoError(t, err)
	require.Equal(t, []string{"weight"}, seen)
	m := machine(t, []*graph.Node{loss}, updates)
	w0 := value(t, m, lin.Weight)
	require.NoError(t, m.Run(vm.Feeds{x: dense(t, []float64{1, 2}, 1, 2)}))
	assertClose(t, "W after one step", value(t, m, lin.Weight), []float64{w0[0] - 1.5, w0[1] - 3}, 1e-12)

	// Adam takes the transform too.
	_, err = TrainingUpdates(NewAdam(DefaultAdam()), loss, lin, TransformGradients(triple))
	require.NoError(t, err)
}

// customOptimizer is an optimiser of a user's, which knows nothing of
// gradient transforms.
type customOptimizer struct{ inner *SGD }

func (o *customOptimizer) Updates(loss *graph.Node, params []Named) (map[*graph.Node]*graph.Node, error) {
	return o.inner.Updates(loss, params)
}

func (o *customOptimizer) State() []Named { return o.inner.State() }

// TestTransformGradientsErrors: a transform's mistakes, and an optimiser
// that cannot take one, are errors naming the problem.
func TestTransformGradientsErrors(t *testing.T) {
	g := graph.New()
	lin := NewLinear(g, "l", 2, 3, true)
	loss := ops.Sum(lin.Forward(g.Input("x", graph.Float64, 1, 2)))
	sgd := func() Optimizer { return NewSGD(SGDConfig{LR: 0.1}) }
	cases := []struct {
		opt  Optimizer
		f    GradientTransform
		want string
	}{
		{&customOptimizer{NewSGD(SGDConfig{LR: 0.1})}, func(gs []*graph.Node, _ []Named) ([]*graph.Node, error) { return gs, nil },
			"nn: TrainingUpdates: TransformGradients needs one of nn's optimisers (SGD, Adam, AdamW), not *nn.customOptimizer"},
		{sgd(), func(gs []*graph.Node, _ []Named) ([]*graph.Node, error) { return gs[:1], nil },
			"nn: SGD: the gradient transform returned 1 gradients for 2 parameters"},
		{sgd(), func(gs []*graph.Node, _ []Named) ([]*graph.Node, error) { return []*graph.Node{gs[0], nil}, nil },
			`nn: SGD: the gradient transform returned nil for "bias"`},
		{sgd(), func(gs []*graph.Node, _ []Named) ([]*graph.Node, error) { return []*graph.Node{gs[1], gs[1]}, nil },
			`nn: SGD: the gradient transform returned float64(3) for "weight", whose gradient is float64(3,2)`},
		{sgd(), func([]*graph.Node, []Named) ([]*graph.Node, error) { return nil, errors.New("no network") },
			"nn: SGD: transforming the gradients: no network"},
	}
	for _, c := range cases {
		_, err := TrainingUpdates(c.opt, loss, lin, TransformGradients(c.f))
		require.ErrorContains(t, err, c.want)
	}
}

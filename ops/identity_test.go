package ops

import (
	"testing"

	"github.com/nabla-go/nabla/graph"
)

func TestIdentityAndStopGradient(t *testing.T) {
	identity := func(xs ...*graph.Node) *graph.Node { return Identity(xs[0]) }
	stop := func(xs ...*graph.Node) *graph.Node { return StopGradient(xs[0]) }
	runForward(t, []forwardCase{
		{"Identity (2,2)", []values{arange(2, 2)}, identity, []int{2, 2}, []float64{0, 1, 2, 3}},
		{"Identity scalar", []values{of(nil, 7)}, identity, nil, []float64{7}},
		{"Identity (0,2)", []values{arange(0, 2)}, identity, []int{0, 2}, nil},
		{"StopGradient (2,2)", []values{arange(2, 2)}, stop, []int{2, 2}, []float64{0, 1, 2, 3}},
		{"StopGradient scalar", []values{of(nil, 7)}, stop, nil, []float64{7}},
	})
	runErrors(t, []errorCase{
		{"Identity arity", func(g *graph.Graph) *graph.Node { return g.Apply(identityOp{}) }, "Identity",
			[]string{"takes 1 inputs, got 0"}},
		{"StopGradient of poisoned", func(g *graph.Graph) *graph.Node { return StopGradient(Reshape(f64(g, 2), 3)) },
			"Reshape", []string{"cannot reshape (2) (2 elements) to (3)"}},
	})
	runBackward(t, []backwardCase{{"Identity", [][]int{{2, 3}}, identity}})

	g := graph.New()
	x := f64(g, 2, 3)
	seed := g.Const(graph.NewDense(graph.Float64, 2, 3))
	needs := []bool{true}
	if grads := (identityOp{}).Backward(graph.NewGradContext(Identity(x), needs), seed); len(grads) != 1 || grads[0] != seed {
		t.Errorf("Identity: got gradients %v, want [%v]", grads, seed)
	}
	if grads := (stopGradientOp{}).Backward(graph.NewGradContext(StopGradient(x), needs), seed); len(grads) != 1 || grads[0] != nil {
		t.Errorf("StopGradient: got gradients %v, want [nil]", grads)
	}
}

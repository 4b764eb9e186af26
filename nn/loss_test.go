package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

func TestLosses(t *testing.T) {
	softplus2 := math.Log1p(math.Exp(2)) // log(1 + e²) = 2.126928...
	for _, c := range []struct {
		name   string
		loss   func(a, b *graph.Node) *graph.Node
		a      []float64
		aShape []int
		b      []float64
		bShape []int
		want   float64
	}{
		// ((1-1)² + (2-0)² + (3-0)²)/3 = 13/3.
		{"MSE", MSE, []float64{1, 2, 3}, []int{3}, []float64{1, 0, 0}, []int{3}, 13.0 / 3},
		// Row [0,0] label 0: log 2. Row [ln 3, 0] label 1: log(3+1) - 0 = log 4.
		// Mean (log 2 + log 4)/2 = 1.5·log 2.
		{"CrossEntropy", CrossEntropy, []float64{0, 0, math.Log(3), 0}, []int{2, 2}, []float64{0, 1}, []int{2}, 1.5 * math.Ln2},
		// Per element max(x,0) - x·y + log(1+e^-|x|):
		// x=0,y=1: log 2; x=2,y=0: 2 + log(1+e⁻²) = log(1+e²);
		// x=-1000,y=0: 0; x=1000,y=1: 0; x=1000,y=0: 1000 — finite where a
		// naive log(sigmoid) would give -Inf.
		{"BCEWithLogits", BCEWithLogits, []float64{0, 2, -1000, 1000, 1000}, []int{5}, []float64{1, 0, 0, 1, 0}, []int{5},
			(math.Ln2 + softplus2 + 1000) / 5},
	} {
		g := graph.New()
		a := g.Input("a", graph.Float64, c.aShape...)
		b := g.Input("b", graph.Float64, c.bShape...)
		loss := c.loss(a, b)
		m := machine(t, []*graph.Node{loss}, nil)
		require.NoError(t, m.Run(vm.Feeds{a: dense(t, c.a, c.aShape...), b: dense(t, c.b, c.bShape...)}))
		assertClose(t, c.name, value(t, m, loss), []float64{c.want}, 1e-12)
	}
}

// BCEWithLogits' gradient is (sigmoid(x) - y)/N, also where it saturates;
// the gradients of all three losses, in both arguments, match finite
// differences to the second order.
func TestLossGradients(t *testing.T) {
	logits := dense(t, []float64{-3, -0.5, 0.25, 2, 40, 1}, 3, 2)
	targets := dense(t, []float64{0, 1, 0.3, 1, 0, 0.5}, 3, 2)
	checkGradients(t, func(in []*graph.Node) *graph.Node { return BCEWithLogits(in[0], in[1]) }, []*tensor.Dense{logits, targets})
	checkGradients(t, func(in []*graph.Node) *graph.Node { return MSE(in[0], in[1]) }, []*tensor.Dense{logits, targets})
	labels := dense(t, []float64{1, 0, 1}, 3)
	checkGradients(t, func(in []*graph.Node) *graph.Node { return CrossEntropy(in[0], in[1]) }, []*tensor.Dense{logits, labels}, 0)
}

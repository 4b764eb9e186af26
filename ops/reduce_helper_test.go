package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/graph"
)

// fdCase is an op built on float64 constants whose symbolic Backward
// is checked against finite differences. noGrad lists the inputs that get
// no gradient even when asked (labels, say); skip those whose gradient is
// not asked for (NeedsGrad false). Neither is perturbed.
type fdCase struct {
	name   string
	in     []values
	build  func(xs ...*graph.Node) *graph.Node
	noGrad []int
	skip   []int
}

// checkBackwardFD checks the first derivative of y = build(xs) on float64
// constants with checkBackwardOrder.
func checkBackwardFD(t *testing.T, c fdCase) {
	t.Helper()
	g := graph.New()
	xs := make([]*graph.Node, len(c.in))
	for i, a := range c.in {
		xs[i] = const64(t, g, a.shape, a.vals...)
	}
	y := c.build(xs...)
	if err := g.Err(); err != nil {
		t.Fatalf("case %s: build: %v", c.name, err)
	}
	checkBackwardOrder(t, y, nil, backwardOptions{order: 1, skip: c.skip, noGrad: c.noGrad})
}

// randomVals returns n values uniform in [-2, 2), distinct with probability 1.
func randomVals(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.Float64()*4 - 2
	}
	return out
}

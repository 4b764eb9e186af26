package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

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

// checkBackwardFD checks, for y = build(xs) on float64 constants, that the
// gradients y's op builds in Backward for a random seed G (a constant of
// y's shape) match central finite differences of sum(G*y) with respect to
// each element of each of y's inputs (eps 1e-6, relative tolerance 1e-6).
// It needs no compiler: Backward is called directly and its nodes are
// computed with eval.
func checkBackwardFD(t *testing.T, c fdCase) {
	t.Helper()
	const eps, tol = 1e-6, 1e-6
	rng := rand.New(rand.NewPCG(1, 1))
	g := graph.New()
	xs := make([]*graph.Node, len(c.in))
	for i, a := range c.in {
		xs[i] = const64(t, g, a.shape, a.vals...)
	}
	y := c.build(xs...)
	if err := g.Err(); err != nil {
		t.Fatalf("case %s: build: %v", c.name, err)
	}
	op, ok := y.Op().(graph.Differentiable)
	if !ok {
		t.Fatalf("case %s: %v is not differentiable", c.name, y)
	}
	seed := make([]float64, y.Type().Size())
	for i := range seed {
		seed[i] = rng.Float64()*2 - 1
	}
	seedNode := const64(t, g, y.Shape(), seed...)

	needs := make([]bool, len(y.Inputs()))
	for i := range needs {
		needs[i] = true
	}
	for _, i := range c.skip {
		needs[i] = false
	}
	grads := op.Backward(graph.NewGradContext(y, needs), seedNode)
	if err := g.Err(); err != nil {
		t.Fatalf("case %s: Backward: %v", c.name, err)
	}
	if len(grads) != len(needs) {
		t.Fatalf("case %s: got %d gradients, want %d", c.name, len(grads), len(needs))
	}

	// loss computes sum(G*y) from the inputs' values by y's Forward.
	ins := make([]*tensor.Dense, len(y.Inputs()))
	for i, x := range y.Inputs() {
		v, err := graph.CloneDense(eval(t, x, nil))
		if err != nil {
			t.Fatal(err)
		}
		ins[i] = v
	}
	out := graph.NewDenseOf(y.Type())
	loss := func() float64 {
		if err := y.Op().Forward(out, ins); err != nil {
			t.Fatalf("case %s: Forward: %v", c.name, err)
		}
		s := 0.0
		for i, v := range out.Float64s() {
			s += seed[i] * v
		}
		return s
	}

	for i, x := range y.Inputs() {
		if !needs[i] || slices.Contains(c.noGrad, i) {
			if grads[i] != nil {
				t.Errorf("case %s: input %d: got gradient %v, want none", c.name, i, grads[i])
			}
			continue
		}
		if grads[i] == nil {
			t.Errorf("case %s: input %d: got no gradient", c.name, i)
			continue
		}
		got := eval(t, grads[i], nil)
		if !graph.TypeOf(got.Dtype(), got.Shape()...).Equal(x.Type()) {
			t.Errorf("case %s: input %d: got gradient of type %v, want %v", c.name, i, grads[i].Type(), x.Type())
			continue
		}
		vals := ins[i].Float64s()
		for j, v := range vals {
			vals[j] = v + eps
			up := loss()
			vals[j] = v - eps
			down := loss()
			vals[j] = v
			want, have := (up-down)/(2*eps), got.Float64s()[j]
			if math.Abs(have-want) > tol*math.Max(1, math.Abs(want)) {
				t.Errorf("case %s: d/dx%d[%d]: got %v, want %v (finite differences)", c.name, i, j, have, want)
			}
		}
	}
}

// randomVals returns n values uniform in [-2, 2), distinct with probability 1.
func randomVals(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.Float64()*4 - 2
	}
	return out
}

package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// randomConst adds a float64 constant of the given shape with values drawn
// uniformly from [-1, 1).
func randomConst(t testing.TB, g *graph.Graph, r *rand.Rand, shape ...int) *graph.Node {
	t.Helper()
	vals := make([]float64, graph.ShapeSize(shape))
	for i := range vals {
		vals[i] = 2*r.Float64() - 1
	}
	return g.Const(dense(t, graph.Float64, shape, vals...))
}

// checkBackward tests the Backward of y's op against central finite
// differences, without the compiler. y must be a float64 op node whose
// inputs are Const or Input leaves (feeds gives the inputs' values). With a
// random seed gradient G, the gradient Backward builds for each input
// (summed to the input's shape where the op broadcasts) must match the
// numerical derivative of sum(G·y) with respect to each of its elements.
//
// Gradients that are themselves op nodes on leaves are checked the same
// way, which tests the second derivative of the op.
func checkBackward(t *testing.T, y *graph.Node, feeds map[*graph.Node]*tensor.Dense) {
	t.Helper()
	checkBackwardOrder(t, y, feeds, 2)
}

func checkBackwardOrder(t *testing.T, y *graph.Node, feeds map[*graph.Node]*tensor.Dense, order int) {
	t.Helper()
	const eps, tol = 1e-6, 1e-6
	g := y.Graph()
	if err := g.Err(); err != nil {
		t.Fatalf("graph error: %v", err)
	}
	op := y.Op()
	diff, ok := op.(graph.Differentiable)
	if !ok {
		t.Fatalf("%v: op is not differentiable", y)
	}
	ins := y.Inputs()
	values := make([]*tensor.Dense, len(ins))
	for i, x := range ins {
		v := feeds[x]
		if x.Kind() != graph.KindInput {
			v = x.Value()
		}
		if v == nil {
			t.Fatalf("%v: input %d (%v) is neither a leaf nor fed", y, i, x)
		}
		c, err := graph.CloneDense(v)
		if err != nil {
			t.Fatal(err)
		}
		values[i] = c
	}
	r := rand.New(rand.NewPCG(uint64(y.ID()), 7))
	seed := randomConst(t, g, r, y.Shape()...)
	needs := make([]bool, len(ins))
	for i := range needs {
		needs[i] = true
	}
	grads := diff.Backward(graph.NewGradContext(y, needs), seed)
	if len(grads) != len(ins) {
		t.Fatalf("%v: Backward returned %d gradients for %d inputs", y, len(grads), len(ins))
	}
	// objective is sum(G·y) at the current (perturbed) input values.
	out := graph.NewDenseOf(y.Type())
	objective := func() float64 {
		if err := op.Forward(out, values); err != nil {
			t.Fatalf("%v: Forward: %v", y, err)
		}
		s := 0.0
		for i, v := range out.Float64s() {
			s += v * seed.Value().Float64s()[i]
		}
		return s
	}
	for i, x := range ins {
		grad := grads[i]
		if grad == nil {
			t.Errorf("%v: input %d: no gradient", y, i)
			continue
		}
		if !graph.TypeOf(grad.DType(), grad.Shape()...).Equal(x.Type()) {
			grad = SumTo(grad, x.Shape()...)
		}
		got := eval(t, grad, feeds)
		if !graph.TypeOf(got.Dtype(), got.Shape()...).Equal(x.Type()) {
			t.Fatalf("%v: input %d: gradient of type %v, want %v", y, i, grad.Type(), x.Type())
		}
		v := values[i].Float64s()
		for j, gj := range got.Float64s() {
			orig := v[j]
			v[j] = orig + eps
			plus := objective()
			v[j] = orig - eps
			minus := objective()
			v[j] = orig
			want := (plus - minus) / (2 * eps)
			if math.Abs(gj-want) > tol*math.Max(1, math.Abs(want)) {
				t.Errorf("%v: input %d, element %d: got %v, want %v", y, i, j, gj, want)
			}
		}
		if order > 1 && onLeaves(grads[i]) {
			checkBackwardOrder(t, grads[i], feeds, order-1)
		}
	}
}

// onLeaves reports whether n is an op node whose inputs are all leaves.
func onLeaves(n *graph.Node) bool {
	if n.Kind() != graph.KindOp || n.Op() == nil {
		return false
	}
	for _, x := range n.Inputs() {
		if x.Kind() == graph.KindOp {
			return false
		}
	}
	return true
}

package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// values is a test input: a shape and its elements.
type values struct {
	shape []int
	vals  []float64
}

// arange is the input of the given shape holding 0, 1, 2, ... in order, so
// that x[i,j,k] = i·(d1·d2) + j·d2 + k.
func arange(shape ...int) values {
	v := values{shape: shape, vals: make([]float64, graph.ShapeSize(shape))}
	for i := range v.vals {
		v.vals[i] = float64(i)
	}
	return v
}

// of is the input of the given shape holding vals.
func of(shape []int, vals ...float64) values { return values{shape, vals} }

// forwardCase builds a node from constants holding inputs; in both dtypes
// it must evaluate to want, of shape shape.
type forwardCase struct {
	name   string
	inputs []values
	build  func(xs ...*graph.Node) *graph.Node
	shape  []int
	want   []float64
}

func runForward(t *testing.T, cases []forwardCase) {
	t.Helper()
	for _, c := range cases {
		for _, dtype := range dtypes {
			t.Run(c.name+"/"+dtype.String(), func(t *testing.T) {
				g := graph.New()
				xs := make([]*graph.Node, len(c.inputs))
				for i, in := range c.inputs {
					xs[i] = g.Const(dense(t, dtype, in.shape, in.vals...))
				}
				y := c.build(xs...)
				if err := g.Err(); err != nil {
					t.Fatalf("case %v: %v", c.name, err)
				}
				if y.DType() != dtype {
					t.Errorf("case %v: dtype: got %v, want %v", c.name, y.DType(), dtype)
				}
				assertValues(t, eval(t, y, nil), c.shape, c.want...)
			})
		}
	}
}

// errorCase builds a node that is wrong; building must not panic, the node
// must be poisoned, and the graph's error must name the op, contain each of
// want and point at the test's line.
type errorCase struct {
	name  string
	build func(g *graph.Graph) *graph.Node
	op    string
	want  []string
}

func runErrors(t *testing.T, cases []errorCase) {
	t.Helper()
	for _, c := range cases {
		g := graph.New()
		y := c.build(g)
		err := g.Err()
		if err == nil {
			t.Errorf("case %v: got no error, want one", c.name)
			continue
		}
		if y.Err() == nil {
			t.Errorf("case %v: the node is not poisoned", c.name)
		}
		text := err.Error()
		for _, w := range append([]string{"nabla: " + c.op + ": ", "_test.go:"}, c.want...) {
			if !strings.Contains(text, w) {
				t.Errorf("case %v: got %q, want it to contain %q", c.name, text, w)
			}
		}
	}
}

// backwardCase applies an op to random float64 constants of the given
// shapes; its Backward is checked numerically.
type backwardCase struct {
	name   string
	shapes [][]int
	build  func(xs ...*graph.Node) *graph.Node
}

func runBackward(t *testing.T, cases []backwardCase) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			xs := make([]*graph.Node, len(c.shapes))
			for i, s := range c.shapes {
				xs[i] = randomConst(t, g, r, s...)
			}
			checkBackward(t, c.build(xs...), nil)
		})
	}
}

// randomConst adds a float64 constant of the given shape with values drawn
// uniformly from [-1, 1).
func randomConst(t testing.TB, g *graph.Graph, r *rand.Rand, shape ...int) *graph.Node {
	t.Helper()
	v := randomValues(r, shape...)
	return g.Const(dense(t, graph.Float64, v.shape, v.vals...))
}

// randomValues is an input of the given shape with values in [-1, 1).
func randomValues(r *rand.Rand, shape ...int) values {
	v := values{shape: shape, vals: make([]float64, graph.ShapeSize(shape))}
	for i := range v.vals {
		v.vals[i] = 2*r.Float64() - 1
	}
	return v
}

// plus adds c to every element.
func (v values) plus(c float64) values {
	for i := range v.vals {
		v.vals[i] += c
	}
	return v
}

// f64 adds a float64 input of the given shape.
func f64(g *graph.Graph, shape ...int) *graph.Node { return g.Input("x", graph.Float64, shape...) }

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
	checkBackwardOrder(t, y, feeds, backwardOptions{order: 2})
}

// backwardOptions tune checkBackwardOrder: how many orders to check, the
// inputs whose gradient is not asked for (NeedsGrad false) and those that
// get no gradient even when asked (labels, say).
type backwardOptions struct {
	order        int
	skip, noGrad []int
}

func checkBackwardOrder(t *testing.T, y *graph.Node, feeds map[*graph.Node]*tensor.Dense, o backwardOptions) {
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
		needs[i] = !slices.Contains(o.skip, i)
	}
	grads := diff.Backward(graph.NewGradContext(y, needs), seed)
	if err := g.Err(); err != nil {
		t.Fatalf("%v: Backward: %v", y, err)
	}
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
		if !needs[i] || slices.Contains(o.noGrad, i) {
			if grad != nil {
				t.Errorf("%v: input %d: got gradient %v, want none", y, i, grad)
			}
			continue
		}
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
		if o.order > 1 && onLeaves(grads[i]) {
			checkBackwardOrder(t, grads[i], feeds, backwardOptions{order: o.order - 1})
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

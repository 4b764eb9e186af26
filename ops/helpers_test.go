package ops

import (
	"math"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// dtypes are the two dtypes every forward test runs in.
var dtypes = []tensor.Dtype{graph.Float64, graph.Float32}

// dense builds a tensor of dtype and shape from float64 values.
func dense(t testing.TB, dtype tensor.Dtype, shape []int, vals ...float64) *tensor.Dense {
	t.Helper()
	d, err := graph.FromFloat64s(dtype, vals, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// eval computes node n by calling each op's Forward directly, in creation
// order, independently of the compiler and VM. Inputs take values from
// feeds; params and consts their own values.
func eval(t testing.TB, n *graph.Node, feeds map[*graph.Node]*tensor.Dense) *tensor.Dense {
	t.Helper()
	g := n.Graph()
	if err := g.Err(); err != nil {
		t.Fatalf("graph error: %v", err)
	}
	vals := map[*graph.Node]*tensor.Dense{}
	for _, m := range g.Nodes()[:n.ID()+1] {
		switch m.Kind() {
		case graph.KindInput:
			vals[m] = feeds[m]
			continue
		case graph.KindParam, graph.KindConst:
			vals[m] = m.Value()
			continue
		}
		if _, ok := vals[m]; ok { // computed with its multi-output siblings
			continue
		}
		in := make([]*tensor.Dense, len(m.Inputs()))
		for i, x := range m.Inputs() {
			in[i] = vals[x]
		}
		var err error
		if op := m.Op(); op != nil {
			out := graph.NewDenseOf(m.Type())
			err = op.Forward(out, in)
			vals[m] = out
		} else {
			multi, _ := m.MultiOp()
			outs := make([]*tensor.Dense, len(m.Outputs()))
			for i, o := range m.Outputs() {
				outs[i] = graph.NewDenseOf(o.Type())
				vals[o] = outs[i]
			}
			err = multi.Forward(outs, in)
		}
		if err != nil {
			t.Fatalf("%v: Forward: %v", m, err)
		}
	}
	return vals[n]
}

// assertValues checks a tensor's shape and values against hand-computed
// ones, to a tolerance suited to its dtype.
func assertValues(t testing.TB, got *tensor.Dense, shape []int, want ...float64) {
	t.Helper()
	if !graph.TypeOf(got.Dtype(), got.Shape()...).Equal(graph.TypeOf(got.Dtype(), shape...)) {
		t.Fatalf("shape: got %v, want %v", got.Shape(), graph.ShapeString(shape))
	}
	tol := 1e-12
	if got.Dtype() == graph.Float32 {
		tol = 1e-5
	}
	vals := graph.Float64s(got)
	if len(vals) != len(want) {
		t.Fatalf("got %d values, want %d", len(vals), len(want))
	}
	for i, w := range want {
		g := vals[i]
		if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(g-w) > tol*math.Max(1, math.Abs(w))) {
			t.Errorf("element %d: got %v, want %v (all: %v)", i, g, w, vals)
		}
	}
}

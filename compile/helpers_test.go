package compile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// The pass tests build a graph with ops' builders and compare the compiled
// program's listing (Program.String) with the one they expect, so a test
// reads like the graph before and after:
//
//	tg := newTestGraph()
//	y := ops.Mul(tg.x, tg.c(1))
//	tg.expect(t, []*graph.Node{y}, only("simplify"), "return x")

// testGraph is a graph with inputs for pass tests: x and y of shape (2,3),
// v of shape (3) and s a scalar, all float64.
type testGraph struct {
	g          *graph.Graph
	x, y, v, s *graph.Node
}

func newTestGraph() *testGraph {
	g := graph.New()
	return &testGraph{
		g: g,
		x: g.Input("x", graph.Float64, 2, 3),
		y: g.Input("y", graph.Float64, 2, 3),
		v: g.Input("v", graph.Float64, 3),
		s: g.Input("s", graph.Float64),
	}
}

// c is a float64 scalar constant.
func (tg *testGraph) c(v float64) *graph.Node { return tg.g.Scalar(v, graph.Float64) }

// fill is a float64 constant of the given shape with every element v.
func (tg *testGraph) fill(v float64, shape ...int) *graph.Node {
	t := graph.NewDense(graph.Float64, shape...)
	for i := range graph.ShapeSize(shape) {
		graph.SetFloat(t, i, v)
	}
	return tg.g.Const(t)
}

// expect compiles outputs with the invariant checker on and compares the
// program's listing with want, given one instruction a line.
func (tg *testGraph) expect(t *testing.T, outputs []*graph.Node, opts []Option, want ...string) *Program {
	t.Helper()
	p, err := Compile(outputs, append(opts, WithChecks())...)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	if got := strings.TrimSuffix(p.String(), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("got program\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	return p
}

// only switches off every optional pass but deadcode and the named ones.
func only(names ...string) []Option {
	var opts []Option
	for _, p := range passes {
		if !p.required && !strings.HasSuffix(p.name, "deadcode") && !slices.Contains(names, p.name) {
			opts = append(opts, WithoutPass(p.name))
		}
	}
	return opts
}

// must returns v, panicking on an error (for test fixtures only).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Test ops. Each computes x + shift elementwise, so values are easy to
// check, and differs in how its identity is given.

// addShift writes x + shift into out.
func addShift(out, x *tensor.Dense, shift float64) {
	for i := range graph.ShapeSize(out.Shape()) {
		graph.SetFloat(out, i, graph.Float(x, i)+shift)
	}
}

func sameType(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 1); err != nil {
		return graph.Type{}, err
	}
	return in[0], nil
}

// pairOp has two outputs, x + shift and x - shift.
type pairOp struct{ shift float64 }

func (pairOp) Name() string { return "Pair" }
func (pairOp) Types(in []graph.Type) ([]graph.Type, error) {
	t, err := sameType(in)
	return []graph.Type{t, t}, err
}
func (o pairOp) Forward(out, in []*tensor.Dense) error {
	addShift(out[0], in[0], o.shift)
	addShift(out[1], in[0], -o.shift)
	return nil
}

// keyedOp is not comparable (a slice) but gives a Key.
type keyedOp struct{ shifts []float64 }

func (keyedOp) Name() string                             { return "Keyed" }
func (o keyedOp) Key() string                            { return fmt.Sprint(o.shifts) }
func (keyedOp) Type(in []graph.Type) (graph.Type, error) { return sameType(in) }
func (o keyedOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	addShift(out, in[0], o.shifts[0])
	return nil
}

// opaqueOp is neither comparable nor keyed: it never equals another.
type opaqueOp struct{ shift func() float64 }

func (opaqueOp) Name() string                             { return "Opaque" }
func (opaqueOp) Type(in []graph.Type) (graph.Type, error) { return sameType(in) }
func (o opaqueOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	addShift(out, in[0], o.shift())
	return nil
}

// boxedOp's type is comparable, but its field may hold a value that cannot
// be hashed.
type boxedOp struct{ shift any }

func (boxedOp) Name() string                             { return "Boxed" }
func (boxedOp) Type(in []graph.Type) (graph.Type, error) { return sameType(in) }
func (boxedOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	addShift(out, in[0], 0)
	return nil
}

// failOp's kernel fails, or panics.
type failOp struct{ panics bool }

func (failOp) Name() string                             { return "Fail" }
func (failOp) Type(in []graph.Type) (graph.Type, error) { return sameType(in) }
func (o failOp) Forward(*tensor.Dense, []*tensor.Dense) error {
	if o.panics {
		panic("kernel bug")
	}
	return errors.New("out of luck")
}

// sourceOp takes no input and gives zeros.
type sourceOp struct{}

func (sourceOp) Name() string                                 { return "Source" }
func (sourceOp) Type([]graph.Type) (graph.Type, error)        { return graph.TypeOf(graph.Float64, 2, 3), nil }
func (sourceOp) Forward(*tensor.Dense, []*tensor.Dense) error { return nil }

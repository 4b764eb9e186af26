package graph_test

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// panicNameOp's Name panics.
type panicNameOp struct{}

func (panicNameOp) Name() string                                        { panic("no name") }
func (panicNameOp) Type(in []graph.Type) (graph.Type, error)            { return in[0], nil }
func (panicNameOp) Forward(out *tensor.Dense, in []*tensor.Dense) error { return nil }

// Mistakes with shapes, enums, writers and ops give errors, not panics.
func TestMisuseGivesErrors(t *testing.T) {
	contains := func(what string, err error, part string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("%s: got %v, want an error containing %q", what, err, part)
		}
	}
	_, err := graph.FromFloat64s(graph.Float64, nil, -1, 0)
	contains("negative dimension", err, "negative dimension")

	g := graph.New()
	g.Input("x", graph.Float64, 3, 1<<62)
	contains("overflowing shape", g.Err(), "more elements than an int can count")
	g = graph.New()
	g.Input("x", graph.Float64, 1<<32, 1<<32) // 2⁶⁴ elements wrap to 0
	contains("wrapping shape", g.Err(), "more elements than an int can count")

	g = graph.New()
	x := g.Input("x", graph.Float64, 2)
	graph.Apply(panicNameOp{}, x)
	contains("panicking Name", g.Err(), "graph_test.panicNameOp: its Name method panicked: no name")

	contains("WriteDot to nil", graph.WriteDot(nil, graph.New(), graph.DotOptions{}), "nil writer")

	if got := graph.Kind(7).String(); got != "Kind(7)" {
		t.Errorf("Kind(7).String() = %q, want Kind(7)", got)
	}
}

// Nil and zero values, and indices out of range, given to the package's
// functions and methods give errors or zero values, never panics.
func TestNilAndZeroValuesNeverPanic(t *testing.T) {
	zero := &tensor.Dense{}
	var nilGraph *graph.Graph
	var nilError *graph.Error
	var nilExec *graph.Exec
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := graph.Apply(addOp{}, x, x)
	errContains := func(err error, part string) bool { return err != nil && strings.Contains(err.Error(), part) }
	cases := []struct {
		name string
		ok   func() bool // reports whether the result is the documented one
	}{
		{"CloneDense(nil)", func() bool { _, err := graph.CloneDense(nil); return errContains(err, "the tensor is nil") }},
		{"CloneDense(zero)", func() bool {
			_, err := graph.CloneDense(zero)
			return errContains(err, "the tensor is empty (a zero tensor.Dense)")
		}},
		{"Float64s(nil)", func() bool { return graph.Float64s(nil) == nil && graph.Float64s(zero) == nil }},
		{"Int64s(nil)", func() bool { return graph.Int64s(nil) == nil && graph.Int64s(zero) == nil }},
		{"Float(nil)", func() bool { return math.IsNaN(graph.Float(nil, 0)) && math.IsNaN(graph.Float(zero, 0)) }},
		{"Float out of range", func() bool {
			v := graph.NewDense(graph.Float64, 2)
			return math.IsNaN(graph.Float(v, 2)) && math.IsNaN(graph.Float(v, -1))
		}},
		{"SetFloat(nil)", func() bool { graph.SetFloat(nil, 0, 1); graph.SetFloat(zero, 3, 1); return true }},
		{"Backing(nil)", func() bool { return graph.Backing(nil) == nil && graph.Backing(zero) == nil }},
		{"CopyValues(nil, zero)", func() bool { return graph.CopyValues(nil, zero) == 0 }},
		{"CopyValues of other dtypes", func() bool {
			return graph.CopyValues(graph.NewDense(graph.Float32, 2), graph.NewDense(graph.Float64, 2)) == 0
		}},
		{"ScalarString(nil)", func() bool { return graph.ScalarString(nil) == "" && graph.ScalarString(zero) == "" }},
		{"NewDense(3, 1<<62)", func() bool { return graph.NewDense(graph.Float64, 3, 1<<62) == nil }},
		{"NewDense(1<<40, 1<<20)", func() bool { return graph.NewDense(graph.Float64, 1<<40, 1<<20) == nil }},
		{"NewDense(-1)", func() bool { return graph.NewDense(graph.Float64, -1) == nil }},
		{"Zeros(3, 1<<62)", func() bool {
			_, err := graph.Zeros(graph.Float64, 3, 1<<62)
			return errContains(err, "nabla: Zeros: shape (3,4611686018427387904) has more elements than an int can count")
		}},
		{"Zeros over the limit", func() bool {
			_, err := graph.Zeros(graph.Float64, 1<<20, 1<<20)
			return errContains(err, "nabla: Zeros: float64(1048576,1048576) needs 8796093022208 bytes (8 TiB), over the memory limit")
		}},
		{"Zeros", func() bool { v, err := graph.Zeros(graph.Int32, 2, 3); return err == nil && len(graph.Int64s(v)) == 6 }},
		{"Const(zero)", func() bool { return errContains(graph.New().Const(zero).Err(), "Const") }},
		{"Descendants past the last node", func() bool {
			m := g.Descendants([]*graph.Node{x}, 1<<62)
			return len(m) == g.Len() && m[y.ID()]
		}},
		{"Descendants of another graph's node", func() bool {
			other := graph.New().Input("z", graph.Float64, 2) // ID 0, as x's
			m := g.Descendants([]*graph.Node{other, nil}, y.ID())
			return len(m) == y.ID()+1 && !m[x.ID()] && !m[y.ID()]
		}},
		{"Descendants(-1)", func() bool { return g.Descendants(nil, -1) == nil && nilGraph.Descendants(nil, 3) == nil }},
		{"NewGradContext(nil, nil)", func() bool {
			c := graph.NewGradContext(nil, nil)
			c.Errorf("ignored: the first error stays")
			return errContains(c.Err(), "nil node") && c.Graph() == nil && c.Input(0) == nil &&
				c.Output() == nil && !c.NeedsGrad(0) && len(c.Inputs()) == 0
		}},
		{"GradContext.Input out of range", func() bool {
			c := graph.NewGradContext(y, []bool{true, true})
			return c.Input(2) == nil && c.Input(-1) == nil && c.Input(1) == x
		}},
		{"nil GradContext", func() bool {
			var c *graph.GradContext
			_, err := c.Differentiate(nil, nil, nil)
			return c.Err() != nil && err != nil && c.WithDifferentiator(nil) == nil && c.Output() == nil
		}},
		{"NewJVPContext(nil)", func() bool {
			c := graph.NewJVPContext(nil, nil, 0)
			return c.Graph() == nil && c.Input(0) == nil && c.Tangent(3) == nil && c.Output() == nil
		}},
		{"nil JVPContext", func() bool {
			var c *graph.JVPContext
			c.Decline()
			return c.Declined() && c.Batch() == 0 && c.Axis(-1, 2) == 1 && c.Tangent(0) == nil
		}},
		{"nil *Error", func() bool {
			return nilError.Error() != "" && nilError.Unwrap() == nil && (&graph.Error{Op: "X"}).Error() == "nabla: X: unknown error"
		}},
		{"Exec with nil task and init", func() bool {
			nilExec.Parallel(3, nil)
			graph.NewExec(nil).Parallel(3, nil)
			return nilExec.State(1, nil) == nil && graph.NewExec(nil).State(1, nil) == nil
		}},
		{"NewInterpreter(nil)", func() bool {
			_, err := graph.NewInterpreter(nil)
			return errContains(err, "subgraph is nil")
		}},
		{"interpreter In/Out out of range", func() bool {
			r, err := graph.NewInterpreter(&graph.Subgraph{Inputs: []*graph.Node{x}, Outputs: []*graph.Node{y}})
			return err == nil && r.In(1) == nil && r.Out(-1) == nil && r.In(0) != nil
		}},
		{"CostOf(nil)", func() bool { return graph.CostOf(nil, []graph.Type{{}}, graph.Type{}) == graph.Cost{} }},
		{"ApplyComposite of a nil-graph input", func() bool {
			return graph.ApplyComposite(nameless{}, &graph.Node{}).Err() != nil
		}},
	}
	for _, c := range cases {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("case %s: panicked: %v", c.name, r)
				}
			}()
			if !c.ok() {
				t.Errorf("case %s: not the documented result", c.name)
			}
		}()
	}
}

// nameless is a composite op whose Name panics.
type nameless struct{}

func (nameless) Name() string                       { panic("no name") }
func (nameless) Build(in []*graph.Node) *graph.Node { return in[0] }
func (nameless) Backward(ctx *graph.GradContext, gradOut *graph.Node) []*graph.Node {
	return []*graph.Node{gradOut}
}

// A shape the caller got from Shape is the caller's: writing to it or
// appending to it changes neither the node nor another caller's copy.
func TestShapeIsTheCallersCopy(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, append(make([]int, 0, 8), 2, 3)...)
	s := x.Shape()
	s[0] = 7
	a := append(x.Shape(), 4)
	b := append(x.Shape(), 5)
	if got := x.Shape(); len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("node's shape became %v after the caller wrote to its copy", got)
	}
	if a[2] != 4 || b[2] != 5 {
		t.Fatalf("appends to two copies share memory: %v %v", a, b)
	}
	if got := x.Type().Shape; got[0] != 2 {
		t.Fatalf("Type().Shape became %v", got)
	}
}

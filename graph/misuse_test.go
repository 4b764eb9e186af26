package graph_test

import (
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

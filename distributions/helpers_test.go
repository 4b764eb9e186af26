package distributions_test

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"github.com/nabla-go/nabla/vm"
)

// run compiles outputs (with updates), runs them once and returns their
// values as float64s.
func run(t testing.TB, updates map[*graph.Node]*graph.Node, outputs ...*graph.Node) [][]float64 {
	t.Helper()
	prog, err := compile.Compile(outputs, compile.WithUpdates(updates))
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(nil); err != nil {
		t.Fatal(err)
	}
	return fdtest.Values(t, m, outputs)
}

// constant adds a constant of the given values and shape.
func constant(t testing.TB, g *graph.Graph, dtype tensor.Dtype, vals []float64, shape ...int) *graph.Node {
	t.Helper()
	v, err := graph.FromFloat64s(dtype, vals, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return g.Const(v)
}

package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// machine compiles outputs (with updates, if any) and returns a machine
// for them.
func machine(t *testing.T, outputs []*graph.Node, updates map[*graph.Node]*graph.Node) *vm.Machine {
	t.Helper()
	var opts []compile.Option
	if updates != nil {
		opts = append(opts, compile.WithUpdates(updates))
	}
	prog, err := compile.Compile(outputs, opts...)
	require.NoError(t, err)
	m, err := vm.New(prog)
	require.NoError(t, err)
	return m
}

// value returns node's value in m as float64s.
func value(t *testing.T, m *vm.Machine, n *graph.Node) []float64 {
	t.Helper()
	v, err := m.Value(n)
	require.NoError(t, err)
	return graph.Float64s(v)
}

// dense returns a float64 tensor of the given shape.
func dense(t *testing.T, vals []float64, shape ...int) *tensor.Dense {
	t.Helper()
	d, err := graph.FromFloat64s(graph.Float64, vals, shape...)
	require.NoError(t, err)
	return d
}

// assertClose compares got and want elementwise within tol.
func assertClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol || math.IsNaN(got[i]) {
			t.Fatalf("%s: element %d: got %v, want %v (got %v, want %v)", what, i, got[i], want[i], got, want)
		}
	}
}

// checkGradients checks the first and second derivatives of fn against
// finite differences at inputs, with respect to the inputs listed (all if
// none are).
func checkGradients(t *testing.T, fn func(in []*graph.Node) *graph.Node, inputs []*tensor.Dense, wrt ...int) {
	t.Helper()
	opts := gradcheck.Options{Inputs: wrt}
	require.NoError(t, gradcheck.Check(fn, inputs, opts))
	require.NoError(t, gradcheck.GradGradCheck(fn, inputs, opts))
}

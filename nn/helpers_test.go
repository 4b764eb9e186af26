package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
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

// checkGradient compares the symbolic gradient of the scalar loss with
// respect to the parameter p against central finite differences, both
// computed by machines at p's initial value.
func checkGradient(t *testing.T, loss, p *graph.Node, feeds vm.Feeds) {
	t.Helper()
	grads, err := compile.Grad(loss, p)
	require.NoError(t, err)
	m := machine(t, []*graph.Node{loss, grads[0]}, nil)
	require.NoError(t, m.Run(feeds))
	symbolic := value(t, m, grads[0])
	p0, err := m.Get(p)
	require.NoError(t, err)
	const h = 1e-6
	at := func(i int, delta float64) float64 {
		q, err := graph.CloneDense(p0)
		require.NoError(t, err)
		graph.SetFloat(q, i, graph.Float(q, i)+delta)
		require.NoError(t, m.Set(p, q))
		require.NoError(t, m.Run(feeds))
		return value(t, m, loss)[0]
	}
	numeric := make([]float64, p0.DataSize())
	for i := range numeric {
		numeric[i] = (at(i, h) - at(i, -h)) / (2 * h)
	}
	require.NoError(t, m.Set(p, p0))
	assertClose(t, "gradient of "+p.Name(), symbolic, numeric, 1e-6)
}

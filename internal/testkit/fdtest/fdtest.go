package fdtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TensorOf returns a tensor of type typ holding vals.
func TensorOf(t testing.TB, typ graph.Type, vals ...float64) *tensor.Dense {
	t.Helper()
	d, err := graph.FromFloat64s(typ.DType, vals, typ.Shape...)
	require.NoError(t, err)
	return d
}

// RandomValues draws n values uniformly from [-1, 1), seeded.
func RandomValues(seed uint64, n int) []float64 {
	r := rand.New(rand.NewPCG(seed, 11))
	v := make([]float64, n)
	for i := range v {
		v[i] = 2*r.Float64() - 1
	}
	return v
}

// Machine compiles outputs, checking the compiler's invariants, into a new
// machine.
func Machine(t testing.TB, outputs ...*graph.Node) *vm.Machine {
	t.Helper()
	p, err := compile.Compile(outputs, compile.WithChecks(), compile.WithFixedDraws())
	require.NoError(t, err)
	m, err := vm.New(p)
	require.NoError(t, err)
	return m
}

// Evaluate runs outputs once with the input x fed x0 (x may be nil) and
// returns their values.
func Evaluate(t testing.TB, outputs []*graph.Node, x *graph.Node, x0 []float64) [][]float64 {
	t.Helper()
	m := Machine(t, outputs...)
	feeds := vm.Feeds{}
	if x != nil {
		feeds[x] = TensorOf(t, x.Type(), x0...)
	}
	require.NoError(t, m.Run(feeds))
	return Values(t, m, outputs)
}

// Values reads the values of outputs from m, after a run, as float64s.
func Values(t testing.TB, m *vm.Machine, outputs []*graph.Node) [][]float64 {
	t.Helper()
	vals := make([][]float64, len(outputs))
	for i, o := range outputs {
		v, err := m.Value(o)
		require.NoError(t, err)
		vals[i] = graph.Float64s(v)
	}
	return vals
}

// NumericGrad is the central-difference gradient of the scalar y with
// respect to the input x at x0.
func NumericGrad(t testing.TB, y, x *graph.Node, x0 []float64) []float64 {
	t.Helper()
	const eps = 1e-5
	m := Machine(t, y)
	at := func(xs []float64) float64 {
		require.NoError(t, m.Run(vm.Feeds{x: TensorOf(t, x.Type(), xs...)}))
		v, err := m.Value(y)
		require.NoError(t, err)
		return graph.Float(v, 0)
	}
	grad := make([]float64, len(x0))
	xs := append([]float64(nil), x0...)
	for i := range xs {
		xs[i] = x0[i] + eps
		hi := at(xs)
		xs[i] = x0[i] - eps
		lo := at(xs)
		xs[i] = x0[i]
		grad[i] = (hi - lo) / (2 * eps)
	}
	return grad
}

// RequireClose fails unless got matches want elementwise to the relative
// tolerance tol (absolute below 1).
func RequireClose(t testing.TB, want, got []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if math.Abs(want[i]-got[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s: element %d: got %v, want %v\ngot  %v\nwant %v", what, i, got[i], want[i], got, want)
		}
	}
}

// CheckOrders checks the derivatives of the scalar f with respect to the
// input x at x0, up to the given order, against finite differences:
// F1 = f, F(k+1) = <∇Fk, Vk> for seeded random directions Vk, and ∇Fk must
// match the numeric gradient of Fk to 1e-6.
func CheckOrders(t testing.TB, name string, f, x *graph.Node, x0 []float64, orders int) {
	t.Helper()
	g := x.Graph()
	require.NoError(t, g.Err(), name)
	for order := 1; order <= orders; order++ {
		gr, err := compile.Grad(f, x)
		require.NoError(t, err, "%s: order %d", name, order)
		got := Evaluate(t, gr, x, x0)[0]
		RequireClose(t, NumericGrad(t, f, x, x0), got, 1e-6, fmt.Sprintf("%s: derivative of order %d", name, order))
		v := g.Const(TensorOf(t, x.Type(), RandomValues(uint64(order), len(x0))...))
		f = ops.Sum(ops.Mul(gr[0], v))
	}
}

package compile_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// withMemoryLimit sets graph.MemoryLimit to bytes for the rest of t.
func withMemoryLimit(t *testing.T, bytes int64) {
	prev := graph.SetMemoryLimit(bytes)
	t.Cleanup(func() { graph.SetMemoryLimit(prev) })
}

// TestDerivativeErrorsNameTheCaller: an entry point's error names the
// function the user called and what it needs, not the Grad or JVP it
// calls.
func TestDerivativeErrorsNameTheCaller(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4)
	v := ops.Mul(x, x) // not a scalar
	ix := g.Input("i", graph.Int64, 3)
	cases := []struct {
		name string
		err  func() error
		want []string
	}{
		{"Hessian", func() error { _, err := compile.Hessian(v, x); return err },
			[]string{`nabla: Hessian: f, Mul #1 float64(4), is not a scalar: a Hessian is of a scalar function at derivsize_test.go:`}},
		{"HVP", func() error { _, err := compile.HVP(v, x, x); return err },
			[]string{`nabla: HVP: f, Mul #1 float64(4), is not a scalar: HVP multiplies by the Hessian of a scalar function at derivsize_test.go:`}},
		{"SparseHessian", func() error { _, err := compile.SparseHessian(v, x); return err },
			[]string{`nabla: SparseHessian: f, Mul #1 float64(4), is not a scalar: a Hessian is of a scalar function at derivsize_test.go:`}},
		{"Grad", func() error { _, err := compile.Grad(v, x); return err },
			[]string{`nabla: Grad: y, Mul #1 float64(4), is not a scalar: Grad differentiates a scalar (compile.Gradients takes a seed`}},
		{"Gradients", func() error { _, err := compile.Gradients([]*graph.Node{v}, nil, []*graph.Node{x}); return err },
			[]string{`nabla: Gradients: output 0, Mul #1 float64(4), is not a scalar: give it a seed gradient of its type`}},
		{"Jacobian in reverse mode", func() error { _, err := compile.JacobianWith(ops.Sum(x), ix, compile.Reverse); return err },
			[]string{`nabla: Jacobian: cannot differentiate with respect to input "i"`}},
		{"PerExampleGradients", func() error {
			_, err := compile.PerExampleGradients(func(e []*graph.Node) *graph.Node { return ops.Cast(ops.Sum(e[0]), graph.Int64) },
				[]*graph.Node{g.Input("b", graph.Float64, 5, 4)}, []*graph.Node{x})
			return err
		}, []string{`nabla: PerExampleGradients: output Cast`, `is an integer`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

// TestDerivativeSizesAreChecked: every derivative builder checks the size
// of what it would allocate against graph.MemoryLimit, with an
// overflow-checked product, before allocating it; the byte counts are
// n·n·8 and the like, worked out by hand.
func TestDerivativeSizesAreChecked(t *testing.T) {
	const limit = 16 << 20
	withMemoryLimit(t, limit)
	var g *graph.Graph // a new one for each case
	vec := func(n int) *graph.Node { return g.Input("x", graph.Float64, n) }
	sumSq := func(x *graph.Node) *graph.Node { return ops.Sum(ops.Square(x)) }
	cases := []struct {
		name    string
		err     func() error
		want    []string
		pattern bool // propagates sets until the limit or a dense node stops it
	}{
		{"Hessian of 2^12", func() error { x := vec(1 << 12); _, err := compile.Hessian(sumSq(x), x); return err },
			[]string{`nabla: Hessian: the Hessian of Sum`, `with respect to input "x"`,
				`float64(4096,4096) needs 134217728 bytes (128 MiB), over the memory limit of 16777216 bytes (16 MiB) (graph.SetMemoryLimit); compile.HVP gives`}, false},
		{"Hessian of 2^32: n·n overflows", func() error { x := vec(1 << 32); _, err := compile.Hessian(sumSq(x), x); return err },
			[]string{`nabla: Hessian: the Hessian of Sum`, `shape (4294967296,4294967296) has more elements than an int can count`}, false},
		{"Jacobian", func() error { x := vec(1 << 12); _, err := compile.Jacobian(ops.Sin(x), x); return err },
			[]string{`nabla: Jacobian: the Jacobian of Sin`, `float64(4096,4096) needs 134217728 bytes (128 MiB), over the memory limit`, `compile.JVP and compile.Gradients`}, false},
		{"Jacobian in forward mode, its unit tangents", func() error {
			x := vec(1 << 12)
			_, err := compile.JacobianWith(ops.Reshape(ops.Sum(x), 1), x, compile.Forward)
			return err
		}, []string{`in forward mode, one unit tangent per element of x: float64(4096,4096) needs 134217728 bytes (128 MiB)`}, false},
		{"Jacobian in reverse mode, its seeds", func() error {
			x := g.Input("s", graph.Float64, 1)
			_, err := compile.JacobianWith(ops.BroadcastTo(x, 1<<12), x, compile.Reverse)
			return err
		}, []string{`in reverse mode, one seed per element of y: float64(4096,4096) needs 134217728 bytes (128 MiB)`}, false},
		{"SparseJacobian of a dense x·sum(x)", func() error {
			x := vec(1 << 13)
			_, err := compile.SparseJacobian(ops.Mul(x, ops.Sum(x)), x)
			return err
		}, []string{`nabla: SparseJacobian: the sparsity pattern is dense: the elements of Mul`, `depend on 8192 of x's 8192 elements on average`,
			`compile.Jacobian forms it dense; compile.JVP and compile.Gradients`}, true},
		{"JacobianPattern over the limit", func() error {
			x := vec(1 << 20) // a diagonal, but x's 2^20 sets take 32 MiB
			_, err := compile.JacobianPattern(ops.Mul(x, x), x)
			return err
		}, []string{`nabla: JacobianPattern: the sparsity pattern, propagated to input "x"`,
			`needs more than the memory limit of 16777216 bytes (16 MiB) (graph.SetMemoryLimit)`}, true},
		{"SparseHessian of a dense sum(x)²", func() error {
			x := vec(1 << 13)
			_, err := compile.SparseHessian(ops.Square(ops.Sum(x)), x)
			return err
		}, []string{`nabla: SparseHessian: the sparsity pattern is dense`, `compile.Hessian forms it dense; compile.HVP`}, true},
		{"SparseJacobian's seeds", func() error {
			// A pattern of 2^12 rows of one entry but one dense row: 2^12
			// colours, so 2^12 seeds of 2^12 elements, refused before the
			// colouring (time 2^24 for that row).
			x := vec(1 << 12)
			_, err := compile.SparseJacobian(ops.Concat(0, x, ops.Reshape(ops.Sum(x), 1)), x)
			return err
		}, []string{`nabla: SparseJacobian: the seeds of at least 4096 colours (a row of the pattern has 4096 entries): ` +
			`float64(4096,4096) needs 134217728 bytes (128 MiB)`}, false},
		{"PerExampleGradients", func() error {
			w := g.Input("w", graph.Float64, 1<<12, 1<<10)
			_, err := compile.PerExampleGradients(func(e []*graph.Node) *graph.Node { return ops.Sum(ops.MatMul(e[0], w)) },
				[]*graph.Node{g.Input("b", graph.Float64, 1<<20, 1<<12)}, []*graph.Node{w})
			return err
		}, []string{`nabla: PerExampleGradients: the gradients of input "w"`, `for 1048576 examples: float64(1048576,4096,1024) needs 35184372088832 bytes (32 TiB)`,
			`give fewer examples at a time`}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g = graph.New()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := tc.err()
			runtime.ReadMemStats(&after)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
			// Refused before allocating (far less than the limit), or, for
			// a pattern, once its sets reach the limit.
			most := uint64(limit / 2)
			if tc.pattern {
				most = 2 * limit
			}
			require.Less(t, after.TotalAlloc-before.TotalAlloc, most, "bytes allocated")
		})
	}
}

// TestDerivativesUnderTheLimitStillBuild: the same builders at sizes under
// the limit give their derivatives, with the values a hand derivation
// gives (the Hessian of Σx² is 2I; the Jacobian of x·Σx is Σx·I + x1ᵀ).
func TestDerivativesUnderTheLimitStillBuild(t *testing.T) {
	withMemoryLimit(t, 16<<20)
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	h, err := compile.Hessian(ops.Sum(ops.Square(x)), x)
	require.NoError(t, err)
	j, err := compile.SparseJacobian(ops.Mul(x, ops.Sum(x)), x)
	require.NoError(t, err)
	x0 := []float64{1, 2, 4}
	vals := runAt(t, x, x0, h, j.Values)
	require.Equal(t, []float64{2, 0, 0, 0, 2, 0, 0, 0, 2}, vals[0])
	dense := j.Pattern.Dense(vals[1])
	s := 7.0
	for i := range 3 {
		for k := range 3 {
			want := x0[i]
			if i == k {
				want += s
			}
			require.InDelta(t, want, dense[i*3+k], 1e-12, "entry (%d,%d)", i, k)
		}
	}
}

// TestHugeZeroGradientsAllocateNothing: the zero gradient of a
// disconnected input of 2^24 elements (128 MiB), under a 16 MiB limit,
// is a broadcast zero, not a constant allocated and then refused.
func TestHugeZeroGradientsAllocateNothing(t *testing.T) {
	withMemoryLimit(t, 16<<20)
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	w := g.Input("w", graph.Float64, 1<<12, 1<<12)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	grads, err := compile.GradWith(ops.Sum(ops.Square(x)), []*graph.Node{x, w}, compile.ZerosIfDisconnected())
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated")
	require.True(t, grads[1].Type().Equal(w.Type()), "type %v", grads[1].Type())
	// Its values are zeros: one of 16 elements over a limit of 100 bytes,
	// run under the default limit.
	graph.SetMemoryLimit(100)
	v := g.Input("v", graph.Float64, 16)
	zv, err := compile.GradWith(ops.Sum(x), []*graph.Node{v}, compile.ZerosIfDisconnected())
	require.NoError(t, err)
	require.NotEqual(t, graph.KindConst, zv[0].Kind())
	graph.SetMemoryLimit(0)
	require.Equal(t, make([]float64, 16), runNodes(t, vm.Feeds{}, zv[0])[0])
	// A small one is still a constant of zeros.
	small, err := compile.GradWith(ops.Sum(x), []*graph.Node{g.Input("z", graph.Float64, 2)}, compile.ZerosIfDisconnected())
	require.NoError(t, err)
	require.Equal(t, graph.KindConst, small[0].Kind())
	require.Equal(t, []float64{0, 0}, graph.Float64s(small[0].Value()))
}

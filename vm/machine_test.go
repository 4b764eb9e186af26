package vm_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

func dense(t *testing.T, dtype tensor.Dtype, shape []int, vals ...float64) *tensor.Dense {
	t.Helper()
	d, err := graph.FromFloat64s(dtype, vals, shape...)
	require.NoError(t, err)
	return d
}

func machine(t *testing.T, outputs []*graph.Node, opts ...compile.Option) *vm.Machine {
	t.Helper()
	p, err := compile.Compile(outputs, append(opts, compile.WithChecks())...)
	require.NoError(t, err)
	m, err := vm.New(p)
	require.NoError(t, err)
	return m
}

// TestUpdateReadsOldValue: p ← p - 0.1·x is applied once per Run, and the
// run's outputs see the value from before the update.
func TestUpdateReadsOldValue(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	p := g.Param("p", dense(t, graph.Float64, []int{2}, 1, 2))
	seen := ops.Scale(p, 1) // what the run computes from p
	next := ops.Sub(p, ops.Scale(x, 0.1))
	m := machine(t, []*graph.Node{seen}, compile.WithUpdates(map[*graph.Node]*graph.Node{p: next}))
	feeds := vm.Feeds{x: dense(t, graph.Float64, []int{2}, 10, 20)}

	want := []float64{1, 2}
	for run := 0; run < 3; run++ {
		require.NoError(t, m.Run(feeds))
		v, err := m.Value(seen)
		require.NoError(t, err)
		require.InDeltaSlice(t, want, v.Float64s(), 1e-12, "run %d: the output reads the old value", run)
		want = []float64{want[0] - 1, want[1] - 2} // p - 0.1·(10, 20)
		got, err := m.Get(p)
		require.NoError(t, err)
		require.InDeltaSlice(t, want, got.Float64s(), 1e-12, "run %d: one update per run", run)
	}
}

// TestSwapUpdates: updates read values from before any update is written,
// even when one parameter's update is another parameter.
func TestSwapUpdates(t *testing.T) {
	g := graph.New()
	a := g.Param("a", dense(t, graph.Float32, nil, 1))
	b := g.Param("b", dense(t, graph.Float32, nil, 2))
	m := machine(t, nil, compile.WithUpdates(map[*graph.Node]*graph.Node{a: b, b: a}))
	require.NoError(t, m.Run(nil))
	va, _ := m.Get(a)
	vb, _ := m.Get(b)
	require.Equal(t, []float32{2}, va.Float32s())
	require.Equal(t, []float32{1}, vb.Float32s())
}

// TestBadFeeds: each mistake in feeds is a clear error naming the input.
func TestBadFeeds(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	w := g.Param("w", dense(t, graph.Float64, []int{3}, 1, 2, 3))
	y := ops.Mul(x, w)
	other := graph.New().Input("x", graph.Float64, 2, 3)
	m := machine(t, []*graph.Node{y})
	good := dense(t, graph.Float64, []int{2, 3}, 1, 2, 3, 4, 5, 6)
	cases := []struct {
		name  string
		feeds vm.Feeds
		want  string
	}{
		{"missing", vm.Feeds{}, `input "x" (float64(2,3)) is not fed`},
		{"wrong shape", vm.Feeds{x: dense(t, graph.Float64, []int{3, 2}, 1, 2, 3, 4, 5, 6)}, `input "x": shape (3,2), want (2,3)`},
		{"wrong dtype", vm.Feeds{x: dense(t, graph.Float32, []int{2, 3}, 1, 2, 3, 4, 5, 6)}, `input "x": dtype float32, want float64`},
		{"param fed", vm.Feeds{x: good, w: good}, "is not an input"},
		{"op node fed", vm.Feeds{x: good, y: good}, "is not an input"},
		{"other graph", vm.Feeds{x: good, other: good}, "belongs to another graph"},
		{"nil tensor", vm.Feeds{x: nil}, `input "x" is fed a nil tensor`},
	}
	for _, c := range cases {
		err := m.Run(c.feeds)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %v: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
	require.NoError(t, m.Run(vm.Feeds{x: good}))
	v, err := m.Value(y)
	require.NoError(t, err)
	require.Equal(t, []float64{1, 4, 9, 4, 10, 18}, v.Float64s())
}

// failingOp is a custom op whose kernel fails or panics, to show the VM
// names the node.
type failingOp struct{ panics bool }

func (failingOp) Name() string                             { return "Failing" }
func (failingOp) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }
func (o failingOp) Forward(_ *tensor.Dense, _ []*tensor.Dense) error {
	if o.panics {
		var s []int
		_ = s[3]
	}
	return errFailing
}

var errFailing = errorString("out of luck")

type errorString string

func (e errorString) Error() string { return string(e) }

// TestKernelFailures: a kernel's error or panic becomes an error naming the
// op, the node's name and where it was built.
func TestKernelFailures(t *testing.T) {
	for _, panics := range []bool{false, true} {
		g := graph.New()
		x := g.Input("x", graph.Float64, 2)
		y := graph.Apply(failingOp{panics: panics}, x).SetName("culprit")
		m := machine(t, []*graph.Node{y})
		err := m.Run(vm.Feeds{x: dense(t, graph.Float64, []int{2}, 1, 2)})
		require.Error(t, err)
		for _, want := range []string{"Failing", "culprit", "machine_test.go:"} {
			require.Contains(t, err.Error(), want)
		}
		if panics {
			require.Contains(t, err.Error(), "panicked")
		}
	}
}

// TestNaNCheck: with WithNaNCheck, the first instruction producing a NaN is
// named.
func TestNaNCheck(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := ops.Exp(ops.Log(x).SetName("logx"))
	p, err := compile.Compile([]*graph.Node{y})
	require.NoError(t, err)
	m, err := vm.New(p, vm.WithNaNCheck())
	require.NoError(t, err)
	err = m.Run(vm.Feeds{x: dense(t, graph.Float64, []int{2}, 1, -1)})
	require.ErrorContains(t, err, `Log "logx"`)
	require.ErrorContains(t, err, "NaN")
}

// TestSetGet: parameters can be read and written; wrong values are refused.
func TestSetGet(t *testing.T) {
	g := graph.New()
	w := g.Param("w", dense(t, graph.Float64, []int{2}, 1, 2))
	y := ops.Scale(w, 2)
	m := machine(t, []*graph.Node{y})
	require.NoError(t, m.Set(w, dense(t, graph.Float64, []int{2}, 5, 6)))
	require.NoError(t, m.Run(nil))
	v, err := m.Value(y)
	require.NoError(t, err)
	require.Equal(t, []float64{10, 12}, v.Float64s())
	require.ErrorContains(t, m.Set(w, dense(t, graph.Float64, []int{3}, 1, 2, 3)), "shape (3), want (2)")
	require.ErrorContains(t, m.Set(y, dense(t, graph.Float64, []int{2}, 1, 2)), "is not a parameter")
	_, err = m.Value(g.Input("z", graph.Float64))
	require.ErrorContains(t, err, "is not an output")
}

// TestSharedSlotShapes: values of different shapes sharing a slot are
// each seen in their own shape, by kernels and by Value.
func TestSharedSlotShapes(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	c := ops.Reshape(ops.Reshape(ops.Neg(x), 6), 3, 2)
	d := ops.Transpose(c)
	// Without simplification the two Reshapes stay, each in its
	// argument's slot: -x (2,3), its (6) and its (3,2) share the slot made
	// for -x, and the Transpose reads c there in c's shape.
	p, err := compile.Compile([]*graph.Node{d}, compile.WithChecks(), compile.WithoutPass("simplify"))
	require.NoError(t, err)
	require.Equal(t, "%0 = Neg x\n%0 = Reshape %0\n%0 = Reshape %0\n%1 = Transpose %0\nreturn %1\n", p.String())
	s, _ := p.SlotOf(c)
	require.Equal(t, []int{2, 3}, p.Slots()[s].Type.Shape)

	m, err := vm.New(p)
	require.NoError(t, err)
	require.NoError(t, m.Run(vm.Feeds{x: dense(t, graph.Float64, []int{2, 3}, 1, 2, 3, 4, 5, 6)}))
	v, err := m.Value(d)
	require.NoError(t, err)
	require.Equal(t, []int{2, 3}, []int(v.Shape()))
	// -x as (3,2) is ((-1,-2),(-3,-4),(-5,-6)); its transpose is
	// ((-1,-3,-5),(-2,-4,-6)).
	require.Equal(t, []float64{-1, -3, -5, -2, -4, -6}, v.Float64s())
}

// TestNaNCheckScalar: a scalar output is checked too.
func TestNaNCheckScalar(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64)
	y := ops.Log(x).SetName("logx")
	p, err := compile.Compile([]*graph.Node{y})
	require.NoError(t, err)
	m, err := vm.New(p, vm.WithNaNCheck())
	require.NoError(t, err)
	err = m.Run(vm.Feeds{x: dense(t, graph.Float64, nil, -1)})
	require.ErrorContains(t, err, `Log "logx"`)
}

// TestSharingParamsNeedsOneGraph: sharing parameters with a machine of
// another graph is refused rather than silently not shared.
func TestSharingParamsNeedsOneGraph(t *testing.T) {
	build := func() *compile.Program {
		g := graph.New()
		w := g.Param("w", dense(t, graph.Float64, []int{2}, 1, 2))
		p, err := compile.Compile([]*graph.Node{ops.Scale(w, 2)})
		require.NoError(t, err)
		return p
	}
	a, err := vm.New(build())
	require.NoError(t, err)
	_, err = vm.New(build(), vm.SharingParams(a))
	require.ErrorContains(t, err, "another graph")
}

// TestNilMachineAndGraph: calling methods on a nil machine or graph is an
// error, not a panic.
func TestNilMachineAndGraph(t *testing.T) {
	var m *vm.Machine
	require.ErrorContains(t, m.Run(nil), "machine is nil")
	_, err := m.Value(nil)
	require.ErrorContains(t, err, "machine is nil")
	_, err = m.Get(nil)
	require.ErrorContains(t, err, "machine is nil")
	require.ErrorContains(t, m.Set(nil, nil), "machine is nil")

	var g *graph.Graph
	require.NotPanics(t, func() {
		x := g.Input("x", graph.Float64, 2)
		require.ErrorContains(t, x.Err(), "graph is nil")
		require.ErrorContains(t, ops.Exp(x).Err(), "graph is nil")
		require.ErrorContains(t, g.Param("w", graph.NewDense(graph.Float64, 2)).Err(), "graph is nil")
		require.ErrorContains(t, g.Scalar(1, graph.Float64).Err(), "graph is nil")
		g.Scope("s")()
		require.ErrorContains(t, g.Err(), "graph is nil")
		require.Zero(t, g.Len())
		_, err := compile.Compile([]*graph.Node{x})
		require.ErrorContains(t, err, "graph is nil")
	})
}

package graph_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// addOp is a minimal custom op for testing the builder: same-shape add.
type addOp struct{}

func (addOp) Name() string { return "TestAdd" }
func (addOp) Type(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 2); err != nil {
		return graph.Type{}, err
	}
	if !in[0].Equal(in[1]) {
		return graph.Type{}, errors.New("types differ")
	}
	return in[0], nil
}
func (addOp) Forward(out *tensor.Dense, in []*tensor.Dense) error { return nil }

// panicOp's type inference panics; Apply must turn that into an error.
type panicOp struct{ addOp }

func (panicOp) Type([]graph.Type) (graph.Type, error) { panic("boom") }

// badTypeOp's type inference returns an unsupported dtype.
type badTypeOp struct{ addOp }

func (badTypeOp) Type(in []graph.Type) (graph.Type, error) {
	return graph.TypeOf(tensor.Int, 2), nil
}

func TestTypeString(t *testing.T) {
	require.Equal(t, "float64(64,784)", graph.TypeOf(graph.Float64, 64, 784).String())
	require.Equal(t, "float32()", graph.TypeOf(graph.Float32).String())
	require.Equal(t, "invalid()", graph.Type{}.String())
	require.Equal(t, 6, graph.TypeOf(graph.Float32, 2, 3).Size())
	require.Equal(t, 1, graph.TypeOf(graph.Float32).Size())
}

func TestBroadcastShapes(t *testing.T) {
	cases := []struct {
		a, b, want []int
		ok         bool
	}{
		{[]int{4, 1}, []int{3}, []int{4, 3}, true},
		{[]int{2, 1, 3}, []int{4, 1}, []int{2, 4, 3}, true},
		{nil, []int{2, 3}, []int{2, 3}, true},
		{[]int{0, 3}, []int{1, 3}, []int{0, 3}, true},
		{[]int{2, 3}, []int{4}, nil, false},
		{[]int{2}, []int{3}, nil, false},
	}
	for _, c := range cases {
		got, err := graph.BroadcastShapes(c.a, c.b)
		if c.ok {
			require.NoError(t, err, "case %v %v", c.a, c.b)
			require.Equal(t, c.want, got, "case %v %v", c.a, c.b)
		} else {
			require.Error(t, err, "case %v %v", c.a, c.b)
		}
	}
}

func TestLeavesCopyTheirValues(t *testing.T) {
	g := graph.New()
	v, err := graph.FromFloat64s(graph.Float64, []float64{1, 2}, 2)
	require.NoError(t, err)
	p := g.Param("w", v)
	v.Float64s()[0] = 99
	require.Equal(t, []float64{1, 2}, p.Value().Float64s(), "a parameter keeps its own copy")
	require.Equal(t, graph.KindParam, p.Kind())
	require.Equal(t, "w", p.Name())
	s := g.Scalar(2.5, graph.Float32)
	require.Equal(t, []float32{2.5}, s.Value().Float32s())
	require.True(t, s.Type().IsScalar())
	require.Equal(t, []*graph.Node{p, s}, g.Nodes())
}

func TestStickyErrorNamesOpTypesAndLine(t *testing.T) {
	g := graph.New()
	a := g.Input("a", graph.Float64, 2)
	b := g.Input("b", graph.Float64, 3)
	bad := graph.Apply(addOp{}, a, b) // this line is named in the error
	require.Error(t, bad.Err())
	msg := g.Err().Error()
	for _, want := range []string{"nabla: TestAdd: types differ", "float64(2) and float64(3)", "graph_test.go:"} {
		require.Contains(t, msg, want)
	}
	// Later builds short-circuit with the same error, even on healthy nodes.
	later := graph.Apply(addOp{}, bad, a)
	require.Equal(t, g.Err(), later.Err())
	require.Equal(t, g.Err(), graph.Apply(addOp{}, a, a).Err())
	require.Equal(t, -1, later.ID())
	require.Equal(t, 2, g.Len(), "no node is added after the error")
}

func TestSiteIsUserLine(t *testing.T) {
	g := graph.New()
	a := g.Input("a", graph.Float64, 2)
	n := graph.Apply(addOp{}, a, a)
	require.True(t, strings.HasPrefix(n.Site(), "graph_test.go:"), n.Site())
}

func TestApplyMistakesNeverPanic(t *testing.T) {
	cases := []struct {
		name  string
		build func(g *graph.Graph) *graph.Node
		want  string
	}{
		{"nil input", func(g *graph.Graph) *graph.Node {
			return graph.Apply(addOp{}, g.Input("a", graph.Float64, 2), nil)
		}, "input 1 is nil"},
		{"nil op", func(g *graph.Graph) *graph.Node {
			return graph.Apply(nil, g.Input("a", graph.Float64, 2))
		}, "op is nil"},
		{"other graph", func(g *graph.Graph) *graph.Node {
			return graph.Apply(addOp{}, g.Input("a", graph.Float64, 2), graph.New().Input("b", graph.Float64, 2))
		}, "belongs to another graph"},
		{"panicking type inference", func(g *graph.Graph) *graph.Node {
			a := g.Input("a", graph.Float64, 2)
			return graph.Apply(panicOp{}, a, a)
		}, "type inference panicked: boom"},
		{"unsupported output dtype", func(g *graph.Graph) *graph.Node {
			a := g.Input("a", graph.Float64, 2)
			return graph.Apply(badTypeOp{}, a, a)
		}, "not supported"},
		{"int input", func(g *graph.Graph) *graph.Node { return g.Input("i", tensor.Int, 2) }, "not supported"},
		{"negative dim", func(g *graph.Graph) *graph.Node { return g.Input("i", graph.Float64, -2) }, "negative dimension"},
		{"nil param", func(g *graph.Graph) *graph.Node { return g.Param("w", nil) }, "value is nil"},
		{"int scalar", func(g *graph.Graph) *graph.Node { return g.Scalar(1, tensor.Int) }, "not supported"},
	}
	for _, c := range cases {
		g := graph.New()
		var n *graph.Node
		require.NotPanics(t, func() { n = c.build(g) }, c.name)
		require.Error(t, n.Err(), c.name)
		require.ErrorContains(t, g.Err(), c.want, c.name)
	}
	// With every input nil there is no graph to record on, but the node
	// still carries an error, and building on it reports it.
	n := graph.Apply(addOp{}, nil, nil)
	require.ErrorContains(t, n.Err(), "no graph")
	g := graph.New()
	a := g.Input("a", graph.Float64, 2)
	require.ErrorContains(t, graph.Apply(addOp{}, a, n).Err(), "no graph")
	require.ErrorContains(t, g.Err(), "no graph")
}

func TestScopes(t *testing.T) {
	g := graph.New()
	top := g.Input("x", graph.Float64)
	end := g.Scope("encoder")
	endInner := g.Scope("layer0")
	inner := graph.Apply(addOp{}, top, top)
	endInner()
	mid := graph.Apply(addOp{}, inner, top)
	end()
	after := graph.Apply(addOp{}, mid, top)
	require.Nil(t, top.Scope())
	require.Equal(t, "encoder/layer0", inner.Scope().Path())
	require.Equal(t, "encoder", mid.Scope().Path())
	require.Nil(t, after.Scope())
}

func TestMultiOutput(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	outs := graph.ApplyMulti(splitOp{}, x)
	require.Len(t, outs, 2)
	require.NoError(t, g.Err())
	require.Equal(t, graph.TypeOf(graph.Float64, 2, 1), outs[0].Type())
	require.Equal(t, graph.TypeOf(graph.Float64, 2, 2), outs[1].Type())
	require.Equal(t, outs, outs[1].Outputs())
	op, i := outs[1].MultiOp()
	require.Equal(t, splitOp{}, op)
	require.Equal(t, 1, i)
}

// splitOp splits the last axis into its first column and the rest.
type splitOp struct{}

func (splitOp) Name() string { return "Split" }
func (splitOp) Types(in []graph.Type) ([]graph.Type, error) {
	s := in[0].Shape
	return []graph.Type{in[0].WithShape(s[0], 1), in[0].WithShape(s[0], s[1]-1)}, nil
}
func (splitOp) Forward(out []*tensor.Dense, in []*tensor.Dense) error { return nil }

func TestOpKey(t *testing.T) {
	type scaled struct{ c float64 }
	require.Equal(t, graph.OpKey(scaled{2}), graph.OpKey(scaled{2}))
	require.NotEqual(t, graph.OpKey(scaled{2}), graph.OpKey(scaled{3}))
	require.NotEqual(t, graph.OpKey(scaled{0}), graph.OpKey(scaled{math.Copysign(0, -1)}), "x·0 and x·-0 differ")
	require.Equal(t, graph.OpKey(scaled{math.Copysign(0, -1)}), graph.OpKey(scaled{math.Copysign(0, -1)}))
	type sliced struct{ s []int }
	require.True(t, graph.OpKey(sliced{[]int{1}}) != graph.OpKey(sliced{[]int{1}}), "an op that is not comparable and has no Key never merges")
}

package graph_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// doubleComposite builds x+x with addOp and claims the gradient scale·g.
type doubleComposite struct{ scale float64 }

func (doubleComposite) Name() string { return "Double" }
func (doubleComposite) Build(in []*graph.Node) *graph.Node {
	return graph.Apply(addOp{}, in[0], in[0])
}
func (d doubleComposite) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{g}
}

// sliceComposite is not comparable and has no Key.
type sliceComposite struct {
	doubleComposite
	tags []string
}

// panicComposite's Build panics; nilComposite's returns nil.
type panicComposite struct{ doubleComposite }

func (panicComposite) Build([]*graph.Node) *graph.Node { panic("boom") }

type nilComposite struct{ doubleComposite }

func (nilComposite) Build([]*graph.Node) *graph.Node { return nil }

// seenComposite records what its Backward sees.
type seenComposite struct {
	doubleComposite
	inputs *[]*graph.Node
	needs  *[]bool
}

func (s seenComposite) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	*s.inputs = ctx.Inputs()
	*s.needs = []bool{ctx.NeedsGrad(0), ctx.NeedsGrad(1), ctx.NeedsGrad(2)}
	return []*graph.Node{g, nil}
}

func TestCompositeBuildsSubgraphAndCopiesIt(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := graph.ApplyComposite(doubleComposite{}, x)
	require.NoError(t, g.Err())
	require.Len(t, y.Inputs(), 2, "the composite node reads x and the subgraph's output")
	sub := y.Inputs()[1]
	require.Equal(t, "TestAdd", sub.OpName())
	require.Equal(t, "Double", sub.Scope().Path(), "the subgraph is built in a scope named after the op")
	require.Nil(t, y.Scope())
	require.Equal(t, "Double", y.OpName())
	require.True(t, y.Type().Equal(x.Type()))
	// Forward copies the subgraph's output (here 1,2 → 3,4 standing for x+x).
	out := graph.NewDense(graph.Float64, 2)
	xs, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2}, 2)
	sums, _ := graph.FromFloat64s(graph.Float64, []float64{3, 4}, 2)
	require.NoError(t, y.Op().Forward(out, []*tensor.Dense{xs, sums}))
	require.Equal(t, []float64{3, 4}, out.Float64s())
}

// TestCompositeBackwardSeesItsOwnInputs: the user's Backward sees the
// inputs it was applied to, not the subgraph output, and the composite
// gives the subgraph output no gradient.
func TestCompositeBackwardSeesItsOwnInputs(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	w := g.Input("w", graph.Float64, 2)
	var seen []*graph.Node
	var needs []bool
	y := graph.ApplyComposite(seenComposite{inputs: &seen, needs: &needs}, x, w)
	require.NoError(t, g.Err())
	require.Len(t, y.Inputs(), 3)
	d, ok := y.Op().(graph.Differentiable)
	require.True(t, ok, "a composite is differentiable")
	ctx := graph.NewGradContext(y, []bool{true, false, true})
	grads := d.Backward(ctx, x)
	require.NoError(t, ctx.Err())
	require.Equal(t, []*graph.Node{x, w}, seen)
	require.Equal(t, []bool{true, false, false}, needs, "the subgraph output's need is hidden")
	require.Equal(t, []*graph.Node{x, nil, nil}, grads)
}

func TestCompositeBackwardArity(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	var seen []*graph.Node
	var needs []bool
	y := graph.ApplyComposite(seenComposite{inputs: &seen, needs: &needs}, x) // returns 2 gradients for 1 input
	ctx := graph.NewGradContext(y, []bool{true, true})
	grads := y.Op().(graph.Differentiable).Backward(ctx, x)
	require.ErrorContains(t, ctx.Err(), "Backward returned 2 gradients for 1 inputs")
	require.Len(t, grads, 2)
}

func TestCompositeMistakesNeverPanic(t *testing.T) {
	cases := []struct {
		name  string
		build func(g *graph.Graph) *graph.Node
		want  string
	}{
		{"nil op", func(g *graph.Graph) *graph.Node {
			return graph.ApplyComposite(nil, g.Input("x", graph.Float64, 2))
		}, "op is nil"},
		{"nil input", func(g *graph.Graph) *graph.Node {
			return graph.ApplyComposite(doubleComposite{}, g.Input("x", graph.Float64, 2), nil)
		}, "input 1 is nil"},
		{"Build panics", func(g *graph.Graph) *graph.Node {
			return graph.ApplyComposite(panicComposite{}, g.Input("x", graph.Float64, 2))
		}, "Double: Build panicked: boom"},
		{"Build returns nil", func(g *graph.Graph) *graph.Node {
			return graph.ApplyComposite(nilComposite{}, g.Input("x", graph.Float64, 2))
		}, "Build returned a nil node"},
		{"Build fails", func(g *graph.Graph) *graph.Node {
			x := g.Input("x", graph.Float64, 2)
			return graph.ApplyComposite(nilComposite{}, graph.Apply(addOp{}, x, g.Input("y", graph.Float64, 3)))
		}, "TestAdd: types differ"},
	}
	for _, c := range cases {
		g := graph.New()
		var n *graph.Node
		require.NotPanics(t, func() { n = c.build(g) }, c.name)
		require.Error(t, n.Err(), c.name)
		require.ErrorContains(t, g.Err(), c.want, c.name)
		require.Contains(t, g.Err().Error(), "composite_test.go:", c.name)
	}
	n := graph.ApplyComposite(doubleComposite{})
	require.ErrorContains(t, n.Err(), "no graph")
}

// TestWrapperOpKeys: a composite is identified by the user's op; one
// wrapping an op that is not comparable (and has no Key) never merges, and
// computing its key does not panic.
func TestWrapperOpKeys(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	key := func(op graph.CompositeOp) any {
		return graph.OpKey(graph.ApplyComposite(op, x).Op())
	}
	require.Equal(t, key(doubleComposite{2}), key(doubleComposite{2}))
	require.NotEqual(t, key(doubleComposite{2}), key(doubleComposite{3}))
	var a, b any
	require.NotPanics(t, func() {
		a, b = key(sliceComposite{tags: []string{"t"}}), key(sliceComposite{tags: []string{"t"}})
	})
	require.True(t, a != b)
	m := map[any]bool{a: true} // the keys must hash
	require.False(t, m[b])
	require.NoError(t, g.Err())
}

package graph_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestReplay(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 3)
	w := g.Param("w", graph.NewDense(graph.Float64, 4, 3))
	b := g.Param("b", graph.NewDense(graph.Float64, 4, 3))
	unrelated := graph.Apply(addOp{}, b, b)
	sum := graph.Apply(addOp{}, x, w)
	parts := graph.ApplyMulti(splitOp{}, sum)
	x2 := g.Input("x", graph.Float64, 4, 5)
	w2 := g.Param("w2", graph.NewDense(graph.Float64, 4, 5))

	m, err := graph.Replay(map[*graph.Node]*graph.Node{x: x2, w: w2}, parts[1], unrelated)
	require.NoError(t, err)
	require.Equal(t, x2, m[x])
	require.NotContains(t, m, unrelated, "what reads no replaced node is shared")
	require.NotContains(t, m, b)
	require.Equal(t, []int{4, 5}, m[sum].Shape())
	require.Equal(t, []int{4, 4}, m[parts[1]].Shape())
	require.Equal(t, []int{4, 1}, m[parts[0]].Shape(), "a multi-output op is replayed whole")
	require.Equal(t, m[parts[0]].Inputs(), m[parts[1]].Inputs())
	require.Equal(t, sum.Site(), m[sum].Site(), "a replayed node keeps the site of the node it replays")

	// A refused type: nothing is added and the graph stays healthy.
	before := len(g.Nodes())
	x3 := g.Input("x", graph.Float64, 2, 3)
	before++
	_, err = graph.Replay(map[*graph.Node]*graph.Node{x: x3}, sum)
	require.ErrorContains(t, err, "TestAdd")
	require.ErrorContains(t, err, "types differ")
	require.Len(t, g.Nodes(), before)
	require.NoError(t, g.Err())

	_, err = graph.Replay(map[*graph.Node]*graph.Node{x: graph.New().Input("y", graph.Float64)}, sum)
	require.ErrorContains(t, err, "not between healthy nodes")
}

// sliceOp holds a slice: its type is not comparable, and Replay must not
// compare it.
type sliceOp struct{ scale []float64 }

func (sliceOp) Name() string                                     { return "SliceOp" }
func (sliceOp) Type(in []graph.Type) (graph.Type, error)         { return in[0], nil }
func (sliceOp) Forward(_ *tensor.Dense, _ []*tensor.Dense) error { return nil }

func TestReplayOpsThatAreNotComparable(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 2)
	y := graph.Apply(sliceOp{scale: []float64{2}}, x)
	x2 := g.Input("x2", graph.Float64, 3, 2)
	m, err := graph.Replay(map[*graph.Node]*graph.Node{x: x2}, y)
	require.NoError(t, err)
	require.Equal(t, []int{3, 2}, m[y].Shape())
}

// A gradient built by compile.Grad is derived again for replayed nodes,
// in the scope it was first built in: replaying its ops would keep the
// shapes they were built for (Mean's gradient broadcasts to (8,2)).
func TestReplayDerivesGradientsAgain(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 8, 2)
	y := ops.Mean(ops.Square(x))
	grads, err := compile.Grad(y, x)
	require.NoError(t, err)
	out := ops.Mul(grads[0], x)
	x2 := g.Input("x", graph.Float64, 5, 2)
	m, err := graph.Replay(map[*graph.Node]*graph.Node{x: x2}, out)
	require.NoError(t, err)
	require.Equal(t, []int{5, 2}, m[grads[0]].Shape())
	require.Equal(t, []int{5, 2}, m[out].Shape())
	require.Equal(t, grads[0].Scope().Path(), m[grads[0]].Scope().Path(), "derived again in the scope Grad was called in")

	// A gradient of nodes Replay does not replace is shared.
	z := g.Input("z", graph.Float64, 3)
	gz, err := compile.Grad(ops.Sum(ops.Square(z)), z)
	require.NoError(t, err)
	m, err = graph.Replay(map[*graph.Node]*graph.Node{x: x2}, ops.Add(ops.Sum(gz[0]), ops.Sum(out)))
	require.NoError(t, err)
	require.NotContains(t, m, gz[0])
}

// A gradient that cannot be derived again is an error naming it.
func TestReplayNamesAGradientThatFails(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4)
	y := ops.Sum(x)
	gx := ops.Scale(ops.Add(x, x), 0) // stands for a gradient of y
	refuse := func(ys, seeds, wrt []*graph.Node) ([]*graph.Node, error) {
		return nil, errors.New("no gradient today")
	}
	g.RecordGradient([]*graph.Node{y}, nil, []*graph.Node{x}, []*graph.Node{gx}, refuse)
	_, err := graph.Replay(map[*graph.Node]*graph.Node{x: g.Input("x", graph.Float64, 2)}, ops.Sum(gx))
	require.ErrorContains(t, err, "nabla: Replay: deriving again the gradient of Sum")
	require.ErrorContains(t, err, `with respect to input "x" #0 float64(4)`)
	require.ErrorContains(t, err, "no gradient today")
}

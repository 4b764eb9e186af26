package vm_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/site"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// scanNet is a tanh RNN over batch-first sequences (n, 5, 3): its Scan is
// traced again when a Runner meets another batch size.
type scanNet struct{ w, u, v *graph.Node }

func newScanNet(g *graph.Graph) scanNet {
	rng := rand.New(rand.NewPCG(3, 4))
	param := func(name string, shape ...int) *graph.Node {
		vals := make([]float64, graph.ShapeSize(shape))
		for i := range vals {
			vals[i] = rng.Float64() - 0.5
		}
		t, _ := graph.FromFloat64s(graph.Float64, vals, shape...)
		return g.Param(name, t)
	}
	return scanNet{w: param("w", 4, 4), u: param("u", 3, 4), v: param("v", 3, 4)}
}

// loss is the mean of the final state; the initial state is computed from
// the first step (a carry may depend on the batch).
func (m scanNet) loss(x *graph.Node, capture *graph.Node) *graph.Node {
	seq := ops.Transpose(x, 1, 0, 2) // (5, n, 3)
	h0 := ops.Tanh(ops.MatMul(ops.Reshape(ops.Slice(x, 1, 0, 1), -1, 3), m.v))
	final, _ := ops.Scan(func(c, s []*graph.Node) ([]*graph.Node, []*graph.Node) {
		h := ops.Tanh(ops.Add(ops.MatMul(c[0], m.w), ops.MatMul(s[0], m.u)))
		if capture != nil {
			h = ops.Add(h, capture)
		}
		return []*graph.Node{h}, nil
	}, []*graph.Node{h0}, []*graph.Node{seq})
	return ops.Mean(final[0])
}

func (m scanNet) sgd(outputs []*graph.Node) (map[*graph.Node]*graph.Node, error) {
	return sgdUpdates(outputs[0], 0.5, m.w, m.u, m.v)
}

func sequences(rng *rand.Rand, n int) *tensor.Dense {
	v := make([]float64, n*5*3)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	t, _ := graph.FromFloat64s(graph.Float64, v, n, 5, 3)
	return t
}

// A Runner trains a model with a Scan at another batch size, as a graph
// built for that size does: the body is traced again for the new shapes.
func TestRunnerTracesScanAgain(t *testing.T) {
	g := graph.New()
	net := newScanNet(g)
	x := g.Input("x", graph.Float64, 4, 5, 3)
	r, err := vm.NewRunner([]*graph.Node{net.loss(x, nil)}, nil, net.sgd)
	require.NoError(t, err)

	hg := graph.New()
	hnet := newScanNet(hg)
	hx := hg.Input("x", graph.Float64, 3, 5, 3)
	hloss := hnet.loss(hx, nil)
	updates, err := hnet.sgd([]*graph.Node{hloss})
	require.NoError(t, err)
	p, err := compile.Compile([]*graph.Node{hloss}, compile.WithUpdates(updates))
	require.NoError(t, err)
	ref, err := vm.New(p)
	require.NoError(t, err)

	rng := rand.New(rand.NewPCG(5, 6))
	for range 3 {
		batch := sequences(rng, 3)
		require.NoError(t, r.Run(vm.Feeds{x: batch}))
		require.NoError(t, ref.Run(vm.Feeds{hx: batch}))
		got, err := r.Value(net.w)
		require.NoError(t, err)
		want, err := ref.Value(hnet.w)
		require.NoError(t, err)
		require.Equal(t, graph.Float64s(want), graph.Float64s(got))
	}
}

// A body reading a value computed from the batch cannot be traced again
// (it would read the old batch's value): the Runner says so.
func TestRunnerRefusesScanReadingTheBatch(t *testing.T) {
	g := graph.New()
	net := newScanNet(g)
	x := g.Input("x", graph.Float64, 4, 5, 3)
	r, err := vm.NewRunner([]*graph.Node{net.loss(x, ops.Mean(x))}, nil, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(5, 6))
	require.NoError(t, r.Run(vm.Feeds{x: sequences(rng, 4)}))
	err = r.Run(vm.Feeds{x: sequences(rng, 2)})
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "computed from the replayed inputs: give it to Scan as a carry or a sequence"), err.Error())
}

// A While's body reading a value computed from the batch is refused as a
// Scan's is, in the While's name: the user wrote a While (whose loop is a
// Scan, which the error named, asking for a sequence While has not).
func TestRunnerRefusesWhileReadingTheBatch(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 3)
	mean := ops.Mean(x)
	final, _ := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(ops.Sum(c[0]), g.Scalar(100, graph.Float64)) },
		func(c []*graph.Node) []*graph.Node { return []*graph.Node{ops.Add(c[0], mean)} }, []*graph.Node{x}, ops.MaxSteps(5))
	line := site.At(-2) // the While's first line
	r, err := vm.NewRunner([]*graph.Node{final[0]}, nil, nil)
	require.NoError(t, err)
	require.NoError(t, r.Run(vm.Feeds{x: graph.NewDenseOf(graph.TypeOf(graph.Float64, 4, 3))}))
	err = r.Run(vm.Feeds{x: graph.NewDenseOf(graph.TypeOf(graph.Float64, 2, 3))})
	want := fmt.Sprintf(`nabla: Replay: While (%v) at %s: the body reads input "Mean#1" #4 float64(), which is computed from the replayed inputs: `+
		"give it to While as a carry (batch size 2; the graph was built for 4)", final[0], line)
	require.EqualError(t, err, want)
}

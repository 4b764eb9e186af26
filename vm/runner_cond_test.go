package vm_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// condLoss is the scanNet's loss, its final state through a Cond on the
// sign of the batch's mean: a tanh layer (then) or a sine of a
// matrix product (else), the branches capturing parameters. extra, if
// not nil, is captured by the then branch.
func (m scanNet) condLoss(x, extra *graph.Node) *graph.Node {
	h := m.loss(x, nil)
	feat := ops.Reshape(ops.Slice(x, 1, 0, 1), -1, 3) // (n, 3)
	pred := ops.Greater(ops.Mean(feat), ops.Neg(ops.Mean(feat)))
	y := ops.Cond(pred, func(o []*graph.Node) []*graph.Node {
		r := ops.Tanh(ops.MatMul(o[0], m.u))
		if extra != nil {
			r = ops.Add(r, extra)
		}
		return []*graph.Node{r}
	}, func(o []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Sin(ops.MatMul(o[0], m.v))}
	}, []*graph.Node{feat})[0]
	return ops.Add(h, ops.Mean(ops.Square(y)))
}

// A Runner trains a model with a Cond at another batch size, as a graph
// built for that size does: the branches are traced again for the new
// shapes, and either branch runs as the batch selects.
func TestRunnerTracesCondAgain(t *testing.T) {
	g := graph.New()
	net := newScanNet(g)
	x := g.Input("x", graph.Float64, 4, 5, 3)
	sgd := func(outputs []*graph.Node) (map[*graph.Node]*graph.Node, error) {
		return sgdUpdates(outputs[0], 0.5, net.w, net.u, net.v)
	}
	r, err := vm.NewRunner([]*graph.Node{net.condLoss(x, nil)}, nil, sgd)
	require.NoError(t, err)

	hg := graph.New()
	hnet := newScanNet(hg)
	hx := hg.Input("x", graph.Float64, 3, 5, 3)
	hloss := hnet.condLoss(hx, nil)
	updates, err := sgdUpdates(hloss, 0.5, hnet.w, hnet.u, hnet.v)
	require.NoError(t, err)
	p, err := compile.Compile([]*graph.Node{hloss}, compile.WithUpdates(updates))
	require.NoError(t, err)
	ref, err := vm.New(p)
	require.NoError(t, err)

	rng := rand.New(rand.NewPCG(7, 8))
	signs := map[bool]bool{}
	for range 6 {
		batch := sequences(rng, 3)
		mean := 0.0
		for i := range 3 {
			mean += batch.Float64s()[i*15] + batch.Float64s()[i*15+1] + batch.Float64s()[i*15+2]
		}
		signs[mean > 0] = true
		require.NoError(t, r.Run(vm.Feeds{x: batch}))
		require.NoError(t, ref.Run(vm.Feeds{hx: batch}))
		for k, n := range []*graph.Node{net.u, net.v} {
			got, err := r.Value(n)
			require.NoError(t, err)
			want, err := ref.Value([]*graph.Node{hnet.u, hnet.v}[k])
			require.NoError(t, err)
			require.Equal(t, graph.Float64s(want), graph.Float64s(got))
		}
	}
	require.Len(t, signs, 2, "the batches took one branch only")
}

// A branch reading a value computed from the batch cannot be traced
// again: the Runner says so.
func TestRunnerRefusesCondReadingTheBatch(t *testing.T) {
	g := graph.New()
	net := newScanNet(g)
	x := g.Input("x", graph.Float64, 4, 5, 3)
	r, err := vm.NewRunner([]*graph.Node{net.condLoss(x, ops.Mean(x))}, nil, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(5, 6))
	require.NoError(t, r.Run(vm.Feeds{x: sequences(rng, 4)}))
	err = r.Run(vm.Feeds{x: sequences(rng, 2)})
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "computed from the replayed inputs: give it to Cond as an operand"), err.Error())
}

// A Runner traces a While again at another batch size too: a loop on the
// batch's features while their mean stays under a bound, the number of
// steps set by the batch.
func TestRunnerTracesWhileAgain(t *testing.T) {
	build := func(g *graph.Graph, n int) (scanNet, *graph.Node, *graph.Node, *graph.Node) {
		net := newScanNet(g)
		x := g.Input("x", graph.Float64, n, 5, 3)
		feat := ops.Reshape(ops.Slice(x, 1, 0, 1), -1, 3) // (n, 3)
		h := ops.Tanh(ops.MatMul(feat, net.v))            // (n, 4)
		// Constants the loop reads are made once, outside cond and body,
		// which are traced again at each batch size.
		bound, shift := g.Scalar(0.6, graph.Float64), g.Scalar(0.15, graph.Float64)
		final, steps := ops.While(func(c []*graph.Node) *graph.Node {
			return ops.Less(ops.Mean(c[0]), bound)
		}, func(c []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Add(ops.Add(c[0], ops.Scale(ops.Tanh(ops.MatMul(c[0], net.w)), 0.1)), shift)}
		}, []*graph.Node{h}, ops.MaxSteps(8))
		return net, x, ops.Mean(ops.Square(final[0])), steps
	}
	g := graph.New()
	net, x, loss, steps := build(g, 4)
	sgd := func(outputs []*graph.Node) (map[*graph.Node]*graph.Node, error) {
		return sgdUpdates(outputs[0], 0.5, net.w, net.v)
	}
	r, err := vm.NewRunner([]*graph.Node{loss, steps}, nil, sgd)
	require.NoError(t, err)

	hg := graph.New()
	hnet, hx, hloss, hsteps := build(hg, 3)
	updates, err := sgdUpdates(hloss, 0.5, hnet.w, hnet.v)
	require.NoError(t, err)
	p, err := compile.Compile([]*graph.Node{hloss, hsteps}, compile.WithUpdates(updates))
	require.NoError(t, err)
	ref, err := vm.New(p)
	require.NoError(t, err)

	rng := rand.New(rand.NewPCG(9, 10))
	counts := map[int64]bool{}
	for range 4 {
		batch := sequences(rng, 3)
		require.NoError(t, r.Run(vm.Feeds{x: batch}))
		require.NoError(t, ref.Run(vm.Feeds{hx: batch}))
		got, err := r.Value(steps)
		require.NoError(t, err)
		want, err := ref.Value(hsteps)
		require.NoError(t, err)
		require.Equal(t, want.Int64s(), got.Int64s())
		counts[got.Int64s()[0]] = true
		for k, n := range []*graph.Node{net.w, net.v} {
			got, err := r.Value(n)
			require.NoError(t, err)
			want, err := ref.Value([]*graph.Node{hnet.w, hnet.v}[k])
			require.NoError(t, err)
			require.Equal(t, graph.Float64s(want), graph.Float64s(got))
		}
	}
	require.Greater(t, len(counts), 1, "every batch took the same number of steps: %v", counts)
}

// A While whose cond reads no carry (a flag fed beside the batch) is
// traced again at another batch size as well.
func TestRunnerTracesWhileOnAFlag(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 3)
	flag := g.Input("flag", graph.Float64)
	final, steps := ops.While(func([]*graph.Node) *graph.Node { return flag }, func(c []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Scale(c[0], 2)}
	}, []*graph.Node{x}, ops.MaxSteps(3))
	total := ops.Sum(final[0])
	r, err := vm.NewRunner([]*graph.Node{total, steps}, nil, nil)
	require.NoError(t, err)
	xv, err := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	require.NoError(t, err)
	for _, f := range []float64{1, 0} {
		fv, err := graph.FromFloat64s(graph.Float64, []float64{f})
		require.NoError(t, err)
		require.NoError(t, r.Run(vm.Feeds{x: xv, flag: fv}))
		n, err := r.Value(steps)
		require.NoError(t, err)
		require.Equal(t, int64(3*f), n.Int64s()[0])
		sum, err := r.Scalar(total)
		require.NoError(t, err)
		require.Equal(t, 21*(1+7*f), sum) // doubled three times, or not at all
	}
}

package vm_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TestRunnerForgetsFeeds: a Runner's run at a replayed size holds none
// of the last run's feeds: a node fed once (an input the outputs do not
// read, or a nil node, which is an error) is not fed again, as a nil
// tensor, to the next run, which gave every later run at that size the
// error of a feed it did not make.
func TestRunnerForgetsFeeds(t *testing.T) {
	g := graph.New()
	x, y := g.Input("x", graph.Float64, 4, 3), g.Input("y", graph.Float64, 4, 1)
	out := ops.Sum(ops.Square(x), 1)
	r, err := vm.NewRunner([]*graph.Node{out}, nil, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{4, 3} { // the built size, and a replayed one
		require.NoError(t, r.Run(vm.Feeds{x: rows(rng, n, 3), y: rows(rng, n, 1)}), "batch %d, y fed", n)
		require.ErrorContains(t, r.Run(vm.Feeds{x: rows(rng, n, 3), nil: rows(rng, n, 1)}), "nabla: Run: feed for a nil node")
		xv := rows(rng, n, 3)
		require.NoError(t, r.Run(vm.Feeds{x: xv}), "batch %d, x alone after feeding y and nil", n)
		got, err := r.Value(out)
		require.NoError(t, err)
		xs := graph.Float64s(xv)
		for i := range n { // the sum of squares of each row
			want := xs[3*i]*xs[3*i] + xs[3*i+1]*xs[3*i+1] + xs[3*i+2]*xs[3*i+2]
			require.InDelta(t, want, graph.Float64s(got)[i], 1e-12, "batch %d row %d", n, i)
		}
	}
}

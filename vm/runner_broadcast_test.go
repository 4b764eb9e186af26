package vm_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A parameter shaped like the built batch, (2, 3), added to x (2, 3):
// at one row, x (1, 3) would broadcast against it and give two rows.
// The Runner refuses the size, naming the op, the shapes, the sizes and
// the line that built the Add.
func TestRunnerRefusesBatchBroadcastAgainstBuiltSize(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	pv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	p := g.Param("p", pv)
	y := ops.Add(x, p)
	r, err := vm.NewRunner([]*graph.Node{y}, nil, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	require.NoError(t, r.Run(vm.Feeds{x: rows(rng, 2, 3)}))
	err = r.Run(vm.Feeds{x: rows(rng, 1, 3)})
	require.Error(t, err, "x (1,3) + p (2,3) broadcasts the batch to 2 rows")
	for _, want := range []string{"Add", "(1,3)", "(2,3)", "runner_broadcast_test.go:23", "batch size 1; the graph was built for 2"} {
		require.ErrorContains(t, err, want)
	}
	require.NoError(t, g.Err(), "a refused size must not poison the graph")
	require.NoError(t, r.Run(vm.Feeds{x: rows(rng, 2, 3)}), "the built size still runs")
}

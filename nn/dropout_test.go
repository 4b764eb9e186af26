package nn

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// A training-mode Dropout runs at any batch size: its mask takes the
// input's shape, so a Runner replays it at another size, and a mask for n
// rows is the first n rows of the mask of more rows at the same step.
func TestDropoutAnyBatchSize(t *testing.T) {
	g := graph.New()
	d := NewDropout(g, "drop", 0.5)
	x := g.Input("x", graph.Float64, 4, 3)
	out := d.Forward(x)
	r, err := vm.NewRunner([]*graph.Node{out}, nil, nil) // no step update: one mask
	require.NoError(t, err)
	ones := func(rows int) vm.Feeds {
		v := graph.NewDense(graph.Float64, rows, 3)
		for i := range v.Float64s() {
			v.Float64s()[i] = 1
		}
		return vm.Feeds{x: v}
	}
	require.NoError(t, r.Run(ones(4)))
	v4, err := r.Value(out)
	require.NoError(t, err)
	full := append([]float64(nil), v4.Float64s()...)
	require.Contains(t, full, 0.0)
	require.Contains(t, full, 2.0)
	for _, m := range full {
		require.True(t, m == 0 || m == 2, "mask value %v", m)
	}
	require.NoError(t, r.Run(ones(2)))
	v2, err := r.Value(out)
	require.NoError(t, err)
	require.Equal(t, []int{2, 3}, []int(v2.Shape()))
	require.Equal(t, full[:6], v2.Float64s())
	require.Equal(t, 2, r.Sizes())
}

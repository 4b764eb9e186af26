package nn

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
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
	r, err := vm.NewRunner([]*graph.Node{out}, nil, nil, vm.WithFixedDraws()) // no step update: one mask
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

// DropoutMask is 0 where stream 0 of its seed draws a uniform below p at
// the step, 1/(1-p) elsewhere; a probability outside [0, 1] is an error.
func TestDropoutMaskDrawsFromPhilox(t *testing.T) {
	g := graph.New()
	step := g.Scalar(3, graph.Float64)
	mask := DropoutMask(step, 0.4, 11, graph.Float32, 5, 40)
	u := ops.RandomUniform(step, ops.Stream{Seed: 11}, graph.Float32, 5, 40)
	m := machine(t, []*graph.Node{mask, u}, nil)
	require.NoError(t, m.Run(nil))
	got, uniforms := value(t, m, mask), value(t, m, u)
	for i, v := range uniforms {
		want := float64(float32(1 / 0.6))
		if v < float64(float32(0.4)) {
			want = 0
		}
		require.Equal(t, want, got[i], "element %d (uniform %v)", i, v)
	}
	require.Contains(t, got, 0.0)

	g = graph.New()
	DropoutMask(g.Scalar(0, graph.Float64), 1.5, 1, graph.Float64, 2)
	require.ErrorContains(t, g.Err(), "nabla: nn.DropoutMask: drop probability 1.5 is not in [0, 1] at dropout_test.go:")
}

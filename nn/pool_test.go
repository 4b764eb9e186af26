package nn

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The layer modules print as PyTorch's and compute what their ops do.
func TestLayerModules(t *testing.T) {
	model := NewSequential("cnn",
		MaxPool2d{ops.PoolOptions{Kernel: []int{2}}},
		AvgPool2d{ops.PoolOptions{Kernel: []int{3, 2}, Stride: []int{1}, Padding: []int{1}}},
		GELU{}, SiLU{}, GELU{Tanh: true},
		Flatten{StartDim: 1},
	)
	require.Equal(t, `Sequential(
  (0): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
  (1): AvgPool2d(kernel_size=(3, 2), stride=1, padding=1)
  (2): GELU()
  (3): SiLU()
  (4): GELU(approximate='tanh')
  (5): Flatten()
)`, model.String())
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3, 6, 6)
	y := model.Forward(x)
	want := ops.MaxPool2D(x, ops.PoolOptions{Kernel: []int{2}})
	want = ops.AvgPool2D(want, ops.PoolOptions{Kernel: []int{3, 2}, Stride: []int{1}, Padding: []int{1}})
	want = ops.GELU(ops.SiLU(ops.GELU(want, false)), true)
	want = ops.Reshape(want, 2, -1)
	require.NoError(t, g.Err())
	out, err := vm.Eval(vm.Feeds{x: sines(t, 0.3, 2, 2, 3, 6, 6)}, y, want)
	require.NoError(t, err)
	require.Equal(t, []int{2, 3 * 3 * 4}, []int(out[0].Shape()))
	assertClose(t, "modules", graph.Float64s(out[0]), graph.Float64s(out[1]), 0)
}

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// channelShapes are the (N, C, ...) inputs of the channel ops' tests,
// with size-1 samples, channels and planes, and channels of enough
// values that their sums are split over chunks (see ops' splitSum), of
// counts no chunk count divides.
var channelShapes = [][]int{{6, 3}, {1, 4}, {5, 1}, {2, 3, 4}, {3, 2, 4, 5}, {2, 3, 1, 5}, {1, 1, 1},
	{300, 3}, {9, 2, 130}, {70, 2, 4, 5}}

// offset draws from a normal distribution of mean 3, so that a variance
// that does not subtract the mean is wrong.
func offset(r *rand.Rand) float64 { return 3 + r.NormFloat64() }

// The channel reductions (ChannelSum, ChannelMean, ChannelVar) and their
// gradients run on the device and give the CPU's values.
func TestChannelReductionKernels(t *testing.T) {
	for _, dtype := range floatTypes {
		for _, r := range []struct {
			name string
			f    func(*graph.Node) *graph.Node
		}{{"ChannelSum", ops.ChannelSum}, {"ChannelMean", ops.ChannelMean}, {"ChannelCov", ops.ChannelVar}} {
			t.Run(fmt.Sprintf("%v/%s", dtype, r.name), func(t *testing.T) {
				c := newKernelCase(17)
				for _, shape := range channelShapes {
					x := c.input(dtype, shape, offset)
					c.withGrad(t, r.f(x), x)
				}
				c.check(t, r.name)
			})
		}
	}
}

// ChannelAffine, with a scale, a shift or both, and its gradients
// (ChannelDot, ChannelSum, ChannelAffine) run on the device and give the
// CPU's values.
func TestChannelAffineKernel(t *testing.T) {
	for _, dtype := range floatTypes {
		t.Run(fmt.Sprint(dtype), func(t *testing.T) {
			c := newKernelCase(19)
			for _, shape := range channelShapes {
				x := c.input(dtype, shape, normal)
				scale, shift := c.input(dtype, shape[1:2], normal), c.input(dtype, shape[1:2], normal)
				c.withGrad(t, ops.ChannelAffine(x, scale, shift), x, scale, shift)
				c.withGrad(t, ops.ChannelAffine(x, scale, nil), x, scale)
				c.withGrad(t, ops.ChannelAffine(x, nil, shift), x, shift)
			}
			c.check(t, "ChannelAffine", "ChannelDot", "ChannelSum")
		})
	}
}

// BatchNorm and its gradients (ChannelDot, a two-term ChannelAffine) run
// on the device and give the CPU's values.
func TestBatchNormKernel(t *testing.T) {
	for _, dtype := range floatTypes {
		t.Run(fmt.Sprint(dtype), func(t *testing.T) {
			c := newKernelCase(23)
			for _, shape := range channelShapes {
				if shape[0]*graph.ShapeSize(shape[2:]) == 1 {
					continue // one value per channel: a variance of 0, a gradient dominated by eps
				}
				x := c.input(dtype, shape, offset)
				w, b := c.input(dtype, shape[1:2], normal), c.input(dtype, shape[1:2], normal)
				c.withGrad(t, ops.BatchNorm(x, w, b, 1e-5), x, w, b)
			}
			c.check(t, "BatchNorm", "ChannelMean", "ChannelCov", "ChannelDot", "ChannelAffine", "ChannelSum")
		})
	}
}

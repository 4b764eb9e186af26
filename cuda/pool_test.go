package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// poolCases are the poolings the tests run: halving windows (with an odd
// last row and column), overlapping and padded windows, stride and
// kernel differing per axis, dilation, ceil mode.
var poolCases = []struct {
	hw  [2]int
	opt ops.PoolOptions
	max bool // max pooling only (dilation)
}{
	{[2]int{4, 6}, ops.PoolOptions{Kernel: []int{2}}, false},
	{[2]int{5, 7}, ops.PoolOptions{Kernel: []int{2}}, false},
	{[2]int{7, 7}, ops.PoolOptions{Kernel: []int{3}, Stride: []int{2}, Padding: []int{1}}, false},
	{[2]int{5, 6}, ops.PoolOptions{Kernel: []int{3}, Stride: []int{1}, Padding: []int{1}}, false},
	{[2]int{6, 5}, ops.PoolOptions{Kernel: []int{2, 3}, Stride: []int{1, 2}, Padding: []int{1, 1}}, false},
	{[2]int{8, 8}, ops.PoolOptions{Kernel: []int{3}, CeilMode: true}, false},
	{[2]int{7, 6}, ops.PoolOptions{Kernel: []int{3, 2}, Stride: []int{2, 3}, Padding: []int{1, 0}, CeilMode: true}, false},
	{[2]int{3, 4}, ops.PoolOptions{Kernel: []int{1}}, false},
	{[2]int{7, 8}, ops.PoolOptions{Kernel: []int{2, 3}, Stride: []int{1, 2}, Padding: []int{1}, Dilation: []int{2, 1}}, true},
	{[2]int{9, 9}, ops.PoolOptions{Kernel: []int{3}, Stride: []int{2}, Dilation: []int{2}, CeilMode: true}, true},
}

// The poolings (MaxPool2D, AvgPool2D), their gradients (MaxPool2DGrad,
// AvgPool2DSpread) and those gradients' gradients (MaxPool2DGather,
// AvgPool2D) run on the device and give the CPU's values.
func TestPoolKernels(t *testing.T) {
	for _, dtype := range floatTypes {
		for _, k := range []struct {
			name, grad, grad2 string
			f                 func(*graph.Node, ops.PoolOptions) *graph.Node
			max               bool
		}{
			{"MaxPool2D", "MaxPool2DGrad", "MaxPool2DGather", ops.MaxPool2D, true},
			{"AvgPool2D", "AvgPool2DSpread", "AvgPool2D", ops.AvgPool2D, false},
		} {
			t.Run(fmt.Sprintf("%v/%s", dtype, k.name), func(t *testing.T) {
				c := newKernelCase(29)
				for _, p := range poolCases {
					if p.max && !k.max {
						continue
					}
					// Ties (small integers) on the larger images.
					for j, shape := range [][]int{{2, 3, p.hw[0], p.hw[1]}, {1, 1, p.hw[0], p.hw[1]}} {
						x := c.input(dtype, shape, []func(*rand.Rand) float64{smallInts, normal}[j])
						y := k.f(x, p.opt)
						w := c.input(dtype, y.Shape(), normal)
						gx, err := compile.Grad(ops.Sum(ops.Mul(y, w)), x)
						if err != nil {
							t.Fatal(err)
						}
						c.outputs = append(c.outputs, y)
						c.withGrad(t, gx[0], w)
					}
				}
				c.check(t, k.name, k.grad, k.grad2)
			})
		}
	}
}

// Max pooling of windows holding NaN, -Inf or no tap inside the image
// (dilated past it) gives the CPU's maxima and argmaxes.
func TestMaxPoolKernelSpecialValues(t *testing.T) {
	inf := math.Inf(1)
	special := []float64{math.NaN(), -inf, inf, -inf, -inf, 1, -1, -inf}
	for _, dtype := range floatTypes {
		t.Run(fmt.Sprint(dtype), func(t *testing.T) {
			c := newKernelCase(31)
			for _, p := range []struct {
				hw  [2]int
				opt ops.PoolOptions
			}{
				{[2]int{4, 6}, ops.PoolOptions{Kernel: []int{2}}},
				{[2]int{5, 5}, ops.PoolOptions{Kernel: []int{3}, Stride: []int{1}, Padding: []int{1}}},
				{[2]int{2, 2}, ops.PoolOptions{Kernel: []int{2}, Padding: []int{1}, Dilation: []int{3}}},
			} {
				x := c.input(dtype, []int{2, 2, p.hw[0], p.hw[1]}, func(r *rand.Rand) float64 {
					if r.IntN(3) == 0 {
						return special[r.IntN(len(special))]
					}
					return smallInts(r)
				})
				y := ops.MaxPool2D(x, p.opt)
				w := c.input(dtype, y.Shape(), normal)
				gx, err := compile.Grad(ops.Sum(ops.Mul(y, w)), x)
				if err != nil {
					t.Fatal(err)
				}
				v := c.input(dtype, x.Shape(), normal)
				gw, err := compile.Grad(ops.Sum(ops.Mul(gx[0], v)), w)
				if err != nil {
					t.Fatal(err)
				}
				c.outputs = append(c.outputs, y, gx[0], gw[0])
			}
			c.check(t, "MaxPool2D", "MaxPool2DGrad", "MaxPool2DGather")
		})
	}
}

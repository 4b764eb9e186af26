package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// reduceShapes are the inputs and axes the reductions' tests reduce:
// none (all axes), one, several, adjacent and not, size-1 axes.
var reduceShapes = []struct {
	shape []int
	axes  []int
}{
	{[]int{7}, nil},
	{[]int{7}, []int{0}},
	{[]int{1}, nil},
	{[]int{5, 6}, []int{1}},
	{[]int{5, 6}, []int{0}},
	{[]int{5, 6}, nil},
	{[]int{1, 6}, []int{0}},
	{[]int{5, 1}, []int{1}},
	{[]int{3, 4, 5}, []int{0, 2}},
	{[]int{3, 4, 5}, []int{1}},
	{[]int{3, 4, 5}, []int{1, 2}},
	{[]int{3, 1, 5}, []int{0, 1}},
	{[]int{2, 3, 4, 5}, []int{0, 2}},
	{[]int{2, 3, 4, 5}, []int{1, 3}},
	{[]int{2, 3, 1, 5}, []int{-1, -2}},
	{[]int{4, 70}, []int{1}},
	// Sums long enough to be split over chunks (see ops' splitSum), of
	// lengths no chunk count divides, over inner, outer and
	// non-adjacent axes.
	{[]int{3, 1001}, []int{1}},
	{[]int{700, 3}, []int{0}},
	{[]int{40, 3, 50}, []int{0, 2}},
	{[]int{5000}, nil},
}

// The reductions (Sum, Mean, Max, LogSumExp, with and without kept axes)
// and their gradients run on the device and give the CPU's values.
func TestReduceKernels(t *testing.T) {
	type reducer struct {
		name string
		f    func(*graph.Node, ...int) *graph.Node
		gen  func(*rand.Rand) float64
	}
	reducers := []reducer{
		{"Sum", ops.Sum, normal}, {"Sum", ops.SumKeepDims, normal},
		{"Mean", ops.Mean, normal}, {"Mean", ops.MeanKeepDims, normal},
		{"Max", ops.Max, smallInts}, {"Max", ops.MaxKeepDims, normal},
		{"LogSumExp", ops.LogSumExp, normal}, {"LogSumExp", ops.LogSumExpKeepDims, smallInts},
	}
	for _, dtype := range floatTypes {
		for k, r := range reducers {
			t.Run(fmt.Sprintf("%v/%s%d", dtype, r.name, k%2), func(t *testing.T) {
				c := newKernelCase(uint64(k))
				for _, s := range reduceShapes {
					x := c.input(dtype, s.shape, r.gen)
					c.withGrad(t, r.f(x, s.axes...), x)
				}
				c.check(t, r.name)
			})
		}
	}
}

// A maximum keeps NaN, infinities and signed zeros as the CPU does, and a
// log-sum-exp of infinities and of large values is the CPU's.
func TestReduceKernelsSpecialValues(t *testing.T) {
	inf := math.Inf(1)
	rows := [][]float64{
		{1, math.NaN(), 3, 2},
		{math.NaN(), 1, 2, 3},
		{-inf, -inf, -inf, -inf},
		{-inf, 1, -inf, 2},
		{inf, 1, 2, 3},
		{0, math.Copysign(0, -1), -1, -2},
		{math.Copysign(0, -1), 0, -1, -2},
		{1e300, -1e300, 700, 1e300},
		{-1e30, -1e30, -1e30, -1e29},
	}
	for _, dtype := range floatTypes {
		for _, axis := range []int{0, 1} {
			t.Run(fmt.Sprintf("%v/%d", dtype, axis), func(t *testing.T) {
				c := newKernelCase(1)
				x := c.rows(dtype, rows)
				c.outputs = []*graph.Node{ops.Max(x, axis), ops.LogSumExp(x, axis),
					ops.PowConst(ops.Max(x, axis), -1)} // 1/max tells -0 from +0
				c.check(t, "Max", "LogSumExp")
			})
		}
	}
}

// SumTo and its gradient (BroadcastTo) run on the device and give the
// CPU's values, summing over leading axes, over size-1 axes of the
// target, or both.
func TestSumToKernel(t *testing.T) {
	cases := []struct{ from, to []int }{
		{[]int{5, 6}, []int{6}},
		{[]int{5, 6}, []int{5, 1}},
		{[]int{5, 6}, []int{1, 6}},
		{[]int{5, 6}, []int{1, 1}},
		{[]int{5, 6}, []int{}},
		{[]int{2, 3, 4}, []int{3, 1}},
		{[]int{2, 3, 4}, []int{1, 3, 1}},
		{[]int{2, 3, 4}, []int{4}},
		{[]int{2, 1, 4, 3}, []int{1, 1, 3}},
		// Split sums: chunks of at most 1024 terms (300,000 needs more
		// chunks than the split's usual most), 64 or fewer (1,500).
		{[]int{300000}, []int{}},
		{[]int{500, 3, 3}, []int{3, 1}},
	}
	for _, dtype := range floatTypes {
		t.Run(fmt.Sprint(dtype), func(t *testing.T) {
			c := newKernelCase(3)
			for _, s := range cases {
				gen := normal
				if graph.ShapeSize(s.from) > 100000 {
					// The CPU's float32 sum of so many normal values is
					// off by more than float32's tolerance; one of small
					// integers is exact, in any order.
					gen = smallInts
				}
				x := c.input(dtype, s.from, gen)
				c.withGrad(t, ops.SumTo(x, s.to...), x)
			}
			c.check(t, "SumTo")
		})
	}
}

// A sum over zero elements is 0 and a log-sum-exp -Inf, on the device as
// on the CPU.
func TestReduceKernelsOverNothing(t *testing.T) {
	for _, dtype := range floatTypes {
		t.Run(fmt.Sprint(dtype), func(t *testing.T) {
			c := newKernelCase(1)
			x := c.input(dtype, []int{3, 0, 2}, normal)
			c.outputs = []*graph.Node{ops.Sum(x, 1), ops.SumKeepDims(x, 0, 1), ops.LogSumExp(x, 1)}
			c.check(t, "Sum", "LogSumExp")
		})
	}
}

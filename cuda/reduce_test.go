package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// floatTypes are the dtypes the kernels' tests run in.
var floatTypes = []tensor.Dtype{graph.Float64, graph.Float32}

// kernelCase builds a graph for a kernel test: inputs fed with values and
// the outputs to compare.
type kernelCase struct {
	g       *graph.Graph
	rng     *rand.Rand
	feeds   vm.Feeds
	outputs []*graph.Node
}

// newKernelCase starts an empty case, its random values seeded by seed.
func newKernelCase(seed uint64) *kernelCase {
	return &kernelCase{g: graph.New(), rng: rand.New(rand.NewPCG(seed, 7)), feeds: vm.Feeds{}}
}

// input adds an input of the given dtype and shape fed with gen's values.
func (c *kernelCase) input(dtype tensor.Dtype, shape []int, gen func(*rand.Rand) float64) *graph.Node {
	vals := make([]float64, graph.ShapeSize(shape))
	for i := range vals {
		vals[i] = gen(c.rng)
	}
	x := c.g.Input(fmt.Sprintf("x%d", len(c.feeds)), dtype, shape...)
	d, err := graph.FromFloat64s(dtype, vals, shape...)
	if err != nil {
		panic(err)
	}
	c.feeds[x] = d
	return x
}

// intInput adds an int32 or int64 input of the given shape fed with gen's
// values.
func (c *kernelCase) intInput(dtype tensor.Dtype, shape []int, gen func(*rand.Rand) int64) *graph.Node {
	n := graph.ShapeSize(shape)
	var d *tensor.Dense
	if dtype == graph.Int32 {
		vals := make([]int32, n)
		for i := range vals {
			vals[i] = int32(gen(c.rng))
		}
		d = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(vals))
	} else {
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = gen(c.rng)
		}
		d = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(vals))
	}
	x := c.g.Input(fmt.Sprintf("x%d", len(c.feeds)), dtype, shape...)
	c.feeds[x] = d
	return x
}

// withGrad adds y to the outputs and the gradients, with respect to wrt,
// of the sum of y weighted by random values (an input, so that nothing of
// the gradient is computed at compile time and each of its elements
// differs).
func (c *kernelCase) withGrad(t *testing.T, y *graph.Node, wrt ...*graph.Node) {
	t.Helper()
	w := c.input(y.DType(), y.Shape(), func(r *rand.Rand) float64 { return r.Float64()*2 - 0.5 })
	grads, err := compile.Grad(ops.Sum(ops.Mul(y, w)), wrt...)
	if err != nil {
		t.Fatal(err)
	}
	c.outputs = append(c.outputs, y)
	c.outputs = append(c.outputs, grads...)
}

// check runs the case's outputs on the CPU and the devices (checkOnDevices),
// after checking that the compiled program has an instruction of each op
// named, so that a test cannot pass by the op having been rewritten away.
func (c *kernelCase) check(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range c.outputs {
		if err := n.Err(); err != nil {
			t.Fatal(err)
		}
	}
	prog, err := compile.Compile(c.outputs)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !slices.ContainsFunc(prog.Instructions(), func(in compile.Instruction) bool { return in.Name() == name }) {
			t.Fatalf("the program has no %s instruction", name)
		}
	}
	checkOnDevices(t, c.outputs, c.feeds, names...)
}

// finite clamps x to the finite values of its dtype: +Inf becomes the
// largest, -Inf the smallest, NaN stays NaN. checkOnDevices's comparison
// takes two equal infinities for different (their difference is NaN), so
// outputs that may be infinite are compared through it.
func (c *kernelCase) finite(x *graph.Node) *graph.Node {
	m := math.MaxFloat64
	if x.DType() == graph.Float32 {
		m = math.MaxFloat32
	}
	bound := func(v float64) *graph.Node {
		d, err := graph.FromFloat64s(x.DType(), []float64{v})
		if err != nil {
			panic(err)
		}
		return c.g.Const(d)
	}
	return ops.Minimum(ops.Maximum(x, bound(-m)), bound(m))
}

// normal draws from the standard normal distribution.
func normal(r *rand.Rand) float64 { return r.NormFloat64() }

// smallInts draws integers in [-3, 3], so that maxima tie.
func smallInts(r *rand.Rand) float64 { return float64(r.IntN(7) - 3) }

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
				shape := []int{len(rows), len(rows[0])}
				k := 0
				x := c.input(dtype, shape, func(*rand.Rand) float64 {
					v := rows[k/shape[1]][k%shape[1]]
					k++
					return v
				})
				c.outputs = []*graph.Node{c.finite(ops.Max(x, axis)), c.finite(ops.LogSumExp(x, axis)),
					c.finite(ops.PowConst(ops.Max(x, axis), -1))} // 1/max tells -0 from +0
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
	}
	for _, dtype := range floatTypes {
		t.Run(fmt.Sprint(dtype), func(t *testing.T) {
			c := newKernelCase(3)
			for _, s := range cases {
				x := c.input(dtype, s.from, normal)
				c.withGrad(t, ops.SumTo(x, s.to...), x)
			}
			c.check(t, "SumTo")
		})
	}
}

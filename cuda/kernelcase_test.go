package cuda

import (
	"fmt"
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

// labels adds an input of labels of the given dtype (int32, int64 or a
// float) and shape fed with gen's values (integers, truncated for the
// integer dtypes).
func (c *kernelCase) labels(dtype tensor.Dtype, shape []int, gen func(*rand.Rand) float64) *graph.Node {
	if graph.IsFloat(dtype) {
		return c.input(dtype, shape, gen)
	}
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
			vals[i] = int64(gen(c.rng))
		}
		d = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(vals))
	}
	x := c.g.Input(fmt.Sprintf("x%d", len(c.feeds)), dtype, shape...)
	c.feeds[x] = d
	return x
}

// rows adds a (rows, columns) input of the given dtype fed with rows.
func (c *kernelCase) rows(dtype tensor.Dtype, rows [][]float64) *graph.Node {
	return c.input(dtype, []int{len(rows), len(rows[0])}, seq(slices.Concat(rows...)))
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

// seq gives vals one after another, again from the first after the last.
func seq(vals []float64) func(*rand.Rand) float64 {
	k := -1
	return func(*rand.Rand) float64 {
		k = (k + 1) % len(vals)
		return vals[k]
	}
}

// classesBelow draws class indices in [0, n).
func classesBelow(n int) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return float64(r.IntN(n)) }
}

// normal draws from the standard normal distribution.
func normal(r *rand.Rand) float64 { return r.NormFloat64() }

// smallInts draws integers in [-3, 3], so that maxima tie.
func smallInts(r *rand.Rand) float64 { return float64(r.IntN(7) - 3) }

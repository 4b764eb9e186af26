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

// floatDTypes are the dtypes the kernels' tests run each case in.
var floatDTypes = []tensor.Dtype{graph.Float64, graph.Float32}

// checkOpKernels is checkOnDevices, after checking that the compiled
// program holds an instruction of each op named (so that a test cannot
// pass because the compiler removed or fused the op it means to run).
func checkOpKernels(t *testing.T, outputs []*graph.Node, feeds vm.Feeds, names ...string) {
	t.Helper()
	prog, err := compile.Compile(outputs)
	if err != nil {
		t.Fatal(err)
	}
	requireOps(t, prog, names...)
	checkOnDevices(t, outputs, feeds, names...)
}

// requireOps fails the test unless prog holds an instruction of each op
// named.
func requireOps(t *testing.T, prog *compile.Program, names ...string) {
	t.Helper()
	for _, name := range names {
		if !slices.ContainsFunc(prog.Instructions(), func(in compile.Instruction) bool { return in.Name() == name }) {
			t.Fatalf("the program holds no %s instruction", name)
		}
	}
}

// opValues returns a tensor of the given dtype and shape holding distinct
// values of both signs and of magnitudes from 1e-3 to 1e3, so that any
// element read from the wrong place shows.
func opValues(t *testing.T, rng *rand.Rand, dtype tensor.Dtype, shape ...int) *tensor.Dense {
	t.Helper()
	vals := make([]float64, graph.ShapeSize(shape))
	for i := range vals {
		vals[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3))
	}
	d, err := graph.FromFloat64s(dtype, vals, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// opInput adds an input of the given dtype and shape to g and feeds it
// opValues.
func opInput(t *testing.T, g *graph.Graph, feeds vm.Feeds, rng *rand.Rand, dtype tensor.Dtype, shape ...int) *graph.Node {
	t.Helper()
	x := g.Input(fmt.Sprintf("x%d", len(feeds)), dtype, shape...)
	feeds[x] = opValues(t, rng, dtype, shape...)
	return x
}

// opGrads returns the gradients with respect to wrt of Σ y⊙c, c a fed
// input of y's shape: the gradient graph runs y's op's Backward on a
// gradient that is not all ones.
func opGrads(t *testing.T, g *graph.Graph, feeds vm.Feeds, rng *rand.Rand, y *graph.Node, wrt ...*graph.Node) []*graph.Node {
	t.Helper()
	c := opInput(t, g, feeds, rng, y.DType(), y.Shape()...)
	grads, err := compile.Grad(ops.Sum(ops.Mul(y, c)), wrt...)
	if err != nil {
		t.Fatal(err)
	}
	return grads
}

// shapeCase is a test of one op on one input shape: build applies it.
type shapeCase struct {
	shape []int
	build func(x *graph.Node) *graph.Node
}

// runShapeCases runs the cases in float64 and float32, all of a dtype in
// one program: their outputs, where op must run on the device, and their
// inputs' gradients, where the ops named in gradOps must.
func runShapeCases(t *testing.T, op string, gradOps []string, cases []shapeCase) {
	for _, dtype := range floatDTypes {
		rng := rand.New(rand.NewPCG(7, 7))
		g := graph.New()
		feeds := vm.Feeds{}
		var outputs []*graph.Node
		for _, c := range cases {
			x := opInput(t, g, feeds, rng, dtype, c.shape...)
			y := c.build(x)
			outputs = append(append(outputs, y), opGrads(t, g, feeds, rng, y, x)...)
		}
		checkOpKernels(t, outputs, feeds, append([]string{op}, gradOps...)...)
	}
}

func TestBroadcastToKernel(t *testing.T) {
	cases := []shapeCase{
		{[]int{3, 1, 4}, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 2, 3, 5, 4) }},
		{[]int{2, 1}, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 2, 3) }},
		{[]int{1, 5}, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 4, 5) }},
		{[]int{5}, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 3, 5) }},
		{[]int{1}, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 4, 3) }},
		{nil, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 2, 2) }},
		{[]int{1, 3, 1, 2}, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 2, 3, 4, 2) }},
		// BroadcastTo is SumTo's gradient.
		{[]int{2, 3, 4}, func(x *graph.Node) *graph.Node { return ops.SumTo(x, 3, 1) }},
	}
	runShapeCases(t, "BroadcastTo", nil, cases)
}

func TestTransposeKernel(t *testing.T) {
	var cases []shapeCase
	perms := [][]int{{0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, perm := range perms {
		cases = append(cases, shapeCase{[]int{2, 3, 4}, func(x *graph.Node) *graph.Node { return ops.Transpose(x, perm...) }})
	}
	cases = append(cases,
		shapeCase{[]int{5, 3}, func(x *graph.Node) *graph.Node { return ops.Transpose(x) }},
		shapeCase{[]int{1, 5, 1, 3}, func(x *graph.Node) *graph.Node { return ops.Transpose(x, 3, 1, 0, 2) }},
		shapeCase{[]int{2, 3, 1, 4, 2}, func(x *graph.Node) *graph.Node { return ops.Transpose(x, 4, 2, 0, 3, 1) }},
	)
	runShapeCases(t, "Transpose", []string{"Transpose"}, cases)
}

func TestSliceKernel(t *testing.T) {
	slice := func(axis, start, end int) func(x *graph.Node) *graph.Node {
		return func(x *graph.Node) *graph.Node { return ops.Slice(x, axis, start, end) }
	}
	runShapeCases(t, "Slice", []string{"Pad"}, []shapeCase{
		{[]int{4, 5, 6}, slice(0, 1, 3)},
		{[]int{4, 5, 6}, slice(1, 2, 5)},
		{[]int{4, 5, 6}, slice(2, 0, 4)},
		{[]int{4, 5, 6}, slice(-1, 3, 6)},
		{[]int{4, 5, 6}, slice(1, 4, 5)},
		{[]int{3, 1, 2}, slice(1, 0, 1)},
		{[]int{9}, slice(0, 2, 7)},
	})
}

func TestPadKernel(t *testing.T) {
	pad := func(axis, before, after int) func(x *graph.Node) *graph.Node {
		return func(x *graph.Node) *graph.Node { return ops.Pad(x, axis, before, after) }
	}
	runShapeCases(t, "Pad", []string{"Slice"}, []shapeCase{
		{[]int{3, 4, 2}, pad(0, 1, 2)},
		{[]int{3, 4, 2}, pad(1, 2, 0)},
		{[]int{3, 4, 2}, pad(2, 0, 3)},
		{[]int{3, 4, 2}, pad(-2, 1, 1)},
		{[]int{2, 1, 3}, pad(1, 1, 1)},
		{[]int{5}, pad(0, 3, 2)},
		{[]int{3, 0, 2}, pad(1, 1, 2)}, // all zeros
	})
}

func TestConcatKernel(t *testing.T) {
	cases := []struct {
		axis   int
		shapes [][]int
	}{
		{0, [][]int{{2, 3, 4}, {1, 3, 4}, {3, 3, 4}}},
		{1, [][]int{{2, 3, 4}, {2, 1, 4}, {2, 2, 4}}},
		{2, [][]int{{2, 3, 4}, {2, 3, 1}, {2, 3, 2}}},
		{-1, [][]int{{2, 3}, {2, 0}, {2, 5}, {2, 1}}},
		{0, [][]int{{3}, {4}}},
		{1, [][]int{{2, 0, 3}, {2, 2, 3}}},
		{0, [][]int{{1, 2}}},
	}
	for _, dtype := range floatDTypes {
		rng := rand.New(rand.NewPCG(5, 6))
		g := graph.New()
		feeds := vm.Feeds{}
		var outputs []*graph.Node
		for _, c := range cases {
			var xs, nonEmpty []*graph.Node
			for _, s := range c.shapes {
				x := opInput(t, g, feeds, rng, dtype, s...)
				xs = append(xs, x)
				if x.Type().Size() > 0 {
					nonEmpty = append(nonEmpty, x)
				}
			}
			y := ops.Concat(c.axis, xs...)
			outputs = append(append(outputs, y), opGrads(t, g, feeds, rng, y, nonEmpty...)...)
		}
		checkOpKernels(t, outputs, feeds, "Concat", "Slice")
	}
}

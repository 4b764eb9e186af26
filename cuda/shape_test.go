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
	name  string
	shape []int
	build func(x *graph.Node) *graph.Node
}

// runShapeCases runs each case in float64 and float32: the op's output on
// the device (op must run there), then its gradient, whose ops named in
// gradOps must run there too.
func runShapeCases(t *testing.T, op string, gradOps []string, cases []shapeCase) {
	for _, c := range cases {
		for _, dtype := range floatDTypes {
			t.Run(fmt.Sprintf("%s/%v", c.name, dtype), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(len(c.name)), 7))
				g := graph.New()
				feeds := vm.Feeds{}
				x := opInput(t, g, feeds, rng, dtype, c.shape...)
				y := c.build(x)
				checkOpKernels(t, []*graph.Node{y}, feeds, op)
				checkOpKernels(t, opGrads(t, g, feeds, rng, y, x), feeds, gradOps...)
			})
		}
	}
}

func TestBroadcastToKernel(t *testing.T) {
	cases := []shapeCase{
		{"leading and inner axes", []int{3, 1, 4}, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 2, 3, 5, 4) }},
		{"last axis", []int{2, 1}, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 2, 3) }},
		{"first axis", []int{1, 5}, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 4, 5) }},
		{"vector to matrix", []int{5}, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 3, 5) }},
		{"one element", []int{1}, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 4, 3) }},
		{"scalar", nil, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 2, 2) }},
		{"alternate ones", []int{1, 3, 1, 2}, func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 2, 3, 4, 2) }},
	}
	runShapeCases(t, "BroadcastTo", nil, cases)
	// BroadcastTo is SumTo's gradient.
	for _, dtype := range floatDTypes {
		rng := rand.New(rand.NewPCG(3, 4))
		g := graph.New()
		feeds := vm.Feeds{}
		x := opInput(t, g, feeds, rng, dtype, 2, 3, 4)
		checkOpKernels(t, opGrads(t, g, feeds, rng, ops.SumTo(x, 3, 1), x), feeds, "BroadcastTo")
	}
}

func TestTransposeKernel(t *testing.T) {
	var cases []shapeCase
	perms := [][]int{{0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, perm := range perms {
		cases = append(cases, shapeCase{fmt.Sprint(perm), []int{2, 3, 4}, func(x *graph.Node) *graph.Node { return ops.Transpose(x, perm...) }})
	}
	cases = append(cases,
		shapeCase{"matrix", []int{5, 3}, func(x *graph.Node) *graph.Node { return ops.Transpose(x) }},
		shapeCase{"size-1 axes", []int{1, 5, 1, 3}, func(x *graph.Node) *graph.Node { return ops.Transpose(x, 3, 1, 0, 2) }},
		shapeCase{"rank 5", []int{2, 3, 1, 4, 2}, func(x *graph.Node) *graph.Node { return ops.Transpose(x, 4, 2, 0, 3, 1) }},
	)
	runShapeCases(t, "Transpose", []string{"Transpose"}, cases)
}

func TestSliceKernel(t *testing.T) {
	slice := func(axis, start, end int) func(x *graph.Node) *graph.Node {
		return func(x *graph.Node) *graph.Node { return ops.Slice(x, axis, start, end) }
	}
	runShapeCases(t, "Slice", []string{"Pad"}, []shapeCase{
		{"first axis", []int{4, 5, 6}, slice(0, 1, 3)},
		{"middle axis", []int{4, 5, 6}, slice(1, 2, 5)},
		{"last axis", []int{4, 5, 6}, slice(2, 0, 4)},
		{"negative axis", []int{4, 5, 6}, slice(-1, 3, 6)},
		{"one index", []int{4, 5, 6}, slice(1, 4, 5)},
		{"size-1 axis", []int{3, 1, 2}, slice(1, 0, 1)},
		{"vector", []int{9}, slice(0, 2, 7)},
	})
}

func TestPadKernel(t *testing.T) {
	pad := func(axis, before, after int) func(x *graph.Node) *graph.Node {
		return func(x *graph.Node) *graph.Node { return ops.Pad(x, axis, before, after) }
	}
	runShapeCases(t, "Pad", []string{"Slice"}, []shapeCase{
		{"first axis", []int{3, 4, 2}, pad(0, 1, 2)},
		{"middle axis", []int{3, 4, 2}, pad(1, 2, 0)},
		{"last axis", []int{3, 4, 2}, pad(2, 0, 3)},
		{"negative axis", []int{3, 4, 2}, pad(-2, 1, 1)},
		{"size-1 axis", []int{2, 1, 3}, pad(1, 1, 1)},
		{"vector", []int{5}, pad(0, 3, 2)},
	})
	// An empty axis padded is all zeros.
	for _, dtype := range floatDTypes {
		g := graph.New()
		x := g.Input("x", dtype, 3, 0, 2)
		checkOpKernels(t, []*graph.Node{ops.Pad(x, 1, 1, 2)}, vm.Feeds{x: graph.NewDense(dtype, 3, 0, 2)}, "Pad")
	}
}

func TestConcatKernel(t *testing.T) {
	for _, c := range []struct {
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
	} {
		for _, dtype := range floatDTypes {
			t.Run(fmt.Sprintf("%d%v/%v", c.axis, c.shapes, dtype), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(5, 6))
				g := graph.New()
				feeds := vm.Feeds{}
				var xs []*graph.Node
				for _, s := range c.shapes {
					xs = append(xs, opInput(t, g, feeds, rng, dtype, s...))
				}
				y := ops.Concat(c.axis, xs...)
				checkOpKernels(t, []*graph.Node{y}, feeds, "Concat")
				var nonEmpty []*graph.Node
				for _, x := range xs {
					if x.Type().Size() > 0 {
						nonEmpty = append(nonEmpty, x)
					}
				}
				checkOpKernels(t, opGrads(t, g, feeds, rng, y, nonEmpty...), feeds, "Slice")
			})
		}
	}
}

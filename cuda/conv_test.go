package cuda

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// normalInput adds an input of the given shape to g and feeds it standard
// normal values: a convolution's sums of products of opValues' wide
// magnitudes would cancel past float32's tolerance.
func normalInput(t *testing.T, g *graph.Graph, feeds vm.Feeds, rng *rand.Rand, x *graph.Node) *graph.Node {
	t.Helper()
	vals := make([]float64, x.Type().Size())
	for i := range vals {
		vals[i] = rng.NormFloat64()
	}
	d, err := graph.FromFloat64s(x.DType(), vals, x.Shape()...)
	if err != nil {
		t.Fatal(err)
	}
	feeds[x] = d
	return x
}

// The three convolution kernels (Conv2D, its input gradient, which is
// also ConvTranspose2D, and its weight gradient) give the CPU's values
// for every option: stride, padding on each side or same, dilation,
// groups, 1×1 kernels, output padding; each case with both gradients.
func TestConvKernels(t *testing.T) {
	cases := []struct {
		x, w      []int
		o         ops.ConvOptions
		transpose bool
	}{
		{[]int{2, 3, 6, 5}, []int{4, 3, 3, 2}, ops.ConvOptions{}, false},
		{[]int{1, 2, 7, 8}, []int{3, 2, 3, 3}, ops.ConvOptions{Stride: []int{2, 3}, Padding: []int{1, 0, 2, 1}}, false},
		{[]int{2, 2, 9, 7}, []int{2, 2, 3, 2}, ops.ConvOptions{Dilation: []int{2, 3}, Padding: []int{2}}, false},
		{[]int{1, 4, 5, 5}, []int{6, 2, 3, 3}, ops.ConvOptions{Groups: 2, Same: true}, false},
		{[]int{2, 3, 4, 6}, []int{3, 1, 2, 3}, ops.ConvOptions{Groups: 3, Stride: []int{2}, Dilation: []int{1, 2}, Padding: []int{1, 2}}, false},
		{[]int{3, 4, 3, 2}, []int{5, 4, 1, 1}, ops.ConvOptions{}, false},
		{[]int{1, 1, 1, 1}, []int{1, 1, 1, 1}, ops.ConvOptions{}, false},
		{[]int{2, 4, 3, 4}, []int{4, 3, 3, 2}, ops.ConvOptions{Stride: []int{2, 3}, Padding: []int{1}, OutputPadding: []int{1, 2}}, true},
		{[]int{1, 4, 4, 3}, []int{4, 1, 2, 2}, ops.ConvOptions{Groups: 2, Dilation: []int{2}}, true},
		// Products (ops.ConvProducts): forward only (K = 48), both (K =
		// 36, OG = 32, two groups), input gradient only (OG = 40), with
		// stride, padding and dilation.
		{[]int{3, 8, 7, 6}, []int{5, 8, 3, 2}, ops.ConvOptions{Padding: []int{1}}, false},
		{[]int{2, 8, 5, 6}, []int{64, 4, 3, 3}, ops.ConvOptions{Groups: 2, Stride: []int{2, 1}, Padding: []int{1, 0, 2, 1}}, false},
		{[]int{2, 3, 9, 8}, []int{40, 3, 2, 2}, ops.ConvOptions{Dilation: []int{2, 3}, Padding: []int{1}}, false},
		{[]int{2, 40, 3, 4}, []int{40, 3, 3, 2}, ops.ConvOptions{Stride: []int{2, 3}, Padding: []int{1}, OutputPadding: []int{1, 2}}, true},
		// Weight gradients long enough to be split over chunks.
		{[]int{8, 2, 12, 11}, []int{3, 2, 3, 3}, ops.ConvOptions{Padding: []int{1}}, false},
		{[]int{6, 4, 13, 9}, []int{2, 2, 3, 2}, ops.ConvOptions{Groups: 2, Stride: []int{2, 1}, Dilation: []int{1, 2}, Padding: []int{1, 0}}, false},
	}
	for _, dtype := range floatDTypes {
		rng := rand.New(rand.NewPCG(11, 12))
		g := graph.New()
		feeds := vm.Feeds{}
		var outputs []*graph.Node
		for i, c := range cases {
			x := normalInput(t, g, feeds, rng, g.Input(fmt.Sprint("x", i), dtype, c.x...))
			w := normalInput(t, g, feeds, rng, g.Input(fmt.Sprint("w", i), dtype, c.w...))
			var y *graph.Node
			if c.transpose {
				y = ops.ConvTranspose2D(x, w, c.o)
			} else {
				y = ops.Conv2D(x, w, c.o)
			}
			if err := y.Err(); err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			cy := normalInput(t, g, feeds, rng, g.Input(fmt.Sprint("c", i), dtype, y.Shape()...))
			grads, err := compile.Grad(ops.Sum(ops.Mul(y, cy)), x, w)
			if err != nil {
				t.Fatal(err)
			}
			outputs = append(append(outputs, y), grads...)
		}
		checkOpKernels(t, outputs, feeds, "Conv2D", "Conv2DInputGrad", "Conv2DWeightGrad", "ConvTranspose2D")
	}
}

// A convolution whose sums are deep enough runs as the unfolding (or
// folding) kernel and a product per group (then, for the weight
// gradient, the sum of the images' shares), a chunk of images at a time
// when the images' columns exceed colBytes, and gives the CPU's values.
func TestConvProducts(t *testing.T) {
	// K = 4·3·3 = 36 and OG = 32: the three run as products, of P = 6·5
	// columns, in two groups. An image's columns are 2·36·30 = 2160
	// elements, its share of the weight gradient 64·36 = 2304.
	defer func(b int64) { colBytes = b }(colBytes)
	colBytes = 50000
	// Products for each dtype and op: one per group and chunk of images.
	products := map[tensor.Dtype]map[string]int{
		// Chunks of 2 images (2, 2, 1), and for the weight gradient of 1.
		graph.Float64: {"Conv2D": 6, "Conv2DInputGrad": 6, "Conv2DWeightGrad": 10},
		// All 5 images at once, and for the weight gradient 2, 2 and 1.
		graph.Float32: {"Conv2D": 2, "Conv2DInputGrad": 2, "Conv2DWeightGrad": 6},
	}
	for _, dtype := range floatDTypes {
		rng := rand.New(rand.NewPCG(13, 14))
		g := graph.New()
		feeds := vm.Feeds{}
		x := normalInput(t, g, feeds, rng, g.Input("x", dtype, 5, 8, 6, 5))
		w := normalInput(t, g, feeds, rng, g.Input("w", dtype, 64, 4, 3, 3))
		y := ops.Conv2D(x, w, ops.ConvOptions{Groups: 2, Padding: []int{1}})
		cy := normalInput(t, g, feeds, rng, g.Input("c", dtype, y.Shape()...))
		grads, err := compile.Grad(ops.Sum(ops.Mul(y, cy)), x, w)
		if err != nil {
			t.Fatal(err)
		}
		outputs := append([]*graph.Node{y}, grads...)
		prog, err := compile.Compile(outputs)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := newPlan(prog)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, s := range pl.steps {
			if s.kind == stepGemm {
				got[prog.Instructions()[s.instr].Name()]++
			}
		}
		if !maps.Equal(got, products[dtype]) {
			t.Errorf("%v: products by op %v, want %v", dtype, got, products[dtype])
		}
		checkOpKernels(t, outputs, feeds, "Conv2D", "Conv2DInputGrad", "Conv2DWeightGrad")
	}
}

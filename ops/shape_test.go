package ops

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/race"
)

func TestReshape(t *testing.T) {
	reshape := func(shape ...int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return Reshape(xs[0], shape...) }
	}
	runForward(t, []forwardCase{
		{"(2,3)->(3,2)", []values{arange(2, 3)}, reshape(3, 2), []int{3, 2}, arange(6).vals},
		{"(2,3)->(-1)", []values{arange(2, 3)}, reshape(-1), []int{6}, arange(6).vals},
		{"(2,3)->(3,-1)", []values{arange(2, 3)}, reshape(3, -1), []int{3, 2}, arange(6).vals},
		{"scalar->(1,1)", []values{of(nil, 7)}, reshape(1, 1), []int{1, 1}, []float64{7}},
		{"(1)->scalar", []values{of([]int{1}, 7)}, reshape(), nil, []float64{7}},
		{"(0,3)->(3,0)", []values{arange(0, 3)}, reshape(3, 0), []int{3, 0}, nil},
		{"(0,3)->(-1,3)", []values{arange(0, 3)}, reshape(-1, 3), []int{0, 3}, nil},
	})
	runErrors(t, []errorCase{
		{"size", func(g *graph.Graph) *graph.Node { return Reshape(f64(g, 2, 3), 4, 2) }, "Reshape",
			[]string{"cannot reshape (2,3) (6 elements) to (4,2)"}},
		{"-1 not dividing", func(g *graph.Graph) *graph.Node { return Reshape(f64(g, 2, 3), -1, 4) }, "Reshape",
			[]string{"cannot reshape (2,3) (6 elements) to (-1,4)"}},
		{"two -1", func(g *graph.Graph) *graph.Node { return Reshape(f64(g, 2, 3), -1, -1) }, "Reshape",
			[]string{"only one dimension may be -1"}},
		{"negative", func(g *graph.Graph) *graph.Node { return Reshape(f64(g, 2, 3), -2, -3) }, "Reshape",
			[]string{"bad dimension -2"}},
		{"ambiguous", func(g *graph.Graph) *graph.Node { return Reshape(f64(g, 0, 3), -1, 0) }, "Reshape",
			[]string{"-1 is ambiguous"}},
		{"rank 9", func(g *graph.Graph) *graph.Node { return Reshape(f64(g, 1), 1, 1, 1, 1, 1, 1, 1, 1, 1) }, "Reshape",
			[]string{"rank 9 is above the supported 8", "float64(1)"}},
	})
	runBackward(t, []backwardCase{
		{"(2,3)->(3,2)", [][]int{{2, 3}}, reshape(3, 2)},
		{"(2,3,2)->(-1,3)", [][]int{{2, 3, 2}}, reshape(-1, 3)},
		{"scalar->(1)", [][]int{{}}, reshape(1)},
	})
}

func TestTranspose(t *testing.T) {
	transpose := func(perm ...int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return Transpose(xs[0], perm...) }
	}
	runForward(t, []forwardCase{
		// [[0,1,2],[3,4,5]]ᵀ = [[0,3],[1,4],[2,5]]
		{"(2,3)", []values{arange(2, 3)}, transpose(), []int{3, 2}, []float64{0, 3, 1, 4, 2, 5}},
		// out[j,i,k] = x[i,j,k] = 12i+4j+k
		{"(2,3,4) perm (1,0,2)", []values{arange(2, 3, 4)}, transpose(1, 0, 2), []int{3, 2, 4},
			[]float64{0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7, 16, 17, 18, 19, 8, 9, 10, 11, 20, 21, 22, 23}},
		// out[k,j,i] = 12i+4j+k
		{"(2,3,4) reversed", []values{arange(2, 3, 4)}, transpose(), []int{4, 3, 2},
			[]float64{0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23}},
		// out[k,i,j] = 12i+4j+k
		{"(2,3,4) perm (2,0,1)", []values{arange(2, 3, 4)}, transpose(2, 0, 1), []int{4, 2, 3},
			[]float64{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23}},
		{"scalar", []values{of(nil, 7)}, transpose(), nil, []float64{7}},
		{"(3,1)", []values{arange(3, 1)}, transpose(), []int{1, 3}, []float64{0, 1, 2}},
		{"(1,0)", []values{arange(1, 0)}, transpose(1, 0), []int{0, 1}, nil},
	})
	runErrors(t, []errorCase{
		{"repeated axis", func(g *graph.Graph) *graph.Node { return Transpose(f64(g, 2, 3), 0, 0) }, "Transpose",
			[]string{"[0 0] is not a permutation of the axes of (2,3)"}},
		{"too long", func(g *graph.Graph) *graph.Node { return Transpose(f64(g, 2, 3), 0, 1, 2) }, "Transpose",
			[]string{"[0 1 2] is not a permutation of the axes of (2,3)"}},
		{"out of range", func(g *graph.Graph) *graph.Node { return Transpose(f64(g, 2, 3), 0, 2) }, "Transpose",
			[]string{"[0 2] is not a permutation"}},
		{"negative", func(g *graph.Graph) *graph.Node { return Transpose(f64(g, 2, 3), -1, 0) }, "Transpose",
			[]string{"[-1 0] is not a permutation"}},
	})
	runBackward(t, []backwardCase{
		{"(2,3)", [][]int{{2, 3}}, transpose()},
		{"(2,3,4) perm (2,0,1)", [][]int{{2, 3, 4}}, transpose(2, 0, 1)},
		{"(2,1,3,2) perm (3,1,0,2)", [][]int{{2, 1, 3, 2}}, transpose(3, 1, 0, 2)},
	})
}

func TestBroadcastTo(t *testing.T) {
	broadcast := func(shape ...int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return BroadcastTo(xs[0], shape...) }
	}
	runForward(t, []forwardCase{
		{"(3)->(2,3)", []values{arange(3)}, broadcast(2, 3), []int{2, 3}, []float64{0, 1, 2, 0, 1, 2}},
		{"(2,1)->(2,3)", []values{arange(2, 1)}, broadcast(2, 3), []int{2, 3}, []float64{0, 0, 0, 1, 1, 1}},
		{"scalar->(2,2)", []values{of(nil, 5)}, broadcast(2, 2), []int{2, 2}, []float64{5, 5, 5, 5}},
		{"(1,3)->(2,2,3)", []values{arange(1, 3)}, broadcast(2, 2, 3), []int{2, 2, 3},
			[]float64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}},
		{"(2,1,3)->(2,2,3)", []values{arange(2, 1, 3)}, broadcast(2, 2, 3), []int{2, 2, 3},
			[]float64{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}},
		{"(2,3)->(2,3)", []values{arange(2, 3)}, broadcast(2, 3), []int{2, 3}, arange(6).vals},
		{"(1)->(0)", []values{arange(1)}, broadcast(0), []int{0}, nil},
		{"(3)->(0,3)", []values{arange(3)}, broadcast(0, 3), []int{0, 3}, nil},
	})
	runErrors(t, []errorCase{
		{"mismatch", func(g *graph.Graph) *graph.Node { return BroadcastTo(f64(g, 3), 2, 2) }, "BroadcastTo",
			[]string{"cannot broadcast: (3) does not broadcast to (2,2)"}},
		{"fewer axes", func(g *graph.Graph) *graph.Node { return BroadcastTo(f64(g, 2, 3), 3) }, "BroadcastTo",
			[]string{"(2,3) does not broadcast to (3)"}},
		{"rank 9", func(g *graph.Graph) *graph.Node {
			return BroadcastTo(f64(g, 1), 1, 1, 1, 1, 1, 1, 1, 1, 1)
		}, "BroadcastTo", []string{"rank 9 is above the supported 8"}},
	})
	runBackward(t, []backwardCase{
		{"(3)->(2,3)", [][]int{{3}}, broadcast(2, 3)},
		{"(2,1,3)->(4,2,2,3)", [][]int{{2, 1, 3}}, broadcast(4, 2, 2, 3)},
		{"scalar->(2,2)", [][]int{{}}, broadcast(2, 2)},
	})
}

func TestSumTo(t *testing.T) {
	sumTo := func(shape ...int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return SumTo(xs[0], shape...) }
	}
	runForward(t, []forwardCase{
		// [0+3, 1+4, 2+5]
		{"(2,3)->(3)", []values{arange(2, 3)}, sumTo(3), []int{3}, []float64{3, 5, 7}},
		// [0+1+2, 3+4+5]
		{"(2,3)->(2,1)", []values{arange(2, 3)}, sumTo(2, 1), []int{2, 1}, []float64{3, 12}},
		{"(2,3)->scalar", []values{arange(2, 3)}, sumTo(), nil, []float64{15}},
		{"(2,3)->(1,1)", []values{arange(2, 3)}, sumTo(1, 1), []int{1, 1}, []float64{15}},
		// [j] = Σ_i Σ_k 12i+4j+k = 32j+60
		{"(2,3,4)->(3,1)", []values{arange(2, 3, 4)}, sumTo(3, 1), []int{3, 1}, []float64{60, 92, 124}},
		// [i,k] = Σ_j 12i+4j+k = 36i+3k+12
		{"(2,3,4)->(2,1,4)", []values{arange(2, 3, 4)}, sumTo(2, 1, 4), []int{2, 1, 4},
			[]float64{12, 15, 18, 21, 48, 51, 54, 57}},
		// rows of 7: 0+...+6 = 21, 7+...+13 = 70
		{"(2,7)->(2,1)", []values{arange(2, 7)}, sumTo(2, 1), []int{2, 1}, []float64{21, 70}},
		{"(2,3)->(2,3)", []values{arange(2, 3)}, sumTo(2, 3), []int{2, 3}, arange(6).vals},
		{"(1,3)->(3)", []values{arange(1, 3)}, sumTo(3), []int{3}, []float64{0, 1, 2}},
		{"(0,3)->(3)", []values{arange(0, 3)}, sumTo(3), []int{3}, []float64{0, 0, 0}},
		{"(0,3)->(1,3)", []values{arange(0, 3)}, sumTo(1, 3), []int{1, 3}, []float64{0, 0, 0}},
		{"(2,0)->(2,1)", []values{arange(2, 0)}, sumTo(2, 1), []int{2, 1}, []float64{0, 0}},
	})
	runErrors(t, []errorCase{
		{"mismatch", func(g *graph.Graph) *graph.Node { return SumTo(f64(g, 2, 3), 2, 2) }, "SumTo",
			[]string{"cannot sum (2,3) to (2,2): (2,2) does not broadcast to (2,3)"}},
		{"more axes", func(g *graph.Graph) *graph.Node { return SumTo(f64(g, 3), 2, 3) }, "SumTo",
			[]string{"cannot sum (3) to (2,3)"}},
		{"rank 9", func(g *graph.Graph) *graph.Node {
			return SumTo(f64(g, 1, 1, 1, 1, 1, 1, 1, 1, 1), 1)
		}, "SumTo", []string{"rank 9 is above the supported 8"}},
	})
	runBackward(t, []backwardCase{
		{"(2,3)->(3)", [][]int{{2, 3}}, sumTo(3)},
		{"(4,2,3)->(2,1)", [][]int{{4, 2, 3}}, sumTo(2, 1)},
		{"(2,3)->scalar", [][]int{{2, 3}}, sumTo()},
	})
}

func TestSliceAndPad(t *testing.T) {
	slice := func(axis, start, end int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return Slice(xs[0], axis, start, end) }
	}
	pad := func(axis, before, after int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return Pad(xs[0], axis, before, after) }
	}
	runForward(t, []forwardCase{
		{"slice (2,3) axis 1 [1:3]", []values{arange(2, 3)}, slice(1, 1, 3), []int{2, 2}, []float64{1, 2, 4, 5}},
		{"slice (2,3) axis 0 [1:2]", []values{arange(2, 3)}, slice(0, 1, 2), []int{1, 3}, []float64{3, 4, 5}},
		{"slice (2,3) axis -1 [0:1]", []values{arange(2, 3)}, slice(-1, 0, 1), []int{2, 1}, []float64{0, 3}},
		// x[i,1,k] = 12i+4+k
		{"slice (2,3,4) axis 1 [1:2]", []values{arange(2, 3, 4)}, slice(1, 1, 2), []int{2, 1, 4},
			[]float64{4, 5, 6, 7, 16, 17, 18, 19}},
		{"slice empty", []values{arange(2, 3)}, slice(1, 2, 2), []int{2, 0}, nil},
		{"slice (0,3)", []values{arange(0, 3)}, slice(1, 0, 2), []int{0, 2}, nil},
		{"pad (2,2) axis 1 (1,2)", []values{arange(2, 2)}, pad(1, 1, 2), []int{2, 5},
			[]float64{0, 0, 1, 0, 0, 0, 2, 3, 0, 0}},
		{"pad (2,2) axis 0 (1,0)", []values{arange(2, 2)}, pad(0, 1, 0), []int{3, 2}, []float64{0, 0, 0, 1, 2, 3}},
		{"pad (2,2) axis -1 (0,0)", []values{arange(2, 2)}, pad(-1, 0, 0), []int{2, 2}, []float64{0, 1, 2, 3}},
		{"pad (0,2) axis 0 (1,1)", []values{arange(0, 2)}, pad(0, 1, 1), []int{2, 2}, []float64{0, 0, 0, 0}},
		{"pad (0,2) axis 1 (1,1)", []values{arange(0, 2)}, pad(1, 1, 1), []int{0, 4}, nil},
		{"pad (2,0) axis 1 (1,0)", []values{arange(2, 0)}, pad(1, 1, 0), []int{2, 1}, []float64{0, 0}},
	})
	runErrors(t, []errorCase{
		{"end past axis", func(g *graph.Graph) *graph.Node { return Slice(f64(g, 2, 3), 1, 2, 4) }, "Slice",
			[]string{"slice [2:4] is out of range for axis 1 of shape (2,3)"}},
		{"start after end", func(g *graph.Graph) *graph.Node { return Slice(f64(g, 2, 3), 1, 2, 1) }, "Slice",
			[]string{"slice [2:1] is out of range"}},
		{"negative start", func(g *graph.Graph) *graph.Node { return Slice(f64(g, 2, 3), 0, -1, 1) }, "Slice",
			[]string{"slice [-1:1] is out of range"}},
		{"bad axis", func(g *graph.Graph) *graph.Node { return Slice(f64(g, 2, 3), 2, 0, 1) }, "Slice",
			[]string{"shape (2,3): axis 2 out of range for rank 2"}},
		{"scalar", func(g *graph.Graph) *graph.Node { return Slice(f64(g), 0, 0, 1) }, "Slice",
			[]string{"shape (): axis 0 out of range for rank 0"}},
		{"negative padding", func(g *graph.Graph) *graph.Node { return Pad(f64(g, 2, 3), 0, 1, -1) }, "Pad",
			[]string{"negative padding (1, -1) for shape (2,3)"}},
		{"pad bad axis", func(g *graph.Graph) *graph.Node { return Pad(f64(g, 2, 3), -3, 1, 1) }, "Pad",
			[]string{"axis -3 out of range for rank 2"}},
	})
	runBackward(t, []backwardCase{
		{"slice axis 1", [][]int{{2, 3}}, slice(1, 1, 3)},
		{"slice axis -2", [][]int{{3, 2, 2}}, slice(-2, 0, 1)},
		{"slice (0,3)", [][]int{{0, 3}}, slice(1, 1, 2)},
		{"pad axis 0", [][]int{{2, 3}}, pad(0, 2, 1)},
		{"pad axis 2", [][]int{{2, 1, 2}}, pad(2, 0, 3)},
	})
}

func TestConcat(t *testing.T) {
	concat := func(axis int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return Concat(axis, xs...) }
	}
	runForward(t, []forwardCase{
		{"axis 0", []values{arange(1, 2), arange(2, 2)}, concat(0), []int{3, 2}, []float64{0, 1, 0, 1, 2, 3}},
		{"axis 1", []values{arange(2, 1), arange(2, 2)}, concat(1), []int{2, 3}, []float64{0, 0, 1, 1, 2, 3}},
		{"axis -1", []values{arange(2, 1), arange(2, 2)}, concat(-1), []int{2, 3}, []float64{0, 0, 1, 1, 2, 3}},
		// batch 0: [0,1] [0,1,2,3] []; batch 1: [2,3] [4,5,6,7] []
		{"three, one empty", []values{arange(2, 1, 2), arange(2, 2, 2), arange(2, 0, 2)}, concat(1), []int{2, 3, 2},
			[]float64{0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 6, 7}},
		{"one input", []values{arange(3)}, concat(0), []int{3}, []float64{0, 1, 2}},
		{"zero rows", []values{arange(0, 2), arange(0, 3)}, concat(1), []int{0, 5}, nil},
	})
	runErrors(t, []errorCase{
		{"off-axis mismatch", func(g *graph.Graph) *graph.Node { return Concat(1, f64(g, 2, 3), f64(g, 3, 3)) }, "Concat",
			[]string{"shapes (2,3) and (3,3) differ off axis 1"}},
		{"ranks differ", func(g *graph.Graph) *graph.Node { return Concat(0, f64(g, 2, 3), f64(g, 3)) }, "Concat",
			[]string{"shapes (2,3) and (3) differ off axis 0"}},
		{"dtypes differ", func(g *graph.Graph) *graph.Node {
			return Concat(0, f64(g, 2), g.Input("y", graph.Float32, 2))
		}, "Concat", []string{"dtypes differ: float64(2) and float32(2)"}},
		{"bad axis", func(g *graph.Graph) *graph.Node { return Concat(2, f64(g, 2, 3), f64(g, 2, 3)) }, "Concat",
			[]string{"shape (2,3): axis 2 out of range for rank 2"}},
		{"scalars", func(g *graph.Graph) *graph.Node { return Concat(0, f64(g), f64(g)) }, "Concat",
			[]string{"axis 0 out of range for rank 0"}},
	})
	runBackward(t, []backwardCase{
		{"axis 0", [][]int{{1, 2}, {2, 2}}, concat(0)},
		{"axis -1, three", [][]int{{2, 2, 1}, {2, 2, 3}, {2, 2, 2}}, concat(-1)},
	})
}

// TestBackwardOfInputs checks gradients with respect to fed inputs, not
// only constants.
func TestBackwardOfInputs(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	feeds := map[*graph.Node]*tensor.Dense{x: dense(t, graph.Float64, []int{2, 3}, 1, -2, 3, 0.5, 4, -1)}
	checkBackward(t, Transpose(x), feeds)
	checkBackward(t, Slice(x, 1, 1, 2), feeds)
}

// TestErrorsAreSticky checks that building on a poisoned node keeps the
// first error and does not panic.
func TestErrorsAreSticky(t *testing.T) {
	g := graph.New()
	bad := Reshape(f64(g, 2, 3), 5)
	first := g.Err()
	y := Concat(0, Slice(Transpose(SumTo(BroadcastTo(bad, 2, 5), 5)), 0, 0, 1), bad)
	y = MatMul(Pad(Identity(StopGradient(y)), 0, 1, 1), bad)
	if g.Err() != first || y.Err() != first {
		t.Errorf("got %v and %v, want the first error %v", g.Err(), y.Err(), first)
	}
}

// TestKernelsDoNotAllocate runs each op's Forward on operands of a useful
// size and asserts that it allocates nothing.
func TestKernelsDoNotAllocate(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop values: allocations are counted without it")
	}
	for _, c := range []struct {
		name   string
		shapes [][]int
		build  func(xs ...*graph.Node) *graph.Node
	}{
		{"MatMul 64x784·784x256", [][]int{{64, 784}, {784, 256}}, matMulT(false, false)},
		{"MatMul batched transB", [][]int{{4, 64, 96}, {4, 128, 96}}, matMulT(false, true)},
		{"SumTo", [][]int{{64, 256}}, func(xs ...*graph.Node) *graph.Node { return SumTo(xs[0], 256) }},
		{"BroadcastTo", [][]int{{256}}, func(xs ...*graph.Node) *graph.Node { return BroadcastTo(xs[0], 64, 256) }},
		{"Transpose", [][]int{{8, 16, 32}}, func(xs ...*graph.Node) *graph.Node { return Transpose(xs[0], 2, 0, 1) }},
		{"Reshape", [][]int{{8, 16}}, func(xs ...*graph.Node) *graph.Node { return Reshape(xs[0], 16, -1) }},
		{"Slice", [][]int{{8, 16}}, func(xs ...*graph.Node) *graph.Node { return Slice(xs[0], 1, 2, 9) }},
		{"Pad", [][]int{{8, 16}}, func(xs ...*graph.Node) *graph.Node { return Pad(xs[0], 1, 2, 9) }},
		{"Concat", [][]int{{8, 16}, {8, 4}}, func(xs ...*graph.Node) *graph.Node { return Concat(1, xs...) }},
		{"Identity", [][]int{{8, 16}}, func(xs ...*graph.Node) *graph.Node { return Identity(xs[0]) }},
	} {
		for _, dtype := range dtypes {
			g := graph.New()
			xs := make([]*graph.Node, len(c.shapes))
			in := make([]*tensor.Dense, len(c.shapes))
			for i, s := range c.shapes {
				xs[i] = g.Input("x", dtype, s...)
				in[i] = graph.NewDense(dtype, s...)
			}
			y := c.build(xs...)
			out := graph.NewDenseOf(y.Type())
			var err error
			allocs := testing.AllocsPerRun(20, func() { err = y.Op().Forward(out, in) })
			if err != nil {
				t.Fatalf("case %v %v: %v", c.name, dtype, err)
			}
			if allocs != 0 {
				t.Errorf("case %v %v: got %v allocations, want 0", c.name, dtype, allocs)
			}
		}
	}
}

func BenchmarkSumTo64x256To256(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, dtype := range dtypes {
		b.Run(dtype.String(), func(b *testing.B) {
			x := randomValues(r, 64, 256)
			in := []*tensor.Dense{dense(b, dtype, x.shape, x.vals...)}
			out := graph.NewDense(dtype, 256)
			op := sumToOp{newShapeParam([]int{256})}
			b.ReportAllocs()
			for b.Loop() {
				if err := op.Forward(out, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// layoutCases are broadcasting layouts, an output shape and the inputs'
// shapes: inner axes of size 1 (a column broadcast along a batch, the
// case that used to run one element a row), outer broadcasts, scalars
// spread out as size-1 axes, odd sizes, empty outputs and rank 0.
var layoutCases = [][][]int{
	{{64, 64, 1}, {64, 64, 1}, {64, 1}},
	{{64, 64, 1}, {64, 1}, {64, 64, 1}},
	{{5, 7, 1}, {1, 7, 1}, {5, 1, 1}},
	{{3, 1, 5}, {1, 1, 5}, {3, 1, 1}},
	{{2, 3, 4}, {2, 3, 4}, {4}},
	{{2, 3, 4}, {3, 1}, {2, 1, 4}},
	{{5, 1, 7, 1}, {5, 1, 1, 1}, {7, 1}},
	{{7, 1, 3}, {7, 1, 3}, {1, 1, 1}},
	{{1, 1}, {1, 1}, {1}},
	{{9}, {9}, {1}},
	{{0, 3}, {1, 3}, {0, 1}},
	{{}, {}, {}},
	{{4, 5, 6}, {4, 1, 6}, {1, 5, 1}, {6}},
	{{3, 4, 5, 2}, {3, 4, 5, 2}, {3, 4, 5, 2}, {3, 4, 5, 2}},
	{{5, 7, 3}, {5, 7, 1}, {7, 3}}, // each row its own element (a layer norm's statistics)
	{{6, 9}, {6, 1}, {1, 9}},
}

// visits lists, in order, each element a walker visits: the output's
// offset then each input's.
func visits(w walker) [][4]int {
	var v [][4]int
	w.rows(func(out, n int, off [3]int) {
		for j := range n {
			v = append(v, [4]int{out + j, off[0] + j*w.inner[0], off[1] + j*w.inner[1], off[2] + j*w.inner[2]})
		}
	})
	return v
}

// TestWalkerCollapseVisitsSameElements checks that a collapsed walker
// visits exactly the elements of the walker it collapses, in the same
// order, and that the element offsets are those of the broadcast index
// arithmetic done by hand.
func TestWalkerCollapseVisitsSameElements(t *testing.T) {
	for _, c := range layoutCases {
		name := fmt.Sprint(c)
		plain, collapsed := newWalker(c[0], c[1:]...), newElementwiseWalker(c[0], c[1:]...)
		want, got := visits(plain), visits(collapsed)
		if !slices.Equal(got, want) {
			t.Errorf("%s: collapsed walker visits %v, want %v", name, got, want)
		}
		if ref := referenceVisits(c[0], c[1:]); !slices.Equal(want, ref) {
			t.Errorf("%s: walker visits %v, want %v", name, want, ref)
		}
		if n := graph.ShapeSize(c[0]); len(got) != n {
			t.Errorf("%s: %d elements visited, want %d", name, len(got), n)
		}
	}
	// The case that motivated collapsing: 4,096 rows of one element
	// become 64 rows of 64.
	w := newElementwiseWalker([]int{64, 64, 1}, []int{64, 64, 1}, []int{64, 1})
	if w.rank != 2 || w.shape[1] != 64 || w.inner != [3]int{1, 1, 0} {
		t.Errorf("(64,64,1) by (64,1): rank %d, shape %v, inner strides %v; want rows of 64 with unit strides", w.rank, w.shape[:w.rank], w.inner)
	}
}

// referenceVisits computes, for each output element in order, the offset
// of the input element it reads, by the broadcasting rule.
func referenceVisits(out []int, ins [][]int) [][4]int {
	var v [][4]int
	idx := make([]int, len(out))
	for e := range graph.ShapeSize(out) {
		r := e
		for a := len(out) - 1; a >= 0; a-- {
			idx[a] = r % out[a]
			r /= out[a]
		}
		row := [4]int{e}
		for k, in := range ins {
			off, stride := 0, 1
			for i := len(in) - 1; i >= 0; i-- {
				if in[i] != 1 {
					off += idx[i+len(out)-len(in)] * stride
				}
				stride *= in[i]
			}
			row[k+1] = off
		}
		v = append(v, row)
	}
	return v
}

// mixedSpecial is n values, a third of them drawn from specialValues
// (±0, NaN, ±Inf, subnormals), the rest random.
func mixedSpecial(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		if r.IntN(3) == 0 {
			v[i] = specialValues[r.IntN(len(specialValues))]
		} else {
			v[i] = 4*r.Float64() - 2
		}
	}
	return v
}

// sameFloat reports whether a and b are the same float64, NaNs of any
// payload counting as equal (kernels may pick either operand's NaN).
func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

// TestBinaryBroadcastLayouts compares every binary op on the broadcasting
// layouts, element by element, with the same op applied to one element
// at a time at offsets computed by hand: bit for bit, ±0 and NaN
// included.
func TestBinaryBroadcastLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 1))
	for _, dtype := range dtypes {
		for _, c := range layoutCases {
			if len(c) != 3 {
				continue
			}
			x, y := mixedSpecial(r, graph.ShapeSize(c[1])), mixedSpecial(r, graph.ShapeSize(c[2]))
			a, b := dense(t, dtype, c[1], x...), dense(t, dtype, c[2], y...)
			for k := range binaryNames {
				op := binary{binaryKind(k)}
				out := graph.NewDense(dtype, c[0]...)
				if err := op.Forward(out, []*tensor.Dense{a, b}); err != nil {
					t.Fatalf("%s %v: %v", binaryNames[k], c, err)
				}
				got := graph.Float64s(out)
				for _, v := range referenceVisits(c[0], c[1:]) {
					want := oneElement(t, op, dtype, x[v[1]], y[v[2]])
					if !sameFloat(got[v[0]], want) {
						t.Fatalf("%v %s %v: element %d is %v, want %v", dtype, binaryNames[k], c, v[0], got[v[0]], want)
					}
				}
			}
		}
	}
}

// oneElement is op applied to one pair of elements.
func oneElement(t *testing.T, op graph.Op, dtype tensor.Dtype, x, y float64) float64 {
	out := graph.NewDense(dtype, 1)
	if err := op.Forward(out, []*tensor.Dense{dense(t, dtype, []int{1}, x), dense(t, dtype, []int{1}, y)}); err != nil {
		t.Fatal(err)
	}
	return graph.Float64s(out)[0]
}

// TestWhereAndBroadcastToLayouts checks Where and BroadcastTo on the
// broadcasting layouts against per-element references.
func TestWhereAndBroadcastToLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 2))
	for _, dtype := range dtypes {
		for _, c := range layoutCases {
			out := graph.NewDense(dtype, c[0]...)
			xt := dense(t, dtype, c[1], mixedSpecial(r, graph.ShapeSize(c[1]))...)
			x := graph.Float64s(xt) // as stored in dtype
			if err := (broadcastToOp{to: newShapeParam(c[0])}).Forward(out, []*tensor.Dense{xt}); err != nil {
				t.Fatalf("BroadcastTo %v: %v", c, err)
			}
			got := graph.Float64s(out)
			for _, v := range referenceVisits(c[0], c[1:2]) {
				if !sameFloat(got[v[0]], x[v[1]]) {
					t.Fatalf("BroadcastTo %v: element %d is %v, want %v", c, v[0], got[v[0]], x[v[1]])
				}
			}
			if len(c) != 4 {
				continue
			}
			cond := make([]float64, graph.ShapeSize(c[1]))
			for i := range cond {
				cond[i] = float64(r.IntN(2))
			}
			in := []*tensor.Dense{dense(t, dtype, c[1], cond...),
				dense(t, dtype, c[2], mixedSpecial(r, graph.ShapeSize(c[2]))...),
				dense(t, dtype, c[3], mixedSpecial(r, graph.ShapeSize(c[3]))...)}
			a, b := graph.Float64s(in[1]), graph.Float64s(in[2])
			if err := (whereOp{}).Forward(out, in); err != nil {
				t.Fatalf("Where %v: %v", c, err)
			}
			got = graph.Float64s(out)
			for _, v := range referenceVisits(c[0], c[1:]) {
				want := b[v[3]]
				if cond[v[1]] != 0 {
					want = a[v[2]]
				}
				if !sameFloat(got[v[0]], want) {
					t.Fatalf("Where %v: element %d is %v, want %v", c, v[0], got[v[0]], want)
				}
			}
		}
	}
}

// TestFusedGatherLayouts checks that a fused op's gather of a broadcast
// input, from every block start, reads the elements the broadcasting rule
// names, started afresh and carried on from block to block.
func TestFusedGatherLayouts(t *testing.T) {
	for _, c := range layoutCases {
		for _, in := range c[1:] {
			size, n := graph.ShapeSize(in), graph.ShapeSize(c[0])
			if size == n || size <= 1 {
				continue
			}
			w := newElementwiseWalker(c[0], in)
			g := fusedGather{rank: w.rank, shape: w.shape, strides: w.strides[0]}
			x := make([]float64, size)
			for i := range x {
				x[i] = float64(i)
			}
			ref := referenceVisits(c[0], [][]int{in})
			for b := range n {
				dst := make([]float64, min(7, n-b))
				gatherBlock(&g, dst, x, b, nil)
				for i, v := range dst {
					if want := ref[b+i][1]; int(v) != want {
						t.Fatalf("%v from %v, block at %d: element %d reads %v, want %d", c[0], in, b, b+i, v, want)
					}
				}
			}
			// Blocks one after another, each carrying on from where the
			// last stopped (the cursor), from every start and of lengths
			// that end runs of the last axis early, late and on time.
			for _, l := range []int{1, 2, 3, 7, 16} {
				for b0 := range min(n, 9) {
					cur := gatherCursor{next: -1}
					for b := b0; b < n; b += l {
						dst := make([]float64, min(l, n-b))
						gatherBlock(&g, dst, x, b, &cur)
						for i, v := range dst {
							if want := ref[b+i][1]; int(v) != want {
								t.Fatalf("%v from %v, blocks of %d from %d, block at %d (cursor carried): element %d reads %v, want %d", c[0], in, l, b0, b, b+i, v, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestReductionInnerOneLayouts checks reductions of tensors whose last
// axis has extent 1 (rows of one element, which their walker collapses)
// against folds done by hand, one element after another in memory order,
// bit for bit: Sum and SumTo from +0, Max from −Inf, ±0 and NaN included.
func TestReductionInnerOneLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 4))
	cases := []struct {
		shape []int
		axes  []int
	}{
		{[]int{64, 64, 1}, []int{1}},
		{[]int{5, 7, 1}, []int{0}},
		{[]int{3, 1, 5, 1}, []int{2}},
		{[]int{4, 6, 1}, []int{0, 1}},
		{[]int{9, 3, 1}, []int{2}},
		{[]int{7, 1}, []int{0}},
		{[]int{2, 3, 1, 5, 1}, []int{1, 3}},
	}
	for _, dtype := range dtypes {
		for _, c := range cases {
			g := graph.New()
			x := g.Input("x", dtype, c.shape...)
			xt := dense(t, dtype, c.shape, mixedSpecial(r, graph.ShapeSize(c.shape))...)
			xs := graph.Float64s(xt)
			keep := slices.Clone(c.shape)
			for _, a := range c.axes {
				keep[a] = 1
			}
			feeds := map[*graph.Node]*tensor.Dense{x: xt}
			for _, k := range []struct {
				name string
				node *graph.Node
				fold func(acc, v float64) float64
				init float64
			}{
				{"Sum", Sum(x, c.axes...), func(acc, v float64) float64 { return acc + v }, 0},
				{"SumTo", SumTo(x, keep...), func(acc, v float64) float64 { return acc + v }, 0},
				{"Max", Max(x, c.axes...), func(acc, v float64) float64 { return maxNaN(acc, v) }, math.Inf(-1)},
			} {
				want := make([]float64, graph.ShapeSize(keep))
				for i := range want {
					want[i] = k.init
				}
				for _, v := range referenceVisits(c.shape, [][]int{keep}) {
					want[v[1]] = roundTo(dtype, k.fold(want[v[1]], xs[v[0]]))
				}
				got := graph.Float64s(eval(t, k.node, feeds))
				for i := range want {
					if !sameFloat(got[i], want[i]) {
						t.Fatalf("%v %s %v over %v: element %d is %v, want %v", dtype, k.name, c.shape, c.axes, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// roundTo rounds v to dtype, as a kernel computing in it stores it.
func roundTo(dtype tensor.Dtype, v float64) float64 {
	if dtype == graph.Float32 {
		return float64(float32(v))
	}
	return v
}

// TestTransposeLayouts checks Transpose, on shapes large enough for its
// tiled copy (odd sides, partial tiles) and small ones, against the
// permutation done by index arithmetic.
func TestTransposeLayouts(t *testing.T) {
	cases := []struct{ shape, perm []int }{
		{[]int{9, 13}, []int{1, 0}},
		{[]int{64, 64}, []int{1, 0}},
		{[]int{3, 17, 10}, []int{0, 2, 1}},
		{[]int{17, 3, 10}, []int{2, 1, 0}},
		{[]int{8, 8, 9}, []int{1, 2, 0}},
		{[]int{5, 8, 16, 2}, []int{3, 2, 0, 1}},
		{[]int{4, 7}, []int{1, 0}},
		{[]int{1, 12, 1, 9}, []int{3, 1, 2, 0}},
		// The last axis kept: runs of 16 and 64, shorter than shortCopy,
		// and attention's head permutations.
		{[]int{6, 10, 16}, []int{1, 0, 2}},
		{[]int{4, 9, 64}, []int{1, 0, 2}},
		{[]int{5, 7, 3}, []int{1, 0, 2}},
		{[]int{2, 5, 3, 16}, []int{0, 2, 1, 3}},
		{[]int{3, 2, 4, 5, 6}, []int{2, 0, 3, 1, 4}},
		// Axes that stay together: (S, B·H, D) to (B·H, D, S).
		{[]int{16, 12, 16}, []int{1, 2, 0}},
		{[]int{3, 4, 5, 2}, []int{2, 3, 0, 1}},
		// Short output rows: transposeBlocks' bands, the last one partial
		// and ending in fewer than four rows, columns not in fours.
		{[]int{16, 1030}, []int{1, 0}},
		{[]int{10, 601}, []int{1, 0}},
	}
	r := rand.New(rand.NewPCG(30, 5))
	for _, dtype := range dtypes {
		for _, c := range cases {
			xt := dense(t, dtype, c.shape, mixedSpecial(r, graph.ShapeSize(c.shape))...)
			xs := graph.Float64s(xt)
			g := graph.New()
			x := g.Input("x", dtype, c.shape...)
			got := graph.Float64s(eval(t, Transpose(x, c.perm...), map[*graph.Node]*tensor.Dense{x: xt}))
			outShape := make([]int, len(c.perm))
			for i, p := range c.perm {
				outShape[i] = c.shape[p]
			}
			idx := make([]int, len(outShape))
			for e := range got {
				rem := e
				for a := len(outShape) - 1; a >= 0; a-- {
					idx[a] = rem % outShape[a]
					rem /= outShape[a]
				}
				off, stride := 0, 1
				for a := len(c.shape) - 1; a >= 0; a-- {
					off += idx[slices.Index(c.perm, a)] * stride
					stride *= c.shape[a]
				}
				if !sameFloat(got[e], xs[off]) {
					t.Fatalf("%v Transpose %v by %v: element %d is %v, want %v", dtype, c.shape, c.perm, e, got[e], xs[off])
				}
			}
		}
	}
}

// TestTransposeWalker checks that Transpose's walk merges the axes that
// stay together and drops size-1 ones: attention's (S, B·H, D) to
// (B·H, D, S) is one matrix's transpose, and (S, B·H, D) to (B·H, S, D)
// runs of D along two axes.
func TestTransposeWalker(t *testing.T) {
	cases := []struct {
		shape, perm, walked, strides []int
	}{
		{[]int{16, 256, 16}, []int{1, 2, 0}, []int{4096, 16}, []int{1, 4096}},
		{[]int{16, 256, 16}, []int{1, 0, 2}, []int{256, 16, 16}, []int{16, 4096, 1}},
		{[]int{2, 16, 4, 16}, []int{0, 2, 1, 3}, []int{2, 4, 16, 16}, []int{1024, 16, 64, 1}},
		{[]int{3, 1, 5}, []int{2, 1, 0}, []int{5, 3}, []int{1, 5}},
		{[]int{4, 6}, []int{0, 1}, []int{24}, []int{1}},
	}
	for _, c := range cases {
		w := transposeWalker(c.shape, c.perm)
		if !slices.Equal(w.shape[:w.rank], c.walked) || !slices.Equal(w.strides[0][:w.rank], c.strides) ||
			w.inner[0] != c.strides[len(c.strides)-1] {
			t.Errorf("Transpose %v by %v walks %v with strides %v (inner %d), want %v with %v",
				c.shape, c.perm, w.shape[:w.rank], w.strides[0][:w.rank], w.inner[0], c.walked, c.strides)
		}
	}
}

// TestSliceShortRuns checks Slice where each copied run is shorter than
// shortCopy (every other element of the last axis, say) and where it is
// longer, against the slice taken by index arithmetic.
func TestSliceShortRuns(t *testing.T) {
	cases := []struct {
		shape            []int
		axis, start, end int
	}{
		{[]int{7, 9, 2}, 2, 0, 1},
		{[]int{7, 9, 2}, 2, 1, 2},
		{[]int{5, 11}, 1, 3, 10},
		{[]int{3, 4, 20}, 2, 2, 19},
		{[]int{6, 5, 3}, 1, 1, 4},
	}
	r := rand.New(rand.NewPCG(30, 6))
	for _, c := range cases {
		xt := dense(t, graph.Float64, c.shape, mixedSpecial(r, graph.ShapeSize(c.shape))...)
		xs := graph.Float64s(xt)
		g := graph.New()
		x := g.Input("x", graph.Float64, c.shape...)
		got := graph.Float64s(eval(t, Slice(x, c.axis, c.start, c.end), map[*graph.Node]*tensor.Dense{x: xt}))
		outer, dim, inner := axisSpan(c.shape, c.axis)
		n := c.end - c.start
		for o := range outer {
			for i := range n {
				for k := range inner {
					e, src := (o*n+i)*inner+k, (o*dim+c.start+i)*inner+k
					if !sameFloat(got[e], xs[src]) {
						t.Fatalf("Slice %v axis %d [%d:%d]: element %d is %v, want %v", c.shape, c.axis, c.start, c.end, e, got[e], xs[src])
					}
				}
			}
		}
	}
}

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
// names.
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
				gatherBlock(&g, dst, x, b)
				for i, v := range dst {
					if want := ref[b+i][1]; int(v) != want {
						t.Fatalf("%v from %v, block at %d: element %d reads %v, want %d", c[0], in, b, b+i, v, want)
					}
				}
			}
		}
	}
}

package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// SumTo's sums over leading axes onto rows (a bias's gradient: (3, 5,
// 70) to (70), (2, 3, 4, 16) to (1, 3, 1, 16)) add each input row to its
// output row one after another, in memory order: the bits of a plain
// loop, in both dtypes. The rows onto one output row run as products of
// ones (rowRun): runs longer than one (150 rows of 64, 67 of 2), cut
// between output rows ((3, 70, 13) to (3, 1, 13), 13 columns leaving a
// tail after the vector lanes), over several leading axes ((4, 33, 9) to
// (9), (3, 1, 70) to (70)), and rows of one element, with infinities, NaN
// and signed zeros among the values.
func TestSumToAddsRowsInOrder(t *testing.T) {
	for _, dtype := range dtypes {
		for ci, c := range []struct{ in, out []int }{
			{[]int{3, 5, 70}, []int{70}}, {[]int{2, 3, 4, 16}, []int{1, 3, 1, 16}},
			{[]int{150, 64}, []int{64}}, {[]int{67, 2}, []int{2}}, {[]int{3, 70, 13}, []int{3, 1, 13}},
			{[]int{9, 1}, []int{1}}, {[]int{5, 7}, []int{1, 7}}, {[]int{3, 1, 70}, []int{70}}, {[]int{1, 4, 16}, []int{16}}, {[]int{4, 33, 9}, []int{9}},
		} {
			rng := rand.New(rand.NewPCG(2, 2))
			size := 1
			for _, d := range c.in {
				size *= d
			}
			xs := make([]float64, size)
			for i := range xs {
				xs[i] = rng.NormFloat64() * 100
			}
			if ci >= 2 { // special values in the runs
				for i, v := range []float64{math.Inf(1), math.Copysign(0, -1), 0, math.Inf(-1), math.NaN()} {
					xs[(i*37+ci)%size] = v
				}
			}
			g := graph.New()
			x := g.Input("x", dtype, c.in...)
			xd := dense(t, dtype, c.in, xs...)
			got := graph.Float64s(eval(t, SumTo(x, c.out...), map[*graph.Node]*tensor.Dense{x: xd}))
			// The plain loop, in the dtype: element i of x adds to the
			// output element its row's position maps to.
			want := graph.NewDense(dtype, len(got))
			w32, w64, x32, x64 := want.Float32s, want.Float64s, xd.Float32s, xd.Float64s
			for i := range size {
				o := outIndex(i, c.in, c.out)
				if dtype == graph.Float32 {
					w32()[o] += x32()[i]
				} else {
					w64()[o] += x64()[i]
				}
			}
			for i, v := range graph.Float64s(want) {
				if math.Float64bits(v) != math.Float64bits(got[i]) {
					t.Fatalf("%v %v→%v: element %d is %v, the loop gives %v", dtype, c.in, c.out, i, got[i], v)
				}
			}
		}
	}
}

// outIndex maps element i of a tensor of shape in to the element of the
// shape out (in's shape with some axes 1, or its trailing axes) it sums
// into.
func outIndex(i int, in, out []int) int {
	o, stride := 0, 1
	for a := len(in) - 1; a >= 0; a-- {
		k := i % in[a]
		i /= in[a]
		if b := a - (len(in) - len(out)); b >= 0 && out[b] != 1 {
			o += k * stride
			stride *= out[b]
		}
	}
	return o
}

// SumTo's sums along the last axis (a layer norm's, (7, 5, 13) to (7, 5,
// 1); and onto fewer elements, (7, 5, 13) to (7, 1, 1) and (2, 3, 13) to
// (1, 3, 1), whose output elements gather rows that are not next to each
// other) add each row with four accumulators (sumFloats) and the rows'
// sums onto their output element in memory order, four rows at a time
// on amd64: the bits of that loop written out, in both dtypes, with row
// counts that leave one to three rows after the last four; and every row
// onto one element ((6, 13) to (1, 1), (3, 5, 13) to (1, 1, 1)).
func TestSumToRowsGivesTheLoopBits(t *testing.T) {
	for _, dtype := range dtypes {
		for _, c := range []struct{ in, out []int }{
			{[]int{7, 5, 13}, []int{7, 5, 1}}, {[]int{7, 5, 13}, []int{7, 1, 1}},
			{[]int{2, 3, 13}, []int{1, 3, 1}}, {[]int{3, 64}, []int{3, 1}}, {[]int{9, 3}, []int{9, 1}},
			{[]int{6, 13}, []int{1, 1}}, {[]int{3, 5, 13}, []int{1, 1, 1}},
		} {
			rng := rand.New(rand.NewPCG(3, 3))
			n := c.in[len(c.in)-1]
			size := 1
			for _, d := range c.in {
				size *= d
			}
			xs := make([]float64, size)
			for i := range xs {
				xs[i] = rng.NormFloat64() * 100
			}
			g := graph.New()
			x := g.Input("x", dtype, c.in...)
			xd := dense(t, dtype, c.in, xs...)
			got := graph.Float64s(eval(t, SumTo(x, c.out...), map[*graph.Node]*tensor.Dense{x: xd}))
			want := graph.NewDense(dtype, len(got))
			for r := 0; r < size; r += n {
				o := outIndex(r, c.in, c.out)
				if dtype == graph.Float32 {
					want.Float32s()[o] += loopSum(xd.Float32s()[r : r+n])
				} else {
					want.Float64s()[o] += loopSum(xd.Float64s()[r : r+n])
				}
			}
			for i, v := range graph.Float64s(want) {
				if math.Float64bits(v) != math.Float64bits(got[i]) {
					t.Fatalf("%v %v→%v: element %d is %v, the loop gives %v", dtype, c.in, c.out, i, got[i], v)
				}
			}
		}
	}
}

// loopSum adds xs with four accumulators, element i to accumulator i%4
// (the rest to the first), then (a0+a1)+(a2+a3).
func loopSum[T float](xs []T) T {
	var a [4]T
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		for j := range a {
			a[j] += xs[i+j]
		}
	}
	for ; i < len(xs); i++ {
		a[0] += xs[i]
	}
	return (a[0] + a[1]) + (a[2] + a[3])
}

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
// loop, in both dtypes.
func TestSumToAddsRowsInOrder(t *testing.T) {
	for _, dtype := range dtypes {
		for _, c := range []struct{ in, out []int }{{[]int{3, 5, 70}, []int{70}}, {[]int{2, 3, 4, 16}, []int{1, 3, 1, 16}}} {
			rng := rand.New(rand.NewPCG(2, 2))
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

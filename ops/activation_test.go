package ops

import (
	"math"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// The activations against their definitions, written independently of
// the kernels (Φ through Erfc, the sigmoid unguarded), over both tails.
func TestActivationsAgreeWithDefinitions(t *testing.T) {
	xs := []float64{-40, -8, -3.5, -1, -0.25, 0, 1e-3, 0.7, 2, 5.5, 9, 40}
	for _, c := range []struct {
		name  string
		build func(*graph.Node) *graph.Node
		f     func(x float64) float64
	}{
		{"Erf", Erf, math.Erf},
		{"GELU", func(x *graph.Node) *graph.Node { return GELU(x, false) },
			func(x float64) float64 { return x * math.Erfc(-x/math.Sqrt2) / 2 }},
		{"GELU tanh", func(x *graph.Node) *graph.Node { return GELU(x, true) },
			func(x float64) float64 {
				return x / 2 * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*math.Pow(x, 3))))
			}},
		{"SiLU", SiLU, func(x float64) float64 { return x / (1 + math.Exp(-x)) }},
	} {
		want := make([]float64, len(xs))
		for i, x := range xs {
			want[i] = c.f(x)
		}
		for _, dtype := range dtypes {
			g := graph.New()
			x := g.Input("x", dtype, len(xs))
			got := eval(t, c.build(x), map[*graph.Node]*tensor.Dense{x: dense(t, dtype, []int{len(xs)}, xs...)})
			t.Run(c.name+"/"+dtype.String(), func(t *testing.T) { assertValues(t, got, []int{len(xs)}, want...) })
		}
	}
}

func TestFlattenShapes(t *testing.T) {
	for _, c := range []struct {
		in    []int
		start int
		want  []int
	}{
		{[]int{2, 3, 4, 5}, 1, []int{2, 60}},
		{[]int{2, 3, 4, 5}, 0, []int{120}},
		{[]int{2, 3, 4, 5}, -2, []int{2, 3, 20}},
		{[]int{2, 3, 4, 5}, 3, []int{2, 3, 4, 5}},
		{[]int{7}, -1, []int{7}},
		{nil, 0, []int{1}},
	} {
		g := graph.New()
		y := Flatten(g.Input("x", graph.Float64, c.in...), c.start)
		if err := g.Err(); err != nil || !slices.Equal(y.Shape(), c.want) {
			t.Errorf("Flatten(%v, %d): got %v (%v), want %v", c.in, c.start, y.Shape(), err, c.want)
		}
	}
}

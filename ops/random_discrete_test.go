package ops

import (
	"math"
	"math/bits"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/stattest"
)

// RandomInt's element i is low + ⌊x·(high−low)/2⁶⁴⌋ for x the 64 bits of
// its two words; 10⁵ draws on [−3, 5) fall in the range with a χ² below
// 24.32 (the 0.001 quantile, 7 degrees of freedom), in every dtype.
func TestRandomInt(t *testing.T) {
	s := Stream{Seed: 77, ID: 3}
	g := graph.New()
	step := g.Scalar(9, graph.Float64)
	first := graph.Int64s(eval(t, RandomInt(step, s, -1000, 1<<40, graph.Int64, 3), nil))
	for i, v := range first {
		w := philox4x32([4]uint32{uint32(i / 2), 9, 0, 3}, [2]uint32{77, 0})
		hi, _ := bits.Mul64(uint64(w[2*(i%2)])<<32|uint64(w[2*(i%2)+1]), 1<<40+1000)
		if want := -1000 + int64(hi); v != want {
			t.Errorf("element %d: got %d, want %d", i, v, want)
		}
	}
	const n = 100_000
	for _, dtype := range []tensor.Dtype{graph.Int32, graph.Int64, graph.Float32, graph.Float64} {
		vals := graph.Float64s(eval(t, RandomInt(step, s, -3, 5, dtype, n), nil))
		counts := make([]float64, 8)
		for i, v := range vals {
			if v != math.Trunc(v) || v < -3 || v >= 5 {
				t.Fatalf("%v element %d: %v is not an integer in [-3, 5)", dtype, i, v)
			}
			counts[int(v)+3]++
		}
		want := []float64{n / 8, n / 8, n / 8, n / 8, n / 8, n / 8, n / 8, n / 8}
		x := stattest.ChiSquared(counts, want)
		t.Logf("%v: χ² = %.2f, p = %.3f", dtype, x, stattest.ChiSquaredP(x, len(counts)-1))
		if x > 24.32 {
			t.Errorf("%v: χ² = %v over 24.32 (counts %v)", dtype, x, counts)
		}
	}
	for _, c := range []struct {
		build func(g *graph.Graph)
		want  string
	}{
		{func(g *graph.Graph) { RandomInt(g.Scalar(0, graph.Float64), s, 2, 2, graph.Int64, 3) }, "RandomInt: the range [2, 2) is empty"},
		{func(g *graph.Graph) { RandomInt(g.Scalar(0, graph.Float64), s, 0, 1<<25, graph.Float32, 3) },
			"RandomInt: the range [0, 33554432) holds integers that float32 does not hold exactly (beyond ±16777216)"},
		{func(g *graph.Graph) { RandomInt(g.Scalar(0, graph.Float64), s, 0, 3, tensor.Bool, 3) },
			"RandomInt: dtype bool is not supported (int32, int64, float32 or float64)"},
	} {
		g := graph.New()
		c.build(g)
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// RandomCategorical draws each class of 10⁵ rows of logits with
// probability softmax(logits): χ² below 16.27 (0.001 quantile, 3 degrees
// of freedom); a class of logit −∞ is never drawn, one class always is,
// and logits without classes are an error.
func TestRandomCategorical(t *testing.T) {
	const n = 100_000
	logits := []float64{0.1, -2, 1.3, 0.4}
	vals := make([]float64, 0, 4*n)
	for range n {
		vals = append(vals, logits...)
	}
	for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
		g := graph.New()
		step := g.Scalar(1, graph.Float64)
		draws := graph.Float64s(eval(t, RandomCategorical(step, Stream{Seed: 4}, g.Const(dense(t, dtype, []int{n, 4}, vals...))), nil))
		counts := make([]float64, 4)
		for _, c := range draws {
			counts[int(c)]++
		}
		z := 0.0
		for _, l := range logits {
			z += math.Exp(l)
		}
		want := make([]float64, 4)
		for k, l := range logits {
			want[k] = n * math.Exp(l) / z
		}
		x := stattest.ChiSquared(counts, want)
		t.Logf("%v: χ² = %.2f, p = %.3f", dtype, x, stattest.ChiSquaredP(x, len(counts)-1))
		if x > 16.27 {
			t.Errorf("%v: χ² = %v over 16.27 (counts %v)", dtype, x, counts)
		}
	}
	g := graph.New()
	step := g.Scalar(1, graph.Float64)
	masked := graph.Float64s(eval(t, RandomCategorical(step, Stream{}, g.Const(dense(t, graph.Float64, []int{1000, 2}, repeatValues([]float64{math.Inf(-1), 0}, 1000)...))), nil))
	one := graph.Float64s(eval(t, RandomCategorical(step, Stream{}, g.Const(dense(t, graph.Float64, []int{5, 1}, 3, 1, 4, 1, 5))), nil))
	for i, c := range masked {
		if c != 1 {
			t.Fatalf("row %d: drew class %v of logit -Inf", i, c)
		}
	}
	for i, c := range one {
		if c != 0 {
			t.Fatalf("one class, row %d: drew %v", i, c)
		}
	}
	RandomCategorical(step, Stream{}, g.Scalar(1, graph.Float64))
	if err := g.Err(); err == nil || !strings.Contains(err.Error(), "RandomCategorical: logits float64() have no classes") {
		t.Errorf("scalar logits: got %v", err)
	}
}

func repeatValues(x []float64, n int) []float64 {
	var out []float64
	for range n {
		out = append(out, x...)
	}
	return out
}

// RandomPermutation gives a permutation in every dtype; over 24 000 steps
// the 24 permutations of four indices each come up with a χ² below 49.73
// (the 0.001 quantile, 23 degrees of freedom); a length that the dtype
// cannot index is a build error.
func TestRandomPermutation(t *testing.T) {
	s := Stream{Seed: 5, ID: 9}
	for _, dtype := range []tensor.Dtype{graph.Int32, graph.Int64, graph.Float32, graph.Float64} {
		out := graph.NewDense(dtype, 1000)
		if err := (randomPermutationOp{s: s, n: 1000, dtype: dtype}).Forward(out, []*tensor.Dense{graph.NewDense(graph.Float64)}); err != nil {
			t.Fatal(err)
		}
		seen := make([]bool, 1000)
		for _, v := range graph.Float64s(out) {
			if v != math.Trunc(v) || v < 0 || v >= 1000 || seen[int(v)] {
				t.Fatalf("%v: %v is not a new index", dtype, v)
			}
			seen[int(v)] = true
		}
	}
	const steps = 24_000
	counts := map[[4]int]float64{}
	step, out := graph.NewDense(graph.Float64), graph.NewDense(graph.Int64, 4)
	for k := range steps {
		graph.SetFloat(step, 0, float64(k))
		if err := (randomPermutationOp{s: s, n: 4, dtype: graph.Int64}).Forward(out, []*tensor.Dense{step}); err != nil {
			t.Fatal(err)
		}
		v := graph.Int64s(out)
		counts[[4]int{int(v[0]), int(v[1]), int(v[2]), int(v[3])}]++
	}
	if len(counts) != 24 {
		t.Fatalf("%d distinct permutations of 4, want 24", len(counts))
	}
	var got, want []float64
	for _, c := range counts {
		got, want = append(got, c), append(want, steps/24)
	}
	x := stattest.ChiSquared(got, want)
	t.Logf("χ² = %.2f, p = %.3f", x, stattest.ChiSquaredP(x, len(got)-1))
	if x > 49.73 {
		t.Errorf("χ² = %v over 49.73", x)
	}
	g := graph.New()
	if n := RandomPermutation(g.Scalar(0, graph.Float64), s, 1<<25, graph.Float32); n.Err() == nil ||
		!strings.Contains(n.Err().Error(), "length 33554432: float32 does not hold its indices exactly (beyond 16777216)") {
		t.Errorf("a float32 permutation of 2²⁵: got %v", n.Err())
	}
}

// TestRandomCategoricalWithoutDistribution: a row with a NaN or +Inf
// logit, or whose logits are all -Inf, has no softmax (torch refuses to
// sample it) and draws NaN, in both dtypes; the draws were class 0. Rows
// beside them draw as before: the one class of finite logit.
func TestRandomCategoricalWithoutDistribution(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	logits := []float64{
		nan, 1, 2,
		0, 0, inf,
		-inf, -inf, -inf,
		1, nan, -inf,
		-inf, 5, -inf, // only class 1 has weight
		-inf, -inf, 7, // only class 2
	}
	for _, dtype := range dtypes {
		g := graph.New()
		step := g.Scalar(3, graph.Float64)
		got := graph.Float64s(eval(t, RandomCategorical(step, Stream{Seed: 9}, g.Const(dense(t, dtype, []int{6, 3}, logits...))), nil))
		for r, want := range []float64{nan, nan, nan, nan, 1, 2} {
			if got[r] != want && !(math.IsNaN(want) && math.IsNaN(got[r])) {
				t.Errorf("%v: row %d (logits %v): drew %v, want %v", dtype, r, logits[3*r:3*r+3], got[r], want)
			}
		}
	}
}

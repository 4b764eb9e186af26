package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// referenceAttention is attention built from basic ops, without Where,
// Softmax or infinities: weights exp(s)·keep / Σ exp(s)·keep for scores
// s = q·kᵀ/√d, keep a 0/1 mask (the causal part included).
func referenceAttention(q, k, v, keep *graph.Node) *graph.Node {
	s := ops.Scale(ops.MatMul(q, ops.Transpose(k, 0, 2, 1)), 1/math.Sqrt(float64(q.Shape()[2])))
	e := ops.Mul(ops.Exp(s), keep)
	return ops.MatMul(ops.Div(e, ops.SumKeepDims(e, -1)), v)
}

// causalKeep is keep (l, s) with the keys after each query dropped too.
func causalKeep(keep []float64, l, s int) []float64 {
	out := make([]float64, len(keep))
	for i := range l {
		for j := range min(i+1, s) {
			out[i*s+j] = keep[i*s+j]
		}
	}
	return out
}

// ScaledDotProductAttention equals the basic-ops reference to 1e-12 in
// its value and in its first and second derivatives with respect to q, k
// and v, for a keep mask with and without causality, a padding mask and
// causality alone.
func TestAttentionMatchesBasicOps(t *testing.T) {
	const b, l, s, d = 2, 3, 4, 2
	ones := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	keepLS := []float64{1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1}
	padding := []float64{1, 0, 1, 1, 1, 1, 0, 1} // (b, 1, s)
	for _, c := range []struct {
		name      string
		keep      []float64 // passed to ScaledDotProductAttention; nil for none
		shape     []int
		causal    bool
		reference []float64 // the reference's mask, broadcast like keep
	}{
		{"keep", keepLS, []int{l, s}, false, keepLS},
		{"keep and causal", keepLS, []int{l, s}, true, causalKeep(keepLS, l, s)},
		{"padding", padding, []int{b, 1, s}, false, padding},
		{"causal", nil, []int{l, s}, true, causalKeep(ones, l, s)},
	} {
		build := func(reference bool) [][]float64 {
			g := graph.New()
			q, k, v := g.Input("q", graph.Float64, b, l, d), g.Input("k", graph.Float64, b, s, d), g.Input("v", graph.Float64, b, s, d)
			var y *graph.Node
			if reference {
				y = referenceAttention(q, k, v, g.Const(dense(t, c.reference, c.shape...)))
			} else {
				var keep *graph.Node
				if c.keep != nil {
					keep = g.Const(dense(t, c.keep, c.shape...))
				}
				y = ScaledDotProductAttention(q, k, v, keep, c.causal)
			}
			first, err := compile.Grad(weighted(y), q, k, v)
			require.NoError(t, err)
			var dot *graph.Node // Σ first·w', whose gradient is the Hessian times w'
			for i, gr := range first {
				term := ops.Sum(ops.Mul(gr, g.Const(sines(t, float64(i), 1, gr.Shape()...))))
				if dot == nil {
					dot = term
				} else {
					dot = ops.Add(dot, term)
				}
			}
			second, err := compile.Grad(dot, q, k, v)
			require.NoError(t, err)
			out, err := vm.Eval(vm.Feeds{q: sines(t, 0.1, 2, b, l, d), k: sines(t, 0.7, 2, b, s, d), v: sines(t, 1.3, 1, b, s, d)},
				append(append([]*graph.Node{y}, first...), second...)...)
			require.NoError(t, err)
			vals := make([][]float64, len(out))
			for i, o := range out {
				vals[i] = graph.Float64s(o)
			}
			return vals
		}
		got, want := build(false), build(true)
		for i := range want {
			assertClose(t, c.name+" "+[]string{"y", "dq", "dk", "dv", "d²q", "d²k", "d²v"}[i], got[i], want[i], 1e-12)
		}
	}
}

// With the identity as values, attention's output is its weights: masked
// positions get exactly zero weight and exactly zero gradient with respect
// to the queries and keys, the kept weights of each query sum to 1, and
// scores far beyond exp's range stay finite.
func TestAttentionMaskedWeightsAreZero(t *testing.T) {
	const b, l, s, d = 2, 3, 4, 2
	keepv := []float64{1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1}
	kept := causalKeep(keepv, l, s)
	eye := make([]float64, b*s*s)
	for n := range b {
		for j := range s {
			eye[(n*s+j)*s+j] = 1
		}
	}
	for _, scale := range []float64{1, 300} { // scores up to about 10⁵
		g := graph.New()
		q, k := g.Input("q", graph.Float64, b, l, d), g.Input("k", graph.Float64, b, s, d)
		w := ScaledDotProductAttention(q, k, g.Const(dense(t, eye, b, s, s)), g.Const(dense(t, keepv, l, s)), true)
		feeds := vm.Feeds{q: sines(t, 0.1, scale, b, l, d), k: sines(t, 0.7, scale, b, s, d)}
		out, err := vm.Eval(feeds, w)
		require.NoError(t, err)
		weights := graph.Float64s(out[0])
		for n := range b {
			for i := range l {
				var sum float64
				for j := range s {
					at := (n*l+i)*s + j
					require.False(t, math.IsNaN(weights[at]) || math.IsInf(weights[at], 0), "scale %v: weight %d", scale, at)
					if kept[i*s+j] == 0 {
						require.Zero(t, weights[at], "scale %v: masked weight (%d, %d, %d)", scale, n, i, j)
						requireZeroGradient(t, w, feeds, at, q, k)
					}
					sum += weights[at]
				}
				require.InDelta(t, 1, sum, 1e-12)
			}
		}
	}
}

// requireZeroGradient checks that element at of y has a gradient of
// exactly zero with respect to each of wrt.
func requireZeroGradient(t *testing.T, y *graph.Node, feeds vm.Feeds, at int, wrt ...*graph.Node) {
	t.Helper()
	pick := graph.NewDenseOf(y.Type())
	graph.SetFloat(pick, at, 1)
	grads, err := compile.Grad(ops.Sum(ops.Mul(y, y.Graph().Const(pick))), wrt...)
	require.NoError(t, err)
	out, err := vm.Eval(feeds, grads...)
	require.NoError(t, err)
	for i, o := range out {
		for e, v := range graph.Float64s(o) {
			require.Zero(t, v, "gradient of element %d with respect to %s, element %d", at, wrt[i].Name(), e)
		}
	}
}

// A query that may attend to no key gets NaN, as in PyTorch, and the
// other queries are unaffected: their output equals attention over their
// row of the mask alone.
func TestAttentionQueryWithNoKeys(t *testing.T) {
	g := graph.New()
	q, k, v := g.Input("q", graph.Float64, 1, 2, 2), g.Input("k", graph.Float64, 1, 3, 2), g.Input("v", graph.Float64, 1, 3, 2)
	both := ScaledDotProductAttention(q, k, v, g.Const(dense(t, []float64{0, 0, 0, 1, 0, 1}, 2, 3)), false)
	alone := ScaledDotProductAttention(ops.Slice(q, 1, 1, 2), k, v, g.Const(dense(t, []float64{1, 0, 1}, 1, 3)), false)
	out, err := vm.Eval(vm.Feeds{q: sines(t, 0.1, 1, 1, 2, 2), k: sines(t, 0.2, 1, 1, 3, 2), v: sines(t, 0.3, 1, 1, 3, 2)}, both, alone)
	require.NoError(t, err)
	y := graph.Float64s(out[0])
	require.True(t, math.IsNaN(y[0]) && math.IsNaN(y[1]), "the first query attends to nothing: %v", y)
	require.Equal(t, graph.Float64s(out[1]), y[2:])
}

package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// valuesInit fills a parameter with the given values, in order.
func valuesInit(vals ...float64) Init {
	return func(_ *rand.Rand, t *tensor.Dense, _, _ int) error {
		for i, v := range vals {
			graph.SetFloat(t, i, v)
		}
		return nil
	}
}

// weighted is sum(y ⊙ c) for a fixed pseudo-random c, a scalar whose
// gradient exercises every element of y differently.
func weighted(y *graph.Node) *graph.Node {
	rng := rand.New(rand.NewPCG(7, 7))
	c := graph.NewDenseOf(y.Type())
	for i := range c.DataSize() {
		graph.SetFloat(c, i, rng.Float64()*2-1)
	}
	return ops.Sum(ops.Mul(y, y.Graph().Const(c)))
}

func TestLinearForward(t *testing.T) {
	g := graph.New()
	// W (2,3) = [[1,2,3],[4,5,6]], b = [0.5,-1].
	l := NewLinear(g, "fc", 3, 2, true, WithInit(valuesInit(1, 2, 3, 4, 5, 6)), WithBiasInit(valuesInit(0.5, -1)))
	x := g.Input("x", graph.Float64, 2, 3)
	y := l.Forward(x)
	m := machine(t, []*graph.Node{y}, nil)
	require.NoError(t, m.Run(vm.Feeds{x: dense(t, []float64{1, 0, -1, 2, 1, 0}, 2, 3)}))
	// Row [1,0,-1]: 1-3+0.5 = -1.5, 4-6-1 = -3.
	// Row [2,1,0]: 2+2+0.5 = 4.5, 8+5-1 = 12.
	assertClose(t, "Linear", value(t, m, y), []float64{-1.5, -3, 4.5, 12}, 1e-12)

	// The module's gradients are LinearFunction's: checked with its
	// parameters swapped for gradcheck's inputs.
	checkGradients(t, func(in []*graph.Node) *graph.Node {
		l := NewLinear(in[0].Graph(), "fc", 3, 2, true)
		l.Weight, l.Bias = in[1], in[2]
		return weighted(l.Forward(in[0]))
	}, []*tensor.Dense{
		dense(t, []float64{1, 0, -1, 2, 1, 0}, 2, 3),
		dense(t, []float64{1, 2, 3, 4, 5, 6}, 2, 3),
		dense(t, []float64{0.5, -1}, 2),
	})
}

// TestLinearFunctionCost: x (2,3)·W(4,3)ᵀ + b (4) is 2·2·4·3 = 48 flops
// for the product and 8 for the bias; it reads (6+12+4)·8 bytes and writes
// 8·8. Without a bias, 48 flops and (6+12)·8 bytes read.
func TestLinearFunctionCost(t *testing.T) {
	x, w, b := graph.TypeOf(graph.Float64, 2, 3), graph.TypeOf(graph.Float64, 4, 3), graph.TypeOf(graph.Float64, 4)
	y := graph.TypeOf(graph.Float64, 2, 4)
	require.Equal(t, graph.Cost{Flops: 56, BytesRead: 176, BytesWritten: 64}, graph.CostOf(LinearFunction{}, []graph.Type{x, w, b}, y))
	require.Equal(t, graph.Cost{Flops: 48, BytesRead: 144, BytesWritten: 64}, graph.CostOf(LinearFunction{}, []graph.Type{x, w}, y))
}

func TestLayerNormForward(t *testing.T) {
	g := graph.New()
	ln := NewLayerNorm(g, "ln", 3, 1e-5, WithInit(valuesInit(1, 2, 3)), WithBiasInit(valuesInit(0.5, 0, -0.5)))
	x := g.Input("x", graph.Float64, 2, 3)
	y := ln.Forward(x)
	m := machine(t, []*graph.Node{y}, nil)
	require.NoError(t, m.Run(vm.Feeds{x: dense(t, []float64{1, 2, 3, 2, 2, 2}, 2, 3)}))
	// Row [1,2,3]: mean 2, biased variance (1+0+1)/3 = 2/3, so the
	// normalised row is [-1,0,1]/√(2/3+1e-5) = ∓1.2247357; then ×[1,2,3]
	// +[0.5,0,-0.5]. Row [2,2,2] is constant: normalised to 0, leaving the
	// bias.
	s := 1 / math.Sqrt(2.0/3+1e-5)
	want := []float64{-s*1 + 0.5, 0, s*3 - 0.5, 0.5, 0, -0.5}
	assertClose(t, "LayerNorm", value(t, m, y), want, 1e-12)
}

func TestLayerNormGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(mean, std float64, shape ...int) *tensor.Dense {
		v := graph.NewDense(graph.Float64, shape...)
		require.NoError(t, Normal(mean, std)(rng, v, 1, 1))
		return v
	}
	checkGradients(t, func(in []*graph.Node) *graph.Node {
		ln := NewLayerNorm(in[0].Graph(), "ln", 4, 1e-5)
		ln.Weight, ln.Bias = in[1], in[2]
		return weighted(ln.Forward(in[0]))
	}, []*tensor.Dense{draw(0, 2, 3, 4), draw(1, 0.5, 4), draw(0, 0.5, 4)})
}

func TestEmbedding(t *testing.T) {
	g := graph.New()
	e := NewEmbedding(g, "emb", 4, 2, WithInit(valuesInit(0, 1, 2, 3, 4, 5, 6, 7)))
	idx := g.Input("idx", graph.Float64, 2, 2)
	y := e.Forward(idx)
	require.Equal(t, []int{2, 2, 2}, y.Shape())
	m := machine(t, []*graph.Node{y}, nil)
	feeds := vm.Feeds{idx: dense(t, []float64{3, 0, 1, 1}, 2, 2)}
	require.NoError(t, m.Run(feeds))
	// Rows 3, 0, 1, 1 of [[0,1],[2,3],[4,5],[6,7]].
	assertClose(t, "Embedding", value(t, m, y), []float64{6, 7, 0, 1, 2, 3, 2, 3}, 0)

	checkGradients(t, func(in []*graph.Node) *graph.Node {
		e := NewEmbedding(in[0].Graph(), "emb", 4, 2)
		e.Weight = in[1]
		return weighted(e.Forward(in[0]))
	}, []*tensor.Dense{feeds[idx], dense(t, []float64{0, 1, 2, 3, 4, 5, 6, 7}, 4, 2)}, 1)

	err := m.Run(vm.Feeds{idx: dense(t, []float64{0, 4, 1, 1}, 2, 2)})
	require.ErrorContains(t, err, "index 4 at position (0,1) of the indices is not a row index in [0,4)")
}

func TestDropoutEvalIsIdentity(t *testing.T) {
	g := graph.New()
	d := NewDropout(g, "drop", 0.5)
	x := g.Input("x", graph.Float64, 3)
	SetTraining(d, false)
	require.Same(t, x, d.Forward(x))
	require.Empty(t, d.StateUpdates())
	require.Same(t, x, NewDropout(g, "none", 0).Forward(x), "p = 0 drops nothing")
}

func TestDropoutTraining(t *testing.T) {
	const n, p = 100, 0.3
	g := graph.New()
	d := NewDropout(g, "drop", p, WithRand(rand.New(rand.NewPCG(3, 3))))
	x := g.Input("x", graph.Float64, n, n)
	y := d.Forward(x)
	y2 := d.Forward(x) // a second use in the same step draws another mask
	updates := StateUpdates(d)
	require.Len(t, updates, 1)
	m := machine(t, []*graph.Node{y, y2}, updates)

	ones := graph.NewDense(graph.Float64, n, n)
	require.NoError(t, Constant(1)(nil, ones, 1, 1))
	feeds := vm.Feeds{x: ones}
	require.NoError(t, m.Run(feeds))
	first := value(t, m, y)
	zeros := 0
	for i, v := range first {
		if v == 0 {
			zeros++
		} else if math.Abs(v-1/(1-p)) > 1e-12 {
			t.Fatalf("element %d: got %v, want 0 or 1/(1-p) = %v", i, v, 1/(1-p))
		}
	}
	// 10,000 draws: the fraction dropped has standard deviation
	// √(0.3·0.7/10⁴) ≈ 0.0046, so 0.3 ± 0.02 is more than four of them.
	require.InDelta(t, p, float64(zeros)/(n*n), 0.02)
	require.NotEqual(t, first, value(t, m, y2))

	step, err := m.Get(d.Step)
	require.NoError(t, err)
	require.Equal(t, 1.0, graph.Float(step, 0), "each run advances the step")
	require.NoError(t, m.Run(feeds))
	require.NotEqual(t, first, value(t, m, y), "the next step draws a fresh mask")

	// The mask is a function of the step: going back replays it.
	require.NoError(t, m.Set(d.Step, graph.NewDense(graph.Float64)))
	require.NoError(t, m.Run(feeds))
	require.Equal(t, first, value(t, m, y))

	allocs := testing.AllocsPerRun(10, func() { _ = m.Run(feeds) })
	require.Zero(t, allocs, "a training run with dropout allocates nothing")
}

func TestDropoutGradient(t *testing.T) {
	g := graph.New()
	d := NewDropout(g, "drop", 0.5)
	x := g.Param("x", graph.NewDense(graph.Float32, 50))
	y := d.Forward(x)
	grads, err := compile.Grad(ops.Sum(y), x)
	require.NoError(t, err)
	m := machine(t, []*graph.Node{y, grads[0]}, d.StateUpdates())
	require.NoError(t, m.Run(nil))
	// d sum(x ⊙ mask)/dx = mask, which is 0 or 2 (x is zero, so y is too).
	mask := value(t, m, grads[0])
	for i, v := range mask {
		require.True(t, v == 0 || v == 2, "element %d: got %v, want 0 or 2", i, v)
	}
	require.Contains(t, mask, 0.0)
	require.Contains(t, mask, 2.0)
	require.Equal(t, make([]float64, 50), value(t, m, y))
}

func TestDropoutAllDropped(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 10)
	d := NewDropout(g, "drop", 1)
	y := d.Forward(x)
	m := machine(t, []*graph.Node{y}, d.StateUpdates())
	in := graph.NewDense(graph.Float64, 10)
	require.NoError(t, Constant(3)(nil, in, 1, 1))
	require.NoError(t, m.Run(vm.Feeds{x: in}))
	require.Equal(t, make([]float64, 10), value(t, m, y))
}

// TestNilModules: a nil module pointer, alone or inside Sequential, is a
// sticky error, not a panic.
func TestNilModules(t *testing.T) {
	var lin *Linear
	var drop *Dropout
	var norm *LayerNorm
	var emb *Embedding
	var seq *Sequential
	var conv *Conv2d
	var bn *BatchNorm
	for _, m := range []Module{lin, drop, norm, emb, seq, conv, bn, NewSequential("s", lin)} {
		g := graph.New()
		x := g.Input("x", graph.Float64, 2, 3)
		var y *graph.Node
		require.NotPanics(t, func() { y = m.Forward(x) }, "%T", m)
		require.ErrorContains(t, y.Err(), "the module is nil", "%T", m)
	}
}

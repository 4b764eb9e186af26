package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// pick draws indices as often as softmax(logits/T) says, computed here
// directly, picks the largest logit at temperature 0, and stays finite for
// logits far beyond exp's range.
func TestPick(t *testing.T) {
	logits := []float64{1, 3, -2, 2.5}
	const temperature, draws = 0.7, 200000
	rng := rand.New(rand.NewPCG(3, 4))
	counts := make([]int, len(logits))
	for range draws {
		counts[pick(logits, temperature, rng)]++
	}
	var z float64
	for _, l := range logits {
		z += math.Exp(l / temperature)
	}
	for i, l := range logits {
		p := math.Exp(l/temperature) / z
		sd := math.Sqrt(p * (1 - p) / draws)
		require.InDelta(t, p, float64(counts[i])/draws, 5*sd+1e-9, "index %d", i)
	}
	require.Equal(t, 1, pick(logits, 0, rng))
	require.Equal(t, 2, pick([]float64{-1e6, 0, 1e6}, 1, rng))
	counts = make([]int, 2)
	for range 1000 {
		counts[pick([]float64{1e300, 1e300}, 1, rng)]++
	}
	require.Greater(t, counts[0], 400)
	require.Greater(t, counts[1], 400)
}

// The logits at position i depend on the characters up to i alone: a
// change at position j leaves positions before j exactly as they were, and
// changes the logits at j.
func TestModelIsCausal(t *testing.T) {
	for _, sinusoidal := range []bool{false, true} {
		const vocab, context = 7, 6
		g := graph.New()
		m, err := NewModel(g, ModelConfig{Vocab: vocab, Context: context, Embed: 8, Heads: 2, Layers: 2, FF: 16,
			Sinusoidal: sinusoidal, DType: graph.Float64}, rand.New(rand.NewPCG(1, 1)))
		require.NoError(t, err)
		x := g.Input("x", tensor.Int64, 1, context)
		logits := m.Forward(x)
		require.NoError(t, g.Err())
		run := func(ids ...int64) []float64 {
			out, err := vm.Eval(vm.Feeds{x: tensor.New(tensor.WithShape(1, context), tensor.WithBacking(ids))}, logits)
			require.NoError(t, err)
			return graph.Float64s(out[0])
		}
		base := run(1, 2, 3, 4, 5, 6)
		for j := range context {
			ids := []int64{1, 2, 3, 4, 5, 6}
			ids[j] = 0
			changed := run(ids...)
			require.Equal(t, base[:j*vocab], changed[:j*vocab], "positions before %d", j)
			require.NotEqual(t, base[j*vocab:(j+1)*vocab], changed[j*vocab:(j+1)*vocab], "position %d", j)
		}
	}
}

// The parameters have GPT-style names, PyTorch's inside the blocks, and
// sinusoidal positions are no parameter.
func TestModelParameterNames(t *testing.T) {
	for _, sinusoidal := range []bool{false, true} {
		m, err := NewModel(graph.New(), ModelConfig{Vocab: 5, Context: 4, Embed: 4, Heads: 2, Layers: 2, FF: 8,
			Sinusoidal: sinusoidal, DType: graph.Float32}, rand.New(rand.NewPCG(1, 1)))
		require.NoError(t, err)
		var names []string
		for _, p := range nn.NamedParameters(m) {
			names = append(names, p.Name)
		}
		block := func(i string) []string {
			return []string{"blocks." + i + ".self_attn.in_proj_weight", "blocks." + i + ".self_attn.in_proj_bias",
				"blocks." + i + ".self_attn.out_proj.weight", "blocks." + i + ".self_attn.out_proj.bias",
				"blocks." + i + ".linear1.weight", "blocks." + i + ".linear1.bias", "blocks." + i + ".linear2.weight", "blocks." + i + ".linear2.bias",
				"blocks." + i + ".norm1.weight", "blocks." + i + ".norm1.bias", "blocks." + i + ".norm2.weight", "blocks." + i + ".norm2.bias"}
		}
		want := []string{"tok_emb.weight"}
		if !sinusoidal {
			want = append(want, "pos_emb.weight")
		}
		want = append(append(append(want, block("0")...), block("1")...), "ln_f.weight", "ln_f.bias", "head.weight", "head.bias")
		require.Equal(t, want, names)
	}
}

// The sinusoidal table at a few places, computed by hand.
func TestSinusoids(t *testing.T) {
	s := graph.Float64s(sinusoids(graph.Float64, 4, 4))
	want := map[[2]int]float64{
		{0, 0}: 0, {0, 1}: 1, {0, 2}: 0, {0, 3}: 1,
		{1, 0}: math.Sin(1), {1, 1}: math.Cos(1),
		{3, 2}: math.Sin(0.03), {3, 3}: math.Cos(0.03), // 3/10000^(2/4)
	}
	for at, v := range want {
		require.InDelta(t, v, s[at[0]*4+at[1]], 1e-15, "position %d, feature %d", at[0], at[1])
	}
}

// bitsPerChar, which runs the windows 64 at a time with a shorter last
// batch, equals the mean of -log₂ softmax over every window's targets,
// computed here from the model's logits on all windows at once.
func TestValidationBitsPerChar(t *testing.T) {
	const vocab, context, chars = 5, 4, 300 // 74 windows: 64 and 10
	rng := rand.New(rand.NewPCG(5, 6))
	text := make([]int64, chars)
	for i := range text {
		text[i] = rng.Int64N(vocab)
	}
	g := graph.New()
	m, err := NewModel(g, ModelConfig{Vocab: vocab, Context: context, Embed: 4, Heads: 1, Layers: 1, FF: 8, DType: graph.Float64}, rng)
	require.NoError(t, err)
	x := g.Input("x", tensor.Int64, 8, context)
	y := g.Input("y", tensor.Int64, 8, context)
	nats := ops.Sum(ops.CrossEntropy(m.Forward(x), ops.Reshape(y, -1)))
	r, err := vm.NewRunner([]*graph.Node{nats}, nil, nil)
	require.NoError(t, err)
	v := validation{r: r, x: x, y: y, nats: nats, text: text, context: context}
	got, err := v.bitsPerChar()
	require.NoError(t, err)

	all, err := newWindows(text, 74, context)
	require.NoError(t, err)
	require.Equal(t, 74, all.count())
	all.sequential(0)
	whole := g.Input("whole", tensor.Int64, 74, context)
	out, err := vm.Eval(vm.Feeds{whole: all.x}, m.Forward(whole))
	require.NoError(t, err)
	logits, targets := graph.Float64s(out[0]), all.y.Int64s()
	var bits float64
	for row, target := range targets {
		var z float64
		for _, l := range logits[row*vocab : (row+1)*vocab] {
			z += math.Exp(l)
		}
		bits -= math.Log2(math.Exp(logits[row*vocab+int(target)]) / z)
	}
	require.InDelta(t, bits/float64(len(targets)), got, 1e-12)
	require.Equal(t, 3, r.Sizes(), "the built 8, then batches of 64 and of 10")
}

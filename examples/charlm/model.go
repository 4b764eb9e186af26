package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
)

// Model is a decoder-only transformer over characters: token embeddings
// plus positions, causal pre-norm TransformerBlocks, a final LayerNorm
// and a linear head giving each position's logits for the next character.
type Model struct {
	TokEmb *nn.Embedding          // (vocab, embed)
	PosEmb *nn.Embedding          // (context, embed); nil with sinusoidal positions
	Blocks []*nn.TransformerBlock // causal
	LnF    *nn.LayerNorm          `nn:"ln_f"`
	Head   *nn.Linear             // embed → vocab
	sines  *graph.Node            // (context, embed) constant, with sinusoidal positions
	shape  struct{ context, embed int }
}

// ModelConfig sizes a Model.
type ModelConfig struct {
	Vocab, Context, Embed, Heads, Layers, FF int
	Dropout                                  float64
	Sinusoidal                               bool         // fixed sinusoidal positions instead of learned ones
	DType                                    tensor.Dtype // of the parameters and activations
}

// NewModel adds a model's parameters to g, initialised from rng. The
// embeddings start normal with deviation 0.02, as GPT-2's; the other
// layers as PyTorch's.
func NewModel(g *graph.Graph, c ModelConfig, rng *rand.Rand) (*Model, error) {
	if c.Vocab <= 0 || c.Context <= 0 || c.Embed <= 0 || c.Heads <= 0 || c.Layers <= 0 || c.FF <= 0 {
		return nil, fmt.Errorf("charlm: model sizes must be positive: %+v", c)
	}
	opts := []nn.Option{nn.WithRand(rng), nn.WithDType(c.DType)}
	emb := append(slices.Clip(opts), nn.WithInit(nn.Normal(0, 0.02)))
	m := &Model{TokEmb: nn.NewEmbedding(g, "tok_emb", c.Vocab, c.Embed, emb...)}
	m.shape.context, m.shape.embed = c.Context, c.Embed
	if c.Sinusoidal {
		m.sines = g.Const(sinusoids(c.DType, c.Context, c.Embed))
	} else {
		m.PosEmb = nn.NewEmbedding(g, "pos_emb", c.Context, c.Embed, emb...)
	}
	for i := range c.Layers {
		m.Blocks = append(m.Blocks, nn.NewTransformerBlock(g, fmt.Sprintf("blocks.%d", i), c.Embed, c.Heads, c.FF, c.Dropout, true, opts...))
	}
	m.LnF = nn.NewLayerNorm(g, "ln_f", c.Embed, 1e-5, opts...)
	m.Head = nn.NewLinear(g, "head", c.Embed, c.Vocab, true, opts...)
	return m, g.Err()
}

// sinusoids is the table of "Attention Is All You Need": position p,
// feature 2i holds sin(p/10000^(2i/embed)) and feature 2i+1 the cosine.
func sinusoids(dtype tensor.Dtype, context, embed int) *tensor.Dense {
	t := graph.NewDense(dtype, context, embed)
	for p := range context {
		for f := range embed {
			angle := float64(p) / math.Pow(10000, float64(f-f%2)/float64(embed))
			v := math.Sin(angle)
			if f%2 == 1 {
				v = math.Cos(angle)
			}
			graph.SetFloat(t, p*embed+f, v)
		}
	}
	return t
}

// Forward maps character indices x (N, context) to logits (N·context,
// vocab): row n·context+i predicts the character after x[n, i].
func (m *Model) Forward(x *graph.Node) *graph.Node {
	if p := graph.Poisoned(x); p != nil {
		return p
	}
	if x.Type().Rank() != 2 || x.Shape()[1] != m.shape.context {
		return x.Graph().Fail(fmt.Errorf("charlm: input %v is not (N, %d)", x.Type(), m.shape.context))
	}
	pos := m.sines
	if m.PosEmb != nil {
		pos = m.PosEmb.Weight
	}
	h := ops.Add(m.TokEmb.Forward(x), pos) // (N, context, embed)
	for _, b := range m.Blocks {
		h = b.Forward(h)
	}
	return m.Head.Forward(m.LnF.Forward(ops.Reshape(h, -1, m.shape.embed)))
}

// String prints the model as a tree.
func (m *Model) String() string { return nn.Format(m) }

package nn

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// TransformerBlock is a pre-norm transformer layer over (N, L, E)
// sequences, PyTorch's nn.TransformerEncoderLayer with norm_first=True,
// activation="gelu" and batch_first=True, with its parameter names:
//
//	h = x + dropout1(self_attn(norm1(x)))
//	y = h + dropout2(linear2(dropout(gelu(linear1(norm2(h))))))
//
// Dropout modules exist only when the drop probability is not zero.
type TransformerBlock struct {
	SelfAttn *MultiheadAttention
	Linear1  *Linear
	Dropout  *Dropout
	Linear2  *Linear
	Norm1    *LayerNorm
	Norm2    *LayerNorm
	Dropout1 *Dropout
	Dropout2 *Dropout
	causal   bool
	name     string
}

// NewTransformerBlock adds to g a block of embed features, heads attention
// heads and a feed-forward layer of ff features, with drop probability p;
// causal blocks attend to earlier positions only (a language model's).
func NewTransformerBlock(g *graph.Graph, name string, embed, heads, ff int, p float64, causal bool, opts ...Option) *TransformerBlock {
	if name == "" {
		name = "TransformerBlock"
	}
	sub := func(s string) string { return join(name, s) }
	t := &TransformerBlock{
		SelfAttn: NewMultiheadAttention(g, sub("self_attn"), embed, heads, true, opts...),
		Linear1:  NewLinear(g, sub("linear1"), embed, ff, true, opts...),
		Linear2:  NewLinear(g, sub("linear2"), ff, embed, true, opts...),
		Norm1:    NewLayerNorm(g, sub("norm1"), embed, 1e-5, opts...),
		Norm2:    NewLayerNorm(g, sub("norm2"), embed, 1e-5, opts...),
		causal:   causal,
		name:     name,
	}
	if p != 0 {
		t.Dropout = NewDropout(g, sub("dropout"), p, opts...)
		t.Dropout1 = NewDropout(g, sub("dropout1"), p, opts...)
		t.Dropout2 = NewDropout(g, sub("dropout2"), p, opts...)
	}
	return t
}

// Forward transforms x (N, L, E).
func (t *TransformerBlock) Forward(x *graph.Node) *graph.Node {
	if t == nil || t.SelfAttn == nil {
		return unmade(x, "TransformerBlock", "NewTransformerBlock")
	}
	return inScope(x, "TransformerBlock", t.name, func() *graph.Node {
		if x.Type().Rank() != 3 {
			return fail(x, "TransformerBlock", "%q: input %v is not (N, L, E)", t.name, x.Type())
		}
		l, e := x.Shape()[1], x.Shape()[2]
		drop := func(d *Dropout, x *graph.Node) *graph.Node {
			if d == nil {
				return x
			}
			return d.Forward(x)
		}
		n := t.Norm1.Forward(x)
		h := ops.Add(x, drop(t.Dropout1, t.SelfAttn.Attend(n, n, n, nil, t.causal)))
		rows := ops.Reshape(t.Norm2.Forward(h), -1, e)
		ff := t.Linear2.Forward(drop(t.Dropout, ops.GELU(t.Linear1.Forward(rows), false)))
		return ops.Add(h, drop(t.Dropout2, ops.Reshape(ff, -1, l, e)))
	})
}

// String prints the module as a tree (see Format).
func (t *TransformerBlock) String() string { return Format(t) }

// Name is the name the block was made with.
func (t *TransformerBlock) Name() string {
	if t == nil {
		return ""
	}
	return t.name
}

package nn

import (
	"math"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// ScaledDotProductAttention returns softmax(q·kᵀ/√d + mask)·v for queries
// q (B, L, d), keys k (B, S, d) and values v (B, S, dv): (B, L, dv), as
// PyTorch's scaled_dot_product_attention. keep, if not nil, says which
// scores take part: 1 where query i may attend to key j, 0 where not,
// broadcasting to (B, L, S) (a (L, S) attention mask, or (B, 1, S) for key
// padding); causal keeps keys j ≤ i only. Dropped positions get exactly
// zero weight, so their values get zero gradient; a query that may attend
// to nothing gets NaN, as in PyTorch. The softmax subtracts each row's
// maximum, so large scores stay finite.
func ScaledDotProductAttention(q, k, v, keep *graph.Node, causal bool) *graph.Node {
	in := []*graph.Node{q, k, v}
	if keep != nil {
		in = append(in, keep)
	}
	return checked("ScaledDotProductAttention", []string{"q", "k", "v", "keep"}, func(in []*graph.Node) *graph.Node {
		var keep *graph.Node
		if len(in) == 4 {
			keep = in[3]
		}
		return attention(in[0], in[1], in[2], keep, causal)
	}, in...)
}

// attention is ScaledDotProductAttention of healthy inputs of one graph.
func attention(q, k, v, keep *graph.Node, causal bool) *graph.Node {
	if q.Type().Rank() != 3 || k.Type().Rank() != 3 || v.Type().Rank() != 3 {
		return fail(q, "ScaledDotProductAttention", "want q (B,L,d), k (B,S,d) and v (B,S,dv), got %v, %v and %v", q.Type(), k.Type(), v.Type())
	}
	g := q.Graph()
	scale := 1 / math.Sqrt(float64(q.Shape()[2]))
	scores := ops.Scale(ops.MatMulT(q, k, false, true), scale)
	if causal {
		l, s := q.Shape()[1], k.Shape()[1]
		tri := graph.NewDense(q.DType(), l, s)
		for i := range l {
			for j := range min(i+1, s) {
				graph.SetFloat(tri, i*s+j, 1)
			}
		}
		keep = combine(keep, g.Const(tri))
	}
	if keep != nil {
		scores = ops.Where(keep, scores, g.Scalar(math.Inf(-1), q.DType()))
	}
	return ops.MatMul(ops.Softmax(scores, -1), v)
}

// combine is the product of two keep masks, either of which may be nil.
func combine(a, b *graph.Node) *graph.Node {
	if a == nil {
		return b
	}
	return ops.Mul(a, b)
}

// MultiheadAttention is PyTorch's nn.MultiheadAttention with batch-first
// inputs (N, L, E): the queries, keys and values are projected by one
// stacked weight in_proj_weight (3E, E) and bias in_proj_bias (3E), split
// into heads, attended, and projected back by out_proj (a Linear), so a
// state dict saved from PyTorch loads unchanged.
type MultiheadAttention struct {
	InProjWeight *graph.Node // (3E, E): the query, key and value weights stacked
	InProjBias   *graph.Node // (3E), or nil without biases
	OutProj      *Linear
	embed, heads int
	name         string
}

// NewMultiheadAttention adds to g an attention layer of embed features
// split into heads heads (embed must be a multiple of heads), with biases
// when bias is true. The projection weights start Xavier-uniform and the
// biases at zero, as in PyTorch.
func NewMultiheadAttention(g *graph.Graph, name string, embed, heads int, bias bool, opts ...Option) *MultiheadAttention {
	bound := math.Sqrt(6 / float64(embed+3*embed))
	b := newBuilder(g, "MultiheadAttention", name, Uniform(-bound, bound), Zeros(), opts)
	a := &MultiheadAttention{embed: embed, heads: heads, name: b.name}
	if embed <= 0 || heads <= 0 || embed%heads != 0 {
		a.InProjWeight = b.fail("embed %d must be a positive multiple of heads %d", embed, heads)
		return a
	}
	a.InProjWeight = b.param("in_proj_weight", b.o.weightInit, embed, 3*embed, 3*embed, embed)
	if bias {
		a.InProjBias = b.param("in_proj_bias", b.o.biasInit, embed, 3*embed, 3*embed)
	}
	a.OutProj = NewLinear(g, join(b.name, "out_proj"), embed, embed, bias, append(opts, WithBiasInit(Zeros()))...)
	return a
}

// Forward is self-attention: Attend(x, x, x, nil, causal).
func (a *MultiheadAttention) Forward(x *graph.Node) *graph.Node {
	if a != nil && x == nil {
		return nilInput(nil, "MultiheadAttention", a.name)
	}
	return a.Attend(x, x, x, nil, false)
}

// Attend attends queries q (N, L, E) over keys k and values v (N, S, E)
// and returns (N, L, E). keep is a mask broadcasting to (N, L, S), 1
// where a query may attend to a key (see ScaledDotProductAttention); nil
// keeps all. causal keeps keys j ≤ i only.
func (a *MultiheadAttention) Attend(q, k, v, keep *graph.Node, causal bool) *graph.Node {
	if a == nil || a.InProjWeight == nil {
		return unmade(q, "MultiheadAttention", "NewMultiheadAttention")
	}
	if bad := checkInputs("MultiheadAttention", []string{"q", "k", "v"}, []*graph.Node{q, k, v}); bad != nil {
		return bad
	}
	return inScope(q, "MultiheadAttention", a.name, func() *graph.Node {
		e, h := a.embed, a.heads
		for _, x := range []*graph.Node{q, k, v} {
			if x.Type().Rank() != 3 || x.Shape()[2] != e {
				return fail(q, "MultiheadAttention", "%q: input %v is not (N, L, %d)", a.name, x.Type(), e)
			}
		}
		d := e / h
		project := func(x *graph.Node, part int) *graph.Node {
			w := ops.Slice(a.InProjWeight, 0, part*e, (part+1)*e)
			var bias *graph.Node
			if a.InProjBias != nil {
				bias = ops.Slice(a.InProjBias, 0, part*e, (part+1)*e)
			}
			l := x.Shape()[1]
			y := LinearFunc(ops.Reshape(x, -1, e), w, bias) // (N·L, E)
			// (N, L, h, d) → (N, h, L, d) → (N·h, L, d)
			return ops.Reshape(ops.Transpose(ops.Reshape(y, -1, l, h, d), 0, 2, 1, 3), -1, l, d)
		}
		qh, kh, vh := project(q, 0), project(k, 1), project(v, 2)
		if keep != nil {
			switch ks := keep.Shape(); len(ks) {
			case 2: // (L, S): broadcasts over images and heads as it is
			case 3: // (N, L|1, S): repeated for each head
				full := ops.BroadcastTo(ops.Reshape(keep, ks[0], 1, ks[1], ks[2]), ks[0], h, ks[1], ks[2])
				keep = ops.Reshape(full, -1, ks[1], ks[2])
			default:
				return fail(q, "MultiheadAttention", "%q: mask %v is not (L, S) or (N, L|1, S)", a.name, keep.Type())
			}
		}
		out := ScaledDotProductAttention(qh, kh, vh, keep, causal) // (N·h, L, d)
		l := q.Shape()[1]
		merged := ops.Reshape(ops.Transpose(ops.Reshape(out, -1, h, l, d), 0, 2, 1, 3), -1, e)
		return ops.Reshape(a.OutProj.Forward(merged), -1, l, e)
	})
}

// String prints the module as a tree (see Format).
func (a *MultiheadAttention) String() string { return Format(a) }

// Name is the name the module was made with.
func (a *MultiheadAttention) Name() string {
	if a == nil {
		return ""
	}
	return a.name
}

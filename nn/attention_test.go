package nn

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// sines is a tensor whose element i is sin(0.37·i + seed)·scale, as
// testdata/attention_torch.py makes them.
func sines(t *testing.T, seed, scale float64, shape ...int) *tensor.Dense {
	v := make([]float64, graph.ShapeSize(shape))
	for i := range v {
		v[i] = math.Sin(0.37*float64(i)+seed) * scale
	}
	return dense(t, v, shape...)
}

// sinesInit initialises a parameter as sines does.
func sinesInit(seed, scale float64) Init {
	return func(_ *rand.Rand, t *tensor.Dense, _, _ int) error {
		for i := range graph.ShapeSize(t.Shape()) {
			graph.SetFloat(t, i, math.Sin(0.37*float64(i)+seed)*scale)
		}
		return nil
	}
}

type attentionFixture struct {
	N, L, S, E, H int
	MHA           []struct {
		Name, Mask     string
		Y              []float64
		DQ, DK, DV, DW []float64 // of sum(y·w) with respect to q, k, v and in_proj_weight
	}
	SDPA      []float64
	SDPAGrads struct{ DQ, DK, DV []float64 } `json:"sdpa_grads"`
}

// fixtureLoss is sum(y·w) for w = sines(0.9, 1): the loss whose gradients
// testdata/attention_torch.py records.
func fixtureLoss(t *testing.T, y *graph.Node) *graph.Node {
	return ops.Sum(ops.Mul(y, y.Graph().Const(sines(t, 0.9, 1, y.Shape()...))))
}

// evalGrads evaluates y and the gradients of fixtureLoss(y) with respect
// to wrt, as float64s: y first.
func evalGrads(t *testing.T, feeds vm.Feeds, y *graph.Node, wrt ...*graph.Node) [][]float64 {
	t.Helper()
	grads, err := compile.Grad(fixtureLoss(t, y), wrt...)
	require.NoError(t, err)
	out, err := vm.Eval(feeds, append([]*graph.Node{y}, grads...)...)
	require.NoError(t, err)
	vals := make([][]float64, len(out))
	for i, o := range out {
		vals[i] = graph.Float64s(o)
	}
	return vals
}

// Attention's outputs, and the gradients of a weighted sum of them with
// respect to the queries, keys, values and projection weights, equal
// PyTorch's; keys PyTorch masks out by padding get exactly zero gradient.
func TestAttentionMatchesPyTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/attention_torch.json")
	require.NoError(t, err)
	var f attentionFixture
	require.NoError(t, json.Unmarshal(raw, &f))
	require.Len(t, f.MHA, 3)

	for _, c := range f.MHA {
		g := graph.New()
		a := NewMultiheadAttention(g, "attn", f.E, f.H, true, WithInit(sinesInit(0.3, 0.5)), WithBiasInit(sinesInit(0.4, 0.1)))
		a.OutProj = NewLinear(g, "attn.out_proj", f.E, f.E, true, WithInit(sinesInit(0.5, 0.5)), WithBiasInit(sinesInit(0.6, 0.1)))
		q, k, v := g.Input("q", graph.Float64, f.N, f.L, f.E), g.Input("k", graph.Float64, f.N, f.S, f.E), g.Input("v", graph.Float64, f.N, f.S, f.E)
		var y *graph.Node
		switch c.Mask {
		case "causal":
			y = a.Attend(q, k, v, nil, true)
		case "padding": // keys 3 of image 0 and 1 of image 1 are padding
			keep := []float64{1, 1, 1, 0, 1, 0, 1, 1}
			y = a.Attend(q, k, v, g.Const(dense(t, keep, f.N, 1, f.S)), false)
		default:
			y = a.Attend(q, k, v, nil, false)
		}
		require.NoError(t, g.Err(), c.Name)
		feeds := vm.Feeds{q: sines(t, 0.1, 1, f.N, f.L, f.E), k: sines(t, 0.2, 1, f.N, f.S, f.E), v: sines(t, 0.25, 1, f.N, f.S, f.E)}
		got := evalGrads(t, feeds, y, q, k, v, a.InProjWeight)
		for i, want := range [][]float64{c.Y, c.DQ, c.DK, c.DV, c.DW} {
			assertClose(t, c.Name+" "+[]string{"y", "dq", "dk", "dv", "dw"}[i], got[i], want, 1e-12)
		}
		if c.Mask == "padding" {
			for _, key := range []int{3, f.S + 1} { // the padded keys
				for e := range f.E {
					require.Zero(t, got[2][key*f.E+e], "dk of padded key %d", key)
					require.Zero(t, got[3][key*f.E+e], "dv of padded key %d", key)
				}
			}
		}
	}

	g := graph.New()
	q, k, v := g.Input("q", graph.Float64, 2, 3, 4), g.Input("k", graph.Float64, 2, 5, 4), g.Input("v", graph.Float64, 2, 5, 3)
	keep := g.Const(dense(t, []float64{1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1}, 3, 5))
	y := ScaledDotProductAttention(q, k, v, keep, false)
	got := evalGrads(t, vm.Feeds{q: sines(t, 0.1, 1, 2, 3, 4), k: sines(t, 0.2, 1, 2, 5, 4), v: sines(t, 0.3, 1, 2, 5, 3)}, y, q, k, v)
	for i, want := range [][]float64{f.SDPA, f.SDPAGrads.DQ, f.SDPAGrads.DK, f.SDPAGrads.DV} {
		assertClose(t, "sdpa "+[]string{"y", "dq", "dk", "dv"}[i], got[i], want, 1e-12)
	}
}

// Attention agrees with a loop over its definition; dropped keys get zero
// weight and their values zero gradient; the gradients agree with finite
// differences to second order.
func TestScaledDotProductAttention(t *testing.T) {
	const b, l, s, d = 2, 3, 4, 2
	qv, kv, vv := sines(t, 0.1, 2, b, l, d), sines(t, 0.7, 2, b, s, d), sines(t, 1.3, 1, b, s, d)
	keepv := []float64{1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1}
	g := graph.New()
	q, k, v := g.Input("q", graph.Float64, b, l, d), g.Input("k", graph.Float64, b, s, d), g.Input("v", graph.Float64, b, s, d)
	y := ScaledDotProductAttention(q, k, v, g.Const(dense(t, keepv, l, s)), true)
	grads, err := compile.Grad(ops.Sum(y), v)
	require.NoError(t, err)
	out, err := vm.Eval(vm.Feeds{q: qv, k: kv, v: vv}, y, grads[0])
	require.NoError(t, err)
	got, gv := graph.Float64s(out[0]), graph.Float64s(out[1])
	Q, K, V := graph.Float64s(qv), graph.Float64s(kv), graph.Float64s(vv)
	usedKey := make([]bool, b*s)
	for n := range b {
		for i := range l {
			var w [s]float64
			var sum float64
			maxScore := math.Inf(-1)
			for j := range s {
				if keepv[i*s+j] == 0 || j > i {
					continue
				}
				var dot float64
				for c := range d {
					dot += Q[(n*l+i)*d+c] * K[(n*s+j)*d+c]
				}
				w[j] = dot / math.Sqrt(d)
				maxScore = math.Max(maxScore, w[j])
			}
			for j := range s {
				if keepv[i*s+j] == 0 || j > i {
					w[j] = 0
					continue
				}
				w[j] = math.Exp(w[j] - maxScore)
				sum += w[j]
				usedKey[n*s+j] = true
			}
			for c := range d {
				var want float64
				for j := range s {
					want += w[j] / sum * V[(n*s+j)*d+c]
				}
				require.InDelta(t, want, got[(n*l+i)*d+c], 1e-12)
			}
		}
	}
	for key, used := range usedKey {
		if !used {
			for c := range d {
				require.Zero(t, gv[key*d+c], "value of dropped key %d", key)
			}
		}
	}
	require.Contains(t, usedKey, false, "the test drops some key entirely")

	checkGradients(t, func(in []*graph.Node) *graph.Node {
		keep := in[0].Graph().Const(dense(t, keepv, l, s))
		return weighted(ScaledDotProductAttention(in[0], in[1], in[2], keep, true))
	}, []*tensor.Dense{qv, kv, vv})
}

func TestMultiheadAttentionGradients(t *testing.T) {
	checkGradients(t, func(in []*graph.Node) *graph.Node {
		g := in[0].Graph()
		a := NewMultiheadAttention(g, "attn", 4, 2, true, WithBiasInit(sinesInit(0.2, 0.1)))
		a.InProjWeight = in[1]
		keep := g.Const(dense(t, []float64{1, 1, 0, 1, 1, 1}, 2, 1, 3))
		return weighted(a.Attend(in[0], in[0], in[0], keep, false))
	}, []*tensor.Dense{sines(t, 0.1, 1, 2, 3, 4), sines(t, 0.5, 0.5, 12, 4)})
	g := graph.New()
	NewMultiheadAttention(g, "bad", 5, 2, true)
	require.ErrorContains(t, g.Err(), "multiple of heads 2")
	a := NewMultiheadAttention(graph.New(), "attn", 4, 2, false)
	require.Equal(t, "MultiheadAttention(\n  (out_proj): Linear(in_features=4, out_features=4, bias=false)\n)", a.String())
	names := []string{}
	for _, p := range NamedParameters(a) {
		names = append(names, p.Name)
	}
	require.Equal(t, []string{"in_proj_weight", "out_proj.weight"}, names)
}

// A causal TransformerBlock equals PyTorch's pre-norm GELU
// TransformerEncoderLayer with the same parameters, named alike, and so
// does its gradient with respect to its input.
func TestTransformerBlockMatchesPyTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/attention_torch.json")
	require.NoError(t, err)
	var f struct {
		N, L, E, H int
		BlockNames []string `json:"block_names"`
		Block      []float64
		BlockDX    []float64 `json:"block_dx"`
	}
	require.NoError(t, json.Unmarshal(raw, &f))
	g := graph.New()
	b := NewTransformerBlock(g, "block", f.E, f.H, 16, 0, true)
	var names []string
	for i, p := range NamedParameters(b) {
		names = append(names, p.Name)
		require.NoError(t, sinesInit(0.1*float64(i+1), 0.3)(nil, p.Node.Value(), 0, 0))
	}
	require.Equal(t, f.BlockNames, names)
	x := g.Input("x", graph.Float64, f.N, f.L, f.E)
	y := b.Forward(x)
	require.NoError(t, g.Err())
	got := evalGrads(t, vm.Feeds{x: sines(t, 0.15, 1, f.N, f.L, f.E)}, y, x)
	assertClose(t, "block", got[0], f.Block, 1e-12)
	assertClose(t, "block dx", got[1], f.BlockDX, 1e-12)
}

package nn

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

type lossTensor struct {
	Values []float64 `json:"values"`
	Shape  []int     `json:"shape"`
}

type lossCase struct {
	Loss    string                     `json:"loss"`
	Inputs  []lossTensor               `json:"inputs"`
	Options map[string]json.RawMessage `json:"options"`
	Results map[string]lossTensor      `json:"-"`
}

// lossFuncs calls each loss by name on its inputs.
var lossFuncs = map[string]func(in []*graph.Node, opts ...LossOption) *graph.Node{
	"BCELoss":           func(in []*graph.Node, o ...LossOption) *graph.Node { return BCELoss(in[0], in[1], o...) },
	"BCEWithLogitsLoss": func(in []*graph.Node, o ...LossOption) *graph.Node { return BCEWithLogitsLoss(in[0], in[1], o...) },
	"NLLLoss":           func(in []*graph.Node, o ...LossOption) *graph.Node { return NLLLoss(in[0], in[1], o...) },
	"GaussianNLLLoss": func(in []*graph.Node, o ...LossOption) *graph.Node {
		return GaussianNLLLoss(in[0], in[1], in[2], o...)
	},
	"KLDivLoss":      func(in []*graph.Node, o ...LossOption) *graph.Node { return KLDivLoss(in[0], in[1], o...) },
	"PoissonNLLLoss": func(in []*graph.Node, o ...LossOption) *graph.Node { return PoissonNLLLoss(in[0], in[1], o...) },
	"HuberLoss":      func(in []*graph.Node, o ...LossOption) *graph.Node { return HuberLoss(in[0], in[1], o...) },
	"SmoothL1Loss":   func(in []*graph.Node, o ...LossOption) *graph.Node { return SmoothL1Loss(in[0], in[1], o...) },
	"MarginRankingLoss": func(in []*graph.Node, o ...LossOption) *graph.Node {
		return MarginRankingLoss(in[0], in[1], in[2], o...)
	},
	"CosineEmbeddingLoss": func(in []*graph.Node, o ...LossOption) *graph.Node {
		return CosineEmbeddingLoss(in[0], in[1], in[2], o...)
	},
	"HingeEmbeddingLoss": func(in []*graph.Node, o ...LossOption) *graph.Node { return HingeEmbeddingLoss(in[0], in[1], o...) },
	"SoftMarginLoss":     func(in []*graph.Node, o ...LossOption) *graph.Node { return SoftMarginLoss(in[0], in[1], o...) },
	"TripletMarginLoss": func(in []*graph.Node, o ...LossOption) *graph.Node {
		return TripletMarginLoss(in[0], in[1], in[2], o...)
	},
	"MultiMarginLoss": func(in []*graph.Node, o ...LossOption) *graph.Node { return MultiMarginLoss(in[0], in[1], o...) },
}

// lossOptions turns a fixture's torch keyword arguments into options.
func lossOptions(t *testing.T, g *graph.Graph, raw map[string]json.RawMessage) []LossOption {
	var opts []LossOption
	for k, v := range raw {
		var f float64
		var b bool
		var x lossTensor
		switch k {
		case "weight", "pos_weight":
			require.NoError(t, json.Unmarshal(v, &x))
			n := g.Const(dense(t, x.Values, x.Shape...))
			if k == "weight" {
				opts = append(opts, WithWeight(n))
			} else {
				opts = append(opts, WithPosWeight(n))
			}
		case "full", "log_target", "log_input":
			require.NoError(t, json.Unmarshal(v, &b))
			switch {
			case k == "log_input":
				opts = append(opts, WithLogInput(b))
			case b && k == "full":
				opts = append(opts, WithFull())
			case b:
				opts = append(opts, WithLogTarget())
			}
		case "ignore_index":
			require.NoError(t, json.Unmarshal(v, &f))
			opts = append(opts, WithIgnoreIndex(int(f)))
		default:
			require.NoError(t, json.Unmarshal(v, &f))
			opts = append(opts, map[string]func(float64) LossOption{
				"eps": WithEps, "delta": WithDelta, "beta": WithBeta, "margin": WithMargin}[k](f))
		}
	}
	return opts
}

// Every loss, under every reduction, agrees with torch.nn.functional
// (float64, fixtures written by testdata/losses_torch.py) to 1e-12
// relative to max(1, |want|): saturated probabilities, logits of ±800,
// ignored labels, a variance under the floor, zero targets and a zero
// vector included.
func TestLossesAgainstPyTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/losses_torch.json")
	require.NoError(t, err)
	var f struct {
		Cases []map[string]json.RawMessage `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &f))
	require.GreaterOrEqual(t, len(f.Cases), 31)
	reductions := map[string]Reduction{"mean": ReduceMean, "sum": ReduceSum, "none": ReduceNone, "batchmean": ReduceBatchMean}
	seen := map[string]bool{}
	for i, c := range f.Cases {
		var lc lossCase
		require.NoError(t, json.Unmarshal(c["loss"], &lc.Loss))
		require.NoError(t, json.Unmarshal(c["inputs"], &lc.Inputs))
		require.NoError(t, json.Unmarshal(c["options"], &lc.Options))
		seen[lc.Loss] = true
		for rname, r := range reductions {
			if c[rname] == nil {
				continue
			}
			var want lossTensor
			require.NoError(t, json.Unmarshal(c[rname], &want))
			g := graph.New()
			var in []*graph.Node
			feeds := vm.Feeds{}
			for j, x := range lc.Inputs {
				n := g.Input(fmt.Sprintf("in%d", j), graph.Float64, x.Shape...)
				feeds[n] = dense(t, x.Values, x.Shape...)
				in = append(in, n)
			}
			out := lossFuncs[lc.Loss](in, append(lossOptions(t, g, lc.Options), WithReduction(r))...)
			require.NoError(t, out.Err(), "case %d (%s)", i, lc.Loss)
			m := machine(t, []*graph.Node{out}, nil)
			require.NoError(t, m.Run(feeds))
			got := value(t, m, out)
			require.Equal(t, want.Shape, out.Shape(), "case %d (%s, %v)", i, lc.Loss, r)
			for k, w := range want.Values {
				if math.Abs(got[k]-w) > 1e-12*max(1, math.Abs(w)) {
					t.Errorf("case %d (%s, %v %v): element %d: got %.17g, want %.17g", i, lc.Loss, r, lc.Options, k, got[k], w)
				}
			}
		}
	}
	require.Len(t, seen, len(lossFuncs))
}

// The losses differentiate to the second order in every float input, as
// finite differences say, at points away from their kinks (Huber's and
// SmoothL1's thresholds, the margins' hinges, BCE's clamp).
func TestLossGradientsToSecondOrder(t *testing.T) {
	x := dense(t, []float64{0.3, -1.2, 2.0, 4.0, 0.15, -0.6}, 2, 3)
	y := dense(t, []float64{0.1, 0.4, -2.5, 3.9, 0.1, 1.0}, 2, 3)
	p := dense(t, []float64{0.2, 0.9, 0.5, 0.05, 0.7, 0.3}, 2, 3)
	q := dense(t, []float64{0.0, 1.0, 0.3, 1.0, 0.2, 0.7}, 2, 3)
	v := dense(t, []float64{0.5, 1.7, 3.0, 0.4, 0.2, 2.0}, 2, 3)
	logp := dense(t, []float64{-1.1, -0.9, -1.3, -0.4, -1.6, -2.2}, 2, 3)
	counts := dense(t, []float64{0, 1.5, 3, 7, 2, 0.5}, 2, 3)
	x1 := dense(t, []float64{0.3, -1.2, 2.0, 0.5}, 4)
	x2 := dense(t, []float64{0.1, 0.4, -2.5, 0.9}, 4)
	sign := dense(t, []float64{-1, 1, -1, -1}, 4)
	e1 := dense(t, []float64{0.3, -1.2, 2.0, 1.0, 0.5, 0.1, 0.2, 0.25, 0.2}, 3, 3)
	e2 := dense(t, []float64{0.1, 0.4, -2.5, 1.0, 0.4, 0.1, -0.2, 0.2, 0.1}, 3, 3)
	ey := dense(t, []float64{1, -1, -1}, 3)
	w := dense(t, []float64{0.5, 2, 1.5}, 3)
	cases := []struct {
		name   string
		fn     func(in []*graph.Node) *graph.Node
		inputs []*tensor.Dense
		wrt    []int
	}{
		{"BCELoss", func(in []*graph.Node) *graph.Node { return BCELoss(in[0], in[1], WithWeight(in[2])) }, []*tensor.Dense{p, q, w}, nil},
		{"BCEWithLogitsLoss", func(in []*graph.Node) *graph.Node {
			return BCEWithLogitsLoss(in[0], in[1], WithPosWeight(in[2]), WithReduction(ReduceSum))
		}, []*tensor.Dense{x, q, w}, nil},
		{"NLLLoss", func(in []*graph.Node) *graph.Node {
			return NLLLoss(in[0], in[0].Graph().Const(dense(t, []float64{2, 0}, 2)), WithWeight(in[1]))
		}, []*tensor.Dense{logp, w}, nil},
		{"NLLLoss spatial", func(in []*graph.Node) *graph.Node {
			labels := in[0].Graph().Const(dense(t, []float64{2, 0, -100, 1}, 2, 2))
			return NLLLoss(in[0], labels, WithWeight(in[1]))
		}, []*tensor.Dense{dense(t, []float64{-1.1, -0.9, -1.3, -0.4, -1.6, -2.2, -0.3, -0.8, -1.7, -2.1, -0.6, -1.2}, 2, 3, 2), w}, nil},
		{"NLLLoss one example", func(in []*graph.Node) *graph.Node {
			return NLLLoss(in[0], in[0].Graph().Scalar(1, graph.Float64), WithWeight(in[1]), WithReduction(ReduceNone))
		}, []*tensor.Dense{dense(t, []float64{-1.1, -0.9, -1.3}, 3), w}, nil},
		{"GaussianNLLLoss", func(in []*graph.Node) *graph.Node { return GaussianNLLLoss(in[0], in[1], in[2], WithFull()) }, []*tensor.Dense{x, y, v}, nil},
		{"KLDivLoss", func(in []*graph.Node) *graph.Node { return KLDivLoss(in[0], in[1], WithReduction(ReduceBatchMean)) }, []*tensor.Dense{logp, p}, nil},
		{"KLDivLoss log target", func(in []*graph.Node) *graph.Node { return KLDivLoss(in[0], in[1], WithLogTarget()) }, []*tensor.Dense{logp, x}, nil},
		{"PoissonNLLLoss", func(in []*graph.Node) *graph.Node { return PoissonNLLLoss(in[0], in[1], WithFull()) }, []*tensor.Dense{x, counts}, nil},
		{"PoissonNLLLoss rates", func(in []*graph.Node) *graph.Node {
			return PoissonNLLLoss(in[0], in[1], WithLogInput(false))
		}, []*tensor.Dense{v, counts}, nil},
		{"HuberLoss", func(in []*graph.Node) *graph.Node { return HuberLoss(in[0], in[1], WithDelta(0.5)) }, []*tensor.Dense{x, y}, nil},
		{"SmoothL1Loss", func(in []*graph.Node) *graph.Node { return SmoothL1Loss(in[0], in[1], WithBeta(0.5)) }, []*tensor.Dense{x, y}, nil},
		{"MarginRankingLoss", func(in []*graph.Node) *graph.Node {
			return MarginRankingLoss(in[0], in[1], in[2], WithMargin(0.7))
		}, []*tensor.Dense{x1, x2, sign}, []int{0, 1}},
		{"CosineEmbeddingLoss", func(in []*graph.Node) *graph.Node {
			return CosineEmbeddingLoss(in[0], in[1], in[2], WithMargin(0.1))
		}, []*tensor.Dense{e1, e2, ey}, []int{0, 1}},
		{"HingeEmbeddingLoss", func(in []*graph.Node) *graph.Node { return HingeEmbeddingLoss(in[0], in[1]) },
			[]*tensor.Dense{x1, sign}, []int{0}},
		{"SoftMarginLoss", func(in []*graph.Node) *graph.Node { return SoftMarginLoss(in[0], in[1]) },
			[]*tensor.Dense{x1, sign}, []int{0}},
		{"TripletMarginLoss", func(in []*graph.Node) *graph.Node {
			return TripletMarginLoss(in[0], in[1], in[2], WithMargin(3))
		}, []*tensor.Dense{e1, e2, dense(t, []float64{1, 0, 2, -1, 0.5, 0.3, 0, 1, 1}, 3, 3)}, nil},
		{"MultiMarginLoss", func(in []*graph.Node) *graph.Node {
			return MultiMarginLoss(in[0], in[0].Graph().Const(dense(t, []float64{2, 0}, 2)))
		}, []*tensor.Dense{logp}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkGradients(t, c.fn, c.inputs, c.wrt...) })
	}
}

// Mistakes give errors naming the loss, the mistake and the caller's line.
func TestLossErrors(t *testing.T) {
	g := graph.New()
	vec := func(n ...int) *graph.Node { return g.Input(fmt.Sprint("v", n, len(g.Nodes())), graph.Float64, n...) }
	cases := []struct {
		loss func() *graph.Node
		want string
	}{
		{func() *graph.Node { return HuberLoss(vec(3), vec(3), WithMargin(1)) }, "nn.HuberLoss: WithMargin does not apply (it takes WithReduction, WithDelta)"},
		{func() *graph.Node { return BCELoss(vec(2, 3), vec(3)) }, "nn.BCELoss: targets has shape (3) but probs has (2,3): they must be equal"},
		{func() *graph.Node { return BCEWithLogitsLoss(vec(2, 3), vec(2, 3), WithPosWeight(vec(2))) }, "nn.BCEWithLogitsLoss: the pos weight's shape (2) does not broadcast to the input's (2,3)"},
		{func() *graph.Node { return SmoothL1Loss(vec(2), nil) }, "nn.SmoothL1Loss: target is nil"},
		{func() *graph.Node { return HuberLoss(vec(2), vec(2), WithReduction(ReduceBatchMean)) }, "nn.HuberLoss: reduction batchmean is KLDivLoss's alone"},
		{func() *graph.Node { return HuberLoss(vec(2), vec(2), WithDelta(0)) }, "nn.HuberLoss: delta 0 is not positive"},
		{func() *graph.Node { return NLLLoss(vec(2, 3), vec(3)) }, "nn.NLLLoss: the labels have shape (3): want (2) for log-probabilities (2,3)"},
		{func() *graph.Node { return NLLLoss(vec(2, 3), vec(2), WithWeight(vec(2))) }, "nn.NLLLoss: the weight has shape (2): want (3), one per class"},
		{func() *graph.Node { return NLLLoss(vec(2, 3, 4, 5), vec(2, 5, 4)) }, "nn.NLLLoss: the labels have shape (2,5,4): want (2,4,5) for log-probabilities (2,3,4,5)"},
		{func() *graph.Node { return NLLLoss(vec(3), vec(1)) }, "nn.NLLLoss: the labels have shape (1): want () for log-probabilities (3)"},
		{func() *graph.Node { return NLLLoss(vec(), vec()) }, "nn.NLLLoss: the log-probabilities have shape (): want (C), (N, C) or (N, C, d1, …, dK)"},
		{func() *graph.Node { return MultiMarginLoss(vec(2, 3, 4), vec(2, 4)) }, "nn.MultiMarginLoss: the scores have shape (2,3,4): want (C) or (N, C)"},
		{func() *graph.Node { return GaussianNLLLoss(vec(2, 3), vec(2, 3), vec(3)) }, "nn.GaussianNLLLoss: the variance has shape (3): want the input's (2,3), or it with its last dimension 1 or dropped"},
		{func() *graph.Node { return CosineEmbeddingLoss(vec(3), vec(3), vec(3)) }, "nn.CosineEmbeddingLoss: x1 and x2 have shape (3) and y (3): want (N, D) and (N)"},
		{func() *graph.Node { return KLDivLoss(vec(2), g.Input("f32", graph.Float32, 2)) }, "nn.KLDivLoss: target is float32(2) but log-probabilities is float64(2): the dtypes differ"},
		{func() *graph.Node { return MarginRankingLoss(vec(2), vec(2), vec(2), WithReduction(Reduction(9))) }, "nn.MarginRankingLoss: unknown reduction Reduction(9)"},
	}
	for i, c := range cases {
		g = graph.New()
		err := c.loss().Err()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "loss_torch_test.go:") {
			t.Errorf("case %d: got %v, want %q at loss_torch_test.go", i, err, c.want)
		}
	}
}

// NLLLoss takes int64 labels as it takes float ones, the default ignored
// label −100 included: −(logp[0,1] + logp[2,0])/2 here.
func TestNLLLossIntegerLabels(t *testing.T) {
	g := graph.New()
	logp := dense(t, []float64{-0.1, -2.4, -1.2, -0.5, -0.7, -0.9}, 3, 2)
	labels := tensor.New(tensor.WithShape(3), tensor.WithBacking([]int64{1, -100, 0}))
	lp := g.Input("logp", graph.Float64, 3, 2)
	y := g.Input("y", graph.Int64, 3)
	loss := NLLLoss(lp, y)
	m := machine(t, []*graph.Node{loss}, nil)
	require.NoError(t, m.Run(vm.Feeds{lp: logp, y: labels}))
	assertClose(t, "NLLLoss", value(t, m, loss), []float64{(2.4 + 0.7) / 2}, 1e-15)
}

// TestGaussianNLLLossOfScalars: scalar input, target and variance (it
// panicked) give ½·(log v + (x−y)²/v), by hand: x = 1, y = 3, v = 2.
func TestGaussianNLLLossOfScalars(t *testing.T) {
	g := graph.New()
	x, y, v := g.Const(dense(t, []float64{1})), g.Const(dense(t, []float64{3})), g.Const(dense(t, []float64{2}))
	loss := GaussianNLLLoss(x, y, v)
	require.NoError(t, loss.Err())
	m := machine(t, []*graph.Node{loss}, nil)
	require.NoError(t, m.Run(nil))
	require.InDelta(t, 0.5*(math.Log(2)+4.0/2), value(t, m, loss)[0], 1e-15)
}

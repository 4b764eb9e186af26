package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/parallel"
)

// naiveChannels computes op from its definition, element by element in
// float64: x (and u, v, the terms) are (n, c, s) with the channel in the
// middle, the (C) inputs follow.
func naiveChannels(op channelOp, n, c, s int, in [][]float64) []float64 {
	at := func(x []float64, i, ch, k int) float64 { return x[(i*c+ch)*s+k] }
	count := float64(n * s)
	mean := func(x []float64, ch int) float64 {
		sum := 0.0
		for i := range n {
			for k := range s {
				sum += at(x, i, ch, k)
			}
		}
		return sum / count
	}
	var out []float64
	for ch := range c {
		switch op.kind {
		case channelSumKind, channelMeanKind:
			m := mean(in[0], ch)
			if op.kind == channelSumKind {
				m *= count
			}
			out = append(out, m)
		case channelDotKind, channelCovKind:
			mu, mv := mean(in[0], ch), mean(in[1], ch)
			if op.kind == channelDotKind {
				mu, mv = 0, 0
			}
			if op.centred {
				mv = in[2][ch]
			}
			sum := 0.0
			for i := range n {
				for k := range s {
					sum += (at(in[0], i, ch, k) - mu) * (at(in[1], i, ch, k) - mv)
				}
			}
			if op.kind == channelCovKind {
				sum /= count
			}
			out = append(out, sum)
		}
	}
	if op.reduces() {
		return out
	}
	out = make([]float64, len(in[0]))
	for ch := range c {
		for i := range n {
			for k := range s {
				j := (i*c+ch)*s + k
				switch op.kind {
				case channelAffineKind:
					if op.unit {
						out[j] = in[0][j] + in[1][ch]
						continue
					}
					for t := range op.terms {
						out[j] += in[t][j] * in[op.terms+t][ch]
					}
					if op.bias {
						out[j] += in[2*op.terms][ch]
					}
				case batchNormKind: // the statistics are inputs
					out[j] = (in[0][j]-in[1][ch])/math.Sqrt(in[2][ch]+op.eps)*in[3][ch] + in[4][ch]
				}
			}
		}
	}
	return out
}

// Every member on random shapes of rank 2 to 4, in both float types, on
// one thread and on three, against naiveChannels.
func TestChannelOpsAgreeWithDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	workers := parallel.New(3)
	defer workers.Close()
	ops := []channelOp{
		{kind: channelSumKind}, {kind: channelMeanKind}, {kind: channelDotKind}, {kind: channelDotKind, centred: true}, {kind: channelCovKind},
		{kind: channelAffineKind, terms: 1}, {kind: channelAffineKind, terms: 1, bias: true},
		{kind: channelAffineKind, terms: 2}, {kind: channelAffineKind, terms: 2, bias: true},
		{kind: channelAffineKind, terms: 1, bias: true, unit: true},
		{kind: batchNormKind, eps: 1e-5}, {kind: batchNormKind, eps: 0.5},
	}
	shapes := [][]int{{3, 2}, {1, 3, 5}, {2, 3, 2, 3}, {4, 1, 1, 1}, {3, 5, 7, 9}, {8, 6, 40, 40}}
	for _, op := range ops {
		for _, shape := range shapes {
			for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
				name := fmt.Sprintf("%s %+v %v %v", op.Name(), op, shape, dtype)
				arity, lead := op.arity()
				in := make([][]float64, arity)
				for i := range in {
					size := shape[1]
					if i < lead {
						size = graph.ShapeSize(shape)
					}
					in[i] = randoms(rng, size)
					for j := range in[i] {
						in[i][j] += 3 // off-centre, so that the means matter
					}
				}
				want := naiveChannels(op, shape[0], shape[1], graph.ShapeSize(shape[2:]), in)
				ts := make([]*tensor.Dense, arity)
				types := make([]graph.Type, arity)
				for i, v := range in {
					s := shape
					if i >= lead {
						s = shape[1:2]
					}
					ts[i] = dense(t, dtype, s, v...)
					types[i] = graph.TypeOf(dtype, s...)
				}
				typ, err := op.Type(types)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for _, e := range []*graph.Exec{nil, graph.NewExec(workers)} {
					out := graph.NewDense(dtype, typ.Shape...)
					if err := op.ForwardExec(e, out, ts); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					tol := 1e-12
					if dtype == graph.Float32 {
						tol = 2e-5
					}
					for i, got := range graph.Float64s(out) {
						if math.Abs(got-want[i]) > tol*(1+math.Abs(want[i])) {
							t.Fatalf("%s: [%d] = %v, want %v", name, i, got, want[i])
						}
					}
				}
			}
		}
	}
}

// BatchNorm's gradient holds only for the statistics ops.BatchNorm gives
// it: with others it is an error, not a wrong gradient.
func TestBatchNormStatisticsChecked(t *testing.T) {
	g := graph.New()
	x, z, c := g.Input("x", graph.Float64, 2, 3), g.Input("z", graph.Float64, 2, 3), g.Input("c", graph.Float64, 3)
	for i, stats := range [][2]*graph.Node{{c, ChannelVar(x)}, {ChannelMean(x), c}, {ChannelMean(z), ChannelVar(x)},
		{ChannelMean(x), channelCov(x, z)}, {ChannelMean(x), ChannelVar(x)}} {
		y := graph.Apply(channelOp{kind: batchNormKind}, x, stats[0], stats[1], c, c)
		ctx := graph.NewGradContext(y, []bool{true, false, false, true, true})
		y.Op().(channelOp).Backward(ctx, g.Input("g", graph.Float64, 2, 3))
		if ok := i == 4; ok != (ctx.Err() == nil) {
			t.Errorf("case %d: statistics %v, %v: error %v", i, stats[0], stats[1], ctx.Err())
		}
	}
}

// The variance is computed from the deviations: a large offset does not
// cancel it away in float32, as E[x²] - E[x]² would.
func TestChannelVarOffCentre(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float32, 4, 1)
	v := ChannelVar(x)
	got := eval(t, v, map[*graph.Node]*tensor.Dense{x: dense(t, graph.Float32, []int{4, 1}, 1e4+1, 1e4-1, 1e4+1, 1e4-1)})
	assertValues(t, got, []int{1}, 1)
}

func TestChannelOpErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(g *graph.Graph) *graph.Node
		want  string
	}{
		{"rank 1", func(g *graph.Graph) *graph.Node { return ChannelSum(g.Input("x", graph.Float64, 3)) }, "channels on axis 1"},
		{"scale shape", func(g *graph.Graph) *graph.Node {
			return ChannelAffine(g.Input("x", graph.Float64, 2, 3), g.Input("a", graph.Float64, 2), nil)
		}, "input 1 is (2), want (3)"},
		{"operand shapes", func(g *graph.Graph) *graph.Node {
			return channelDot(g.Input("u", graph.Float64, 2, 3), g.Input("v", graph.Float64, 3, 3))
		}, "input 1 is (3,3), want (2,3)"},
		{"empty mean", func(g *graph.Graph) *graph.Node { return ChannelMean(g.Input("x", graph.Float64, 0, 3)) }, "no values per channel"},
		{"eps", func(g *graph.Graph) *graph.Node {
			return BatchNorm(g.Input("x", graph.Float64, 2, 3), g.Input("w", graph.Float64, 3), g.Input("b", graph.Float64, 3), -1)
		}, "eps -1 must be at least 0"},
		{"BatchNorm rank 1", func(g *graph.Graph) *graph.Node {
			return BatchNorm(g.Input("x", graph.Float64, 3), g.Input("w", graph.Float64, 3), g.Input("b", graph.Float64, 3), 0)
		}, "BatchNorm: want (N, C, ...) with the channels on axis 1, got (3)"},
		{"dtypes", func(g *graph.Graph) *graph.Node {
			return BatchNorm(g.Input("x", graph.Float64, 2, 3), g.Input("w", graph.Float32, 3), g.Input("b", graph.Float64, 3), 0)
		}, "dtype"},
	} {
		g := graph.New()
		c.build(g)
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}

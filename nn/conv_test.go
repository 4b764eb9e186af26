package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

func TestConv2dParametersAndForward(t *testing.T) {
	g := graph.New()
	c := NewConv2d(g, "conv1", 4, 6, []int{3, 2}, true, ops.ConvOptions{Padding: []int{1}, Groups: 2})
	require.NoError(t, g.Err())
	names := map[string][]int{}
	for _, p := range NamedParameters(c) {
		names[p.Name] = p.Node.Shape()
	}
	require.Equal(t, map[string][]int{"weight": {6, 2, 3, 2}, "bias": {6}}, names)
	require.Equal(t, "4, 6, kernel_size=(3, 2), stride=(1, 1), padding=(1, 1), groups=2", c.Describe())
	// PyTorch's initialisation bound, 1/√(in/groups·kH·kW).
	bound := 1 / math.Sqrt(2*3*2)
	for _, v := range graph.Float64s(c.Weight.Value()) {
		require.LessOrEqual(t, math.Abs(v), bound)
	}

	x := g.Input("x", graph.Float64, 2, 4, 5, 5)
	y := c.Forward(x)
	want := ops.Add(ops.Conv2D(x, c.Weight, ops.ConvOptions{Padding: []int{1}, Groups: 2}), ops.Reshape(c.Bias, 6, 1, 1))
	m := machine(t, []*graph.Node{y, want}, nil)
	xv := graph.NewDense(graph.Float64, 2, 4, 5, 5)
	require.NoError(t, Normal(0, 1)(rand.New(rand.NewPCG(1, 1)), xv, 1, 1))
	require.NoError(t, m.Run(vm.Feeds{x: xv}))
	assertClose(t, "Conv2d", value(t, m, y), value(t, m, want), 0)
	require.Equal(t, []int{2, 6, 5, 6}, y.Shape())

	bad := NewConv2d(g, "bad", 3, 4, []int{3}, false, ops.ConvOptions{Groups: 2})
	require.Nil(t, bad.Bias)
	require.ErrorContains(t, g.Err(), "divisible by 2 groups")
	g = graph.New()
	NewConvTranspose2d(g, "bad", 3, 4, []int{3, 3, 3}, false, ops.ConvOptions{})
	require.ErrorContains(t, g.Err(), "kernel size [3 3 3]: want 1 or 2 positive values")
}

// batchStats computes per-channel mean and biased variance of x (N, C,
// H, W) by loops.
func batchStats(x []float64, n, c, hw int) (mean, variance []float64) {
	mean, variance = make([]float64, c), make([]float64, c)
	for ch := range c {
		var s float64
		for i := range n {
			for k := range hw {
				s += x[(i*c+ch)*hw+k]
			}
		}
		mean[ch] = s / float64(n*hw)
		var v float64
		for i := range n {
			for k := range hw {
				d := x[(i*c+ch)*hw+k] - mean[ch]
				v += d * d
			}
		}
		variance[ch] = v / float64(n*hw)
	}
	return mean, variance
}

func TestBatchNorm2d(t *testing.T) {
	const n, c, h, w = 3, 2, 2, 3
	g := graph.New()
	bn := NewBatchNorm2d(g, "bn", c, 1e-5, 0.1, WithInit(valuesInit(2, 0.5)), WithBiasInit(valuesInit(1, -1)))
	x := g.Input("x", graph.Float64, n, c, h, w)
	train := bn.Forward(x)
	updates := StateUpdates(bn)
	require.Len(t, updates, 3)
	bn.SetTraining(false)
	eval := bn.Forward(x)
	require.NoError(t, g.Err())

	names := []string{}
	for _, b := range NamedBuffers(bn) {
		names = append(names, b.Name)
	}
	require.Equal(t, []string{"running_mean", "running_var", "num_batches_tracked"}, names)
	require.Len(t, Parameters(bn), 2)

	xv := make([]float64, n*c*h*w)
	rng := rand.New(rand.NewPCG(2, 2))
	for i := range xv {
		xv[i] = 3*rng.NormFloat64() + float64(i%2)
	}
	mean, variance := batchStats(xv, n, c, h*w)
	trainer := machine(t, []*graph.Node{train}, updates)
	require.NoError(t, trainer.Run(vm.Feeds{x: dense(t, xv, n, c, h, w)}))
	got := value(t, trainer, train)
	gamma, beta := []float64{2, 0.5}, []float64{1, -1}
	for i, v := range xv {
		ch := (i / (h * w)) % c
		want := (v-mean[ch])/math.Sqrt(variance[ch]+1e-5)*gamma[ch] + beta[ch]
		require.InDelta(t, want, got[i], 1e-12, "element %d", i)
	}
	count := float64(n * h * w)
	wantMean := []float64{0.1 * mean[0], 0.1 * mean[1]}
	wantVar := []float64{0.9 + 0.1*variance[0]*count/(count-1), 0.9 + 0.1*variance[1]*count/(count-1)}
	assertClose(t, "running_mean", value(t, trainer, bn.RunningMean), wantMean, 1e-14)
	assertClose(t, "running_var", value(t, trainer, bn.RunningVar), wantVar, 1e-14)
	assertClose(t, "num_batches_tracked", value(t, trainer, bn.NumBatchesTracked), []float64{1}, 0)

	// Evaluation normalises with the running statistics the trainer left.
	evaluator := machine(t, []*graph.Node{eval}, nil)
	for _, b := range []*graph.Node{bn.RunningMean, bn.RunningVar} {
		v, err := trainer.Value(b)
		require.NoError(t, err)
		require.NoError(t, evaluator.Set(b, v))
	}
	require.NoError(t, evaluator.Run(vm.Feeds{x: dense(t, xv, n, c, h, w)}))
	got = value(t, evaluator, eval)
	for i, v := range xv {
		ch := (i / (h * w)) % c
		want := (v-wantMean[ch])/math.Sqrt(wantVar[ch]+1e-5)*gamma[ch] + beta[ch]
		require.InDelta(t, want, got[i], 1e-12, "element %d", i)
	}
}

func TestBatchNormGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(shape ...int) *tensor.Dense {
		v := graph.NewDense(graph.Float64, shape...)
		require.NoError(t, Normal(0.5, 1)(rng, v, 1, 1))
		return v
	}
	for _, shape := range [][]int{{2, 3, 2, 2}, {4, 3}, {2, 3, 3}} {
		checkGradients(t, func(in []*graph.Node) *graph.Node {
			var bn *BatchNorm
			if len(shape) == 4 {
				bn = NewBatchNorm2d(in[0].Graph(), "bn", 3, 1e-5, 0.1)
			} else {
				bn = NewBatchNorm1d(in[0].Graph(), "bn", 3, 1e-5, 0.1)
			}
			bn.Weight, bn.Bias = in[1], in[2]
			return weighted(bn.Forward(in[0]))
		}, []*tensor.Dense{draw(shape...), draw(3), draw(3)})
	}
}

func TestBatchNormErrors(t *testing.T) {
	g := graph.New()
	bn := NewBatchNorm2d(g, "bn", 3, 1e-5, 0.1)
	bn.Forward(g.Input("x", graph.Float64, 2, 4, 2, 2))
	require.ErrorContains(t, g.Err(), "is not (N, C, H, W) with C = 3")
	g = graph.New()
	bn = NewBatchNorm1d(g, "bn", 3, 1e-5, 0.1)
	bn.Forward(g.Input("x", graph.Float64, 1, 3))
	require.ErrorContains(t, g.Err(), "training needs more than one")
	g = graph.New()
	NewBatchNorm2d(g, "bn", 3, 1e-5, 2)
	require.ErrorContains(t, g.Err(), "momentum 2 in [0, 1]")
}

// A gradient penalty through a small CNN, ‖∂loss/∂x‖², differentiated
// again with respect to the input and the weight, agrees with finite
// differences: the convolution family and max pooling differentiate past
// second order.
func TestCNNGradientPenalty(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	draw := func(shape ...int) *tensor.Dense {
		v := graph.NewDense(graph.Float64, shape...)
		require.NoError(t, Normal(0, 1)(rng, v, 1, 1))
		return v
	}
	penalty := func(in []*graph.Node) *graph.Node {
		x, w := in[0], in[1]
		h := ops.Tanh(ops.Conv2D(x, w, ops.ConvOptions{Padding: []int{1}}))
		loss := ops.Sum(ops.Square(ops.MaxPool2D(h, ops.PoolOptions{Kernel: []int{2}})))
		g, err := compile.Grad(loss, x)
		if err != nil {
			return x.Graph().Fail(err)
		}
		return ops.Sum(ops.Square(g[0]))
	}
	require.NoError(t, gradcheck.Check(penalty, []*tensor.Dense{draw(1, 1, 4, 4), draw(2, 1, 3, 3)}, gradcheck.Options{}))
}

func TestConvTranspose2d(t *testing.T) {
	g := graph.New()
	opts := ops.ConvOptions{Stride: []int{2}, Padding: []int{1}, OutputPadding: []int{1}}
	c := NewConvTranspose2d(g, "up", 4, 6, []int{3}, true, opts)
	require.NoError(t, g.Err())
	require.Equal(t, []int{4, 6, 3, 3}, c.Weight.Shape(), "PyTorch's layout: (in, out/groups, kH, kW)")
	require.Equal(t, "4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1)", c.Describe())
	x := g.Input("x", graph.Float64, 2, 4, 5, 5)
	y := c.Forward(x)
	want := ops.Add(ops.ConvTranspose2D(x, c.Weight, opts), ops.Reshape(c.Bias, 6, 1, 1))
	require.Equal(t, []int{2, 6, 10, 10}, y.Shape())
	out, err := vm.Eval(vm.Feeds{x: sines(t, 0.2, 1, 2, 4, 5, 5)}, y, want)
	require.NoError(t, err)
	assertClose(t, "ConvTranspose2d", graph.Float64s(out[0]), graph.Float64s(out[1]), 0)
	var nilc *ConvTranspose2d
	require.ErrorContains(t, nilc.Forward(x).Err(), "the module is nil")
}

package nn

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// BatchNorm normalises each channel over a batch, as PyTorch's
// BatchNorm1d and BatchNorm2d: y = (x - mean) / √(var + eps) · weight +
// bias per channel, the channels on axis 1. In training mode mean and var
// are the batch's (var biased), and each training run moves the running
// statistics towards them by momentum (the variance unbiased), as
// StateUpdates gives them; in evaluation mode the running statistics
// normalise. Its state dict names are PyTorch's: weight, bias,
// running_mean, running_var and num_batches_tracked.
type BatchNorm struct {
	Weight            *graph.Node // (C), starts at 1
	Bias              *graph.Node // (C), starts at 0
	RunningMean       *graph.Node `nn:",buffer"` // (C), starts at 0
	RunningVar        *graph.Node `nn:",buffer"` // (C), starts at 1
	NumBatchesTracked *graph.Node `nn:",buffer"`
	channels          int
	rank              int // the input's: 2 or 3 for BatchNorm1d, 4 for BatchNorm2d
	eps, momentum     float64
	training          bool
	updates           map[*graph.Node]*graph.Node
	name              string
}

// NewBatchNorm2d adds to g a BatchNorm over images (N, C, H, W). PyTorch's
// defaults are eps 1e-5 and momentum 0.1.
func NewBatchNorm2d(g *graph.Graph, name string, channels int, eps, momentum float64, opts ...Option) *BatchNorm {
	return newBatchNorm(g, "BatchNorm2d", name, channels, 4, eps, momentum, opts)
}

// NewBatchNorm1d adds to g a BatchNorm over (N, C) or (N, C, L) inputs.
func NewBatchNorm1d(g *graph.Graph, name string, channels int, eps, momentum float64, opts ...Option) *BatchNorm {
	return newBatchNorm(g, "BatchNorm1d", name, channels, 0, eps, momentum, opts)
}

func newBatchNorm(g *graph.Graph, kind, name string, channels, rank int, eps, momentum float64, opts []Option) *BatchNorm {
	b := newBuilder(g, kind, name, Ones(), Zeros(), opts)
	n := &BatchNorm{channels: channels, rank: rank, eps: eps, momentum: momentum, training: true, name: b.name}
	if channels <= 0 || !(eps >= 0) || !(momentum >= 0 && momentum <= 1) {
		n.Weight = b.fail("channels %d must be positive, eps %v ≥ 0 and momentum %v in [0, 1]", channels, eps, momentum)
		return n
	}
	n.Weight = b.param("weight", b.o.weightInit, channels, channels, channels)
	n.Bias = b.param("bias", b.o.biasInit, channels, channels, channels)
	n.RunningMean = b.param("running_mean", Zeros(), channels, channels, channels)
	n.RunningVar = b.param("running_var", Ones(), channels, channels, channels)
	n.NumBatchesTracked = b.buffer("num_batches_tracked")
	return n
}

// SetTraining switches between batch statistics (training) and running
// statistics (evaluation) for the Forward calls that follow.
func (n *BatchNorm) SetTraining(training bool) { n.training = training }

// Forward normalises x. In training mode it also builds the updates of
// the running statistics (StateUpdates), from the last training Forward.
func (n *BatchNorm) Forward(x *graph.Node) *graph.Node {
	if n == nil || n.Weight == nil {
		return unmade(x, "BatchNorm", "NewBatchNorm1d or nn.NewBatchNorm2d")
	}
	return inScope(x, "BatchNorm", n.name, func() *graph.Node {
		shape := x.Shape()
		r := len(shape)
		if (n.rank == 0 && r != 2 && r != 3) || (n.rank != 0 && r != n.rank) || shape[1] != n.channels {
			want := "(N, C, H, W)"
			if n.rank == 0 {
				want = "(N, C) or (N, C, L)"
			}
			return fail(x, "BatchNorm", "%q: input %v is not %s with C = %d", n.name, x.Type(), want, n.channels)
		}
		axes := []int{0}
		for a := 2; a < r; a++ {
			axes = append(axes, a)
		}
		if n.training {
			count := graph.ShapeSize(shape) / n.channels
			if count < 2 {
				return fail(x, "BatchNorm", "%q: input %v has %d value per channel: training needs more than one", n.name, x.Type(), count)
			}
			n.track(x, ops.ChannelMean(x), ops.ChannelVar(x), axes)
			return ops.BatchNorm(x, n.Weight, n.Bias, n.eps)
		}
		g := x.Graph()
		scale := ops.Div(n.Weight, ops.Sqrt(ops.Add(n.RunningVar, g.Scalar(n.eps, x.DType()))))
		return ops.ChannelAffine(x, scale, ops.Sub(n.Bias, ops.Mul(n.RunningMean, scale)))
	})
}

// track builds the running statistics' updates from a batch's mean and
// biased variance of x over axes, (C). The variance is made unbiased with the
// count of values per channel taken from x's shape at run time, so
// that the update stays right when a vm.Runner replays it for another
// batch size.
func (n *BatchNorm) track(x, mean, variance *graph.Node, axes []int) {
	m := n.momentum
	g := x.Graph()
	count := graph.Apply(countOp{mask: axesMask(axes)}, x)
	unbiased := ops.Div(count, ops.Sub(count, g.Scalar(1, x.DType())))
	perChannel := func(v *graph.Node) *graph.Node { return ops.StopGradient(ops.Reshape(v, n.channels)) }
	blend := func(running, batch *graph.Node) *graph.Node {
		return ops.Add(ops.Scale(running, 1-m), ops.Scale(batch, m))
	}
	n.updates = map[*graph.Node]*graph.Node{
		n.RunningMean:       blend(n.RunningMean, perChannel(mean)),
		n.RunningVar:        blend(n.RunningVar, ops.Mul(perChannel(variance), unbiased)),
		n.NumBatchesTracked: ops.Add(n.NumBatchesTracked, g.Scalar(1, graph.Float64)),
	}
}

// StateUpdates moves the running statistics at each run of a program that
// holds a training-mode Forward.
func (n *BatchNorm) StateUpdates() map[*graph.Node]*graph.Node { return n.updates }

// Describe gives the layer's settings, as PyTorch prints them.
func (n *BatchNorm) Describe() string {
	return fmt.Sprintf("%d, eps=%v, momentum=%v, affine=True, track_running_stats=True", n.channels, n.eps, n.momentum)
}

// String prints the module as a tree (see Format).
func (n *BatchNorm) String() string { return Format(n) }

// Name is the name the module was made with, which prefixes its
// parameters' names.
func (n *BatchNorm) Name() string {
	if n == nil {
		return ""
	}
	return n.name
}

// countOp gives, as a scalar of x's dtype, the number of elements of x in
// one slice along the axes set in mask (the values a channel's statistics
// average over), read from x's shape when it runs, not from its values.
type countOp struct{ mask uint64 }

// axesMask sets bit a for each axis a.
func axesMask(axes []int) uint64 {
	var m uint64
	for _, a := range axes {
		m |= 1 << a
	}
	return m
}

func (countOp) Name() string { return "Count" }

func (countOp) Type(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 1); err != nil {
		return graph.Type{}, err
	}
	return graph.TypeOf(in[0].DType), nil
}

func (op countOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	n := 1
	for a, d := range in[0].Shape() {
		if op.mask&(1<<a) != 0 {
			n *= d
		}
	}
	graph.SetFloat(out, 0, float64(n))
	return nil
}

// CUDA is the count's GPU kernel (graph.CUDAKernel): it writes the count,
// which the input's type fixes, so that a training step's batch
// normalisation does not copy its input to the host.
func (op countOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	n := int64(1)
	for a, d := range in[0].Shape {
		if op.mask&(1<<a) != 0 {
			n *= int64(d)
		}
	}
	return []graph.CUDASource{{N: 1, Body: fmt.Sprintf("out0[i] = (%s)%dLL;", ops.CType(out[0].DType), n)}}, nil
}

// Backward: a count does not depend on the values.
func (countOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node { return []*graph.Node{nil} }

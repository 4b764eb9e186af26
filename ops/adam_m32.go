package ops

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// adamM32Op is Adam's step of a float64 parameter whose moments are
// float32 (see AdamM32). Its inputs are p, g, m, v, the step size, eps,
// then the bias correction (with corrected) and the decay (with a mode
// that decays).
type adamM32Op struct {
	beta1, beta2 float64
	corrected    bool
	mode         vek.AdamDecay
}

// AdamM32 returns the next values of a float64 parameter p and of its
// float32 moments m and v after Adam's step with gradient g (p's type; m
// and v float32 of p's shape), as nn.AdamConfig.Float32Moments builds it:
//
//	γ  = float32(g), or float32(g + p·decay) with decay and not decoupled
//	m1 = β1·m + (1-β1)·γ
//	v1 = β2·v + (1-β2)·γ²
//	δ  = stepSize·(m1 / (√v1/correction + eps))
//	p1 = p - float64(δ), or p·decay - float64(δ) with decay and decoupled
//
// with γ, m1, v1 and δ in float32 arithmetic, each operation rounded on
// its own (the scalars rounded to float32, but decay), and decay's
// product and p1's difference in float64 (see vek.AdamM32). stepSize,
// eps, correction and decay are float64 scalars; a nil correction divides
// by none (AdamConfig.FoldCorrection's form), a nil decay decays nothing.
// It has no gradient: it is an optimiser's update. A machine on a GPU
// runs it as one kernel (graph.CUDAKernel) of the same operations, each
// rounded to nearest by itself: from the same inputs, the CPU's bits
// (NaNs' payloads aside).
func AdamM32(p, g, m, v, stepSize, eps, correction, decay *graph.Node, beta1, beta2 float64, decoupled bool) (p1, m1, v1 *graph.Node) {
	op := adamM32Op{beta1: beta1, beta2: beta2, corrected: correction != nil}
	in := []*graph.Node{p, g, m, v, stepSize, eps}
	if correction != nil {
		in = append(in, correction)
	}
	if decay != nil {
		op.mode = vek.L2Decay
		if decoupled {
			op.mode = vek.DecoupledDecay
		}
		in = append(in, decay)
	}
	out := graph.ApplyMulti(op, in...)
	if len(out) != 3 { // a node with the error
		return out[0], out[0], out[0]
	}
	return out[0], out[1], out[2]
}

func (op adamM32Op) Name() string { return "AdamM32" }

func (op adamM32Op) inputs() int {
	n := 6
	if op.corrected {
		n++
	}
	if op.mode != vek.NoDecay {
		n++
	}
	return n
}

// Types checks that p and g are float64 of one shape, m and v float32 of
// that shape and the scalars float64 of one element.
func (op adamM32Op) Types(in []graph.Type) ([]graph.Type, error) {
	if len(in) != op.inputs() {
		return nil, fmt.Errorf("%d inputs, want %d", len(in), op.inputs())
	}
	p := in[0]
	if p.DType != graph.Float64 {
		return nil, fmt.Errorf("the parameter is %v, want float64", p.DType)
	}
	for i, want := range []graph.Type{p, p, graph.TypeOf(graph.Float32, p.Shape...), graph.TypeOf(graph.Float32, p.Shape...)} {
		if in[i].DType != want.DType || !slices.Equal(in[i].Shape, want.Shape) {
			return nil, fmt.Errorf("%s is %v, want %v", [...]string{"p", "g", "m", "v"}[i], in[i], want)
		}
	}
	for i, t := range in[4:] {
		if t.DType != graph.Float64 || t.Size() != 1 {
			return nil, fmt.Errorf("scalar input %d is %v, want a float64 of one element", 4+i, t)
		}
	}
	return []graph.Type{in[0], in[2], in[3]}, nil
}

// Overwrites lets p1, m1 and v1 be written over p, m and v: each element
// is read before it is written, by one part.
func (op adamM32Op) Overwrites(out, in int) bool {
	return out == 0 && in == 0 || out == 1 && in == 2 || out == 2 && in == 3
}

// Cost: about Adam's square root and two divisions an element; every
// input read and output written once.
func (op adamM32Op) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out, graph.TypeOf(graph.Float32, out.Shape...), graph.TypeOf(graph.Float32, out.Shape...))
	c.Flops = int64(adamSteps) * int64(out.Size())
	return c
}

// Forward computes the step serially.
func (op adamM32Op) Forward(out []*tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// adamM32Task runs a step over parts of the elements, a multiple of 16 each.
type adamM32Task struct {
	p1, p, g     []float64
	m1, v1, m, v []float32
	k            vek.AdamScalars[float64]
	chunk        int
}

type adamM32Key struct{}

func (t *adamM32Task) Do(part int) {
	lo := part * t.chunk
	hi := min(lo+t.chunk, len(t.p1))
	vek.AdamM32(t.p1[lo:hi], t.m1[lo:hi], t.v1[lo:hi], t.p[lo:hi], t.g[lo:hi], t.m[lo:hi], t.v[lo:hi], &t.k)
}

// ForwardExec computes the step over e's threads when it is large, in
// parts of multiples of 16 elements: the same elements whatever the
// number of threads.
func (op adamM32Op) ForwardExec(e *graph.Exec, out []*tensor.Dense, in []*tensor.Dense) error {
	if len(out) != 3 || len(in) != op.inputs() {
		return fmt.Errorf("AdamM32: %d outputs and %d inputs, want 3 and %d", len(out), len(in), op.inputs())
	}
	t := e.State(adamM32Key{}, func() any { return new(adamM32Task) }).(*adamM32Task)
	t.p1, t.m1, t.v1 = out[0].Float64s(), out[1].Float32s(), out[2].Float32s()
	t.p, t.g, t.m, t.v = in[0].Float64s(), in[1].Float64s(), in[2].Float32s(), in[3].Float32s()
	scalar := func(i int) float64 { return in[i].Float64s()[0] }
	t.k = vek.AdamScalars[float64]{
		Beta1: op.beta1, OneMinusBeta1: 1 - op.beta1, Beta2: op.beta2, OneMinusBeta2: 1 - op.beta2,
		StepSize: scalar(4), Correction: 1, Eps: scalar(5), Mode: op.mode,
	}
	next := 6
	if op.corrected {
		t.k.Correction, next = scalar(next), next+1
	}
	if op.mode != vek.NoDecay {
		t.k.Decay = scalar(next)
	}
	n := len(t.p1)
	t.chunk = max(n, 1)
	if e.Threads() > 1 && n*adamCost >= parallelMin {
		t.chunk = max(16, parallelChunk/adamCost&^15)
	}
	e.Parallel((n+t.chunk-1)/t.chunk, t)
	return nil
}

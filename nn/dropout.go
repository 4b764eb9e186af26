package nn

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Dropout zeroes each element of its input with probability p during
// training and scales the others by 1/(1-p), so that the expected output is
// the input; in evaluation mode it is the identity.
//
// The mask is drawn by an op (see DropoutMask) from a counter-based
// generator keyed by the module's seed and its step counter, a buffer that
// each training run advances by one (see StateUpdates and TrainingUpdates):
// every step draws a fresh mask, the training program allocates nothing,
// and a run is reproducible from the seed and the step.
type Dropout struct {
	// Step counts the training runs; it selects the mask.
	Step     *graph.Node `nn:",buffer"`
	p        float64
	seed     uint64
	training bool
	streams  uint64 // masks drawn so far, so that two calls differ
	updates  map[*graph.Node]*graph.Node
	name     string
}

// NewDropout adds to g the step counter ("name.step", a float64 scalar
// buffer) of a Dropout module with drop probability p in [0, 1]. Its seed is
// drawn from WithRand's generator, or from the name's; it belongs to the
// module's construction, not to its checkpointed state, so a model rebuilt
// the same way and loaded from a checkpoint draws the same masks as the
// original would have. It starts in training mode (see SetTraining).
func NewDropout(g *graph.Graph, name string, p float64, opts ...Option) *Dropout {
	b := newBuilder(g, "Dropout", name, nil, nil, opts)
	d := &Dropout{p: p, seed: b.o.rng.Uint64(), training: true, name: b.name}
	if !(p >= 0 && p <= 1) {
		d.Step = b.fail("drop probability %v is not in [0, 1]", p)
		return d
	}
	d.Step = b.buffer("step")
	return d
}

// SetTraining switches between training (random mask) and evaluation
// (identity) for the Forward calls that follow.
func (d *Dropout) SetTraining(training bool) { d.training = training }

// Forward returns x with dropout applied in training mode, x itself in
// evaluation mode.
func (d *Dropout) Forward(x *graph.Node) *graph.Node {
	if d == nil {
		return fail(x, "Dropout", "the module is nil")
	}
	return inScope(x, d.name, func() *graph.Node {
		if !d.training || d.p == 0 {
			return x
		}
		if p := graph.Poisoned(d.Step); p != nil {
			return x.Graph().Fail(p.Err())
		}
		// The mask takes its shape from x, so that a graph replayed at another
		// batch size (vm.Runner) draws a mask of that size.
		mask := graph.Apply(dropoutMaskOp{p: d.p, seed: d.seed + d.streams*0x9e3779b97f4a7c15, like: true}, d.Step, x)
		d.streams++
		if d.updates == nil {
			d.updates = map[*graph.Node]*graph.Node{d.Step: ops.Add(d.Step, d.Step.Graph().Scalar(1, graph.Float64))}
		}
		return ops.Mul(x, mask)
	})
}

// StateUpdates advances the step counter at each run of a program that
// holds a training-mode Forward.
func (d *Dropout) StateUpdates() map[*graph.Node]*graph.Node { return d.updates }

// Describe gives the drop probability, as PyTorch prints it.
func (d *Dropout) Describe() string { return fmt.Sprintf("p=%v", d.p) }

// String prints the module as a tree (see Format).
func (d *Dropout) String() string { return Format(d) }

// Name is the name the module was made with, which prefixes its
// parameters' names.
func (d *Dropout) Name() string {
	if d == nil {
		return ""
	}
	return d.name
}

// dropoutMaskOp draws a dropout mask of a fixed type from a scalar step.
// dropoutMaskOp draws a dropout mask of a fixed type from a scalar step,
// or, like, of the type of its second input (whose values it ignores).
type dropoutMaskOp struct {
	p     float64
	seed  uint64
	dtype tensor.Dtype
	shape []int
	like  bool
}

// DropoutMask returns a mask of the given dtype and shape whose elements
// are 0 with probability p and 1/(1-p) otherwise (all 0 when p is 1). The
// mask is a pure function of seed and the value of step, a scalar: each
// element hashes (seed, step, index) with SplitMix64, so the same step gives
// the same mask and the next step a fresh one. It has no gradient.
func DropoutMask(step *graph.Node, p float64, seed uint64, dtype tensor.Dtype, shape ...int) *graph.Node {
	return graph.Apply(dropoutMaskOp{p: p, seed: seed, dtype: dtype, shape: append([]int(nil), shape...)}, step)
}

// Name is "DropoutMask".
func (dropoutMaskOp) Name() string { return "DropoutMask" }

// Key identifies the op by all its parameters (its shape is a slice).
func (op dropoutMaskOp) Key() string {
	if op.like {
		return fmt.Sprintf("%v/%d/like", op.p, op.seed)
	}
	return fmt.Sprintf("%v/%d/%v%s", op.p, op.seed, op.dtype, graph.ShapeString(op.shape))
}

// Type checks that the step is a scalar and gives the mask's type.
func (op dropoutMaskOp) Type(in []graph.Type) (graph.Type, error) {
	arity := 1
	if op.like {
		arity = 2
	}
	if err := graph.CheckArity(in, arity); err != nil {
		return graph.Type{}, err
	}
	if op.like {
		op.dtype, op.shape = in[1].DType, in[1].Shape
	}
	switch {
	case !in[0].IsScalar():
		return graph.Type{}, fmt.Errorf("step must be a scalar, got %v", in[0])
	case !(op.p >= 0 && op.p <= 1):
		return graph.Type{}, fmt.Errorf("drop probability %v is not in [0, 1]", op.p)
	case !graph.IsFloat(op.dtype):
		return graph.Type{}, fmt.Errorf("dtype %v is not supported (float32 or float64)", op.dtype)
	}
	return graph.TypeOf(op.dtype, op.shape...), nil
}

// Forward fills the mask for the step's value.
func (op dropoutMaskOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	step := math.Float64bits(graph.Float(in[0], 0))
	if out.Dtype() == graph.Float32 {
		fillMask(out.Float32s(), op.p, op.seed, step)
	} else {
		fillMask(out.Float64s(), op.p, op.seed, step)
	}
	return nil
}

// Backward: the mask does not depend smoothly on the step.
func (op dropoutMaskOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node {
	if op.like {
		return []*graph.Node{nil, nil}
	}
	return []*graph.Node{nil}
}

func fillMask[T float32 | float64](out []T, p float64, seed, step uint64) {
	scale := T(0)
	if p < 1 {
		scale = T(1 / (1 - p))
	}
	base := splitmix(seed ^ splitmix(step))
	for i := range out {
		u := float64(splitmix(base+uint64(i)*0x9e3779b97f4a7c15)>>11) / (1 << 53)
		if u < p {
			out[i] = 0
		} else {
			out[i] = scale
		}
	}
}

// splitmix is SplitMix64's output function: a bijective mix of x's bits.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

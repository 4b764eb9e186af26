package nn

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Dropout zeroes each element of its input with probability p during
// training and scales the others by 1/(1-p), so that the expected output is
// the input; in evaluation mode it is the identity.
//
// The mask is drawn from uniforms of a Philox-4x32-10 stream (see
// ops.RandomUniformLike and DropoutMask) keyed by the module's seed, one
// stream per Forward call, at its step counter, a buffer that each training
// run advances by one (see StateUpdates and TrainingUpdates): every step
// draws a fresh mask, the training program allocates nothing, and a run is
// reproducible from the seed and the step on any number of threads.
type Dropout struct {
	// Step counts the training runs; it selects the mask.
	Step     *graph.Node `nn:",buffer"`
	p        float64
	seed     uint64
	training bool
	streams  uint32 // masks drawn so far: each call draws its own stream
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
		return unmade(x, "Dropout", "NewDropout")
	}
	return inScope(x, "Dropout", d.name, func() *graph.Node {
		if !d.training || d.p == 0 {
			return x
		}
		if p := graph.Poisoned(d.Step); p != nil {
			return x.Graph().Fail(p.Err())
		}
		// The mask takes its shape from x, so that a graph replayed at another
		// batch size (vm.Runner) draws a mask of that size.
		mask := dropoutMask(d.p, ops.RandomUniformLike(d.Step, ops.Stream{Seed: d.seed, ID: d.streams}, x))
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

// DropoutMask returns a mask of the given dtype and shape whose elements
// are 0 with probability p and 1/(1-p) otherwise (all 0 when p is 1). The
// mask is a pure function of seed and the value of step, a non-negative
// integer scalar: element i is 0 where the uniform that stream 0 of seed
// draws there at that step (ops.RandomUniform, Philox-4x32-10) is below p,
// so the same step gives the same mask and the next step a fresh one. It
// has no gradient.
func DropoutMask(step *graph.Node, p float64, seed uint64, dtype tensor.Dtype, shape ...int) *graph.Node {
	if !(p >= 0 && p <= 1) {
		return fail(step, "DropoutMask", "drop probability %v is not in [0, 1]", p)
	}
	return checked("DropoutMask", []string{"step"}, func(in []*graph.Node) *graph.Node {
		return dropoutMask(p, ops.RandomUniform(in[0], ops.Stream{Seed: seed}, dtype, shape...))
	}, step)
}

// dropoutMask turns uniforms u into a mask: 0 where u < p, 1/(1-p)
// elsewhere.
func dropoutMask(p float64, u *graph.Node) *graph.Node {
	if graph.Poisoned(u) != nil {
		return u
	}
	scale := 0.0
	if p < 1 {
		scale = 1 / (1 - p)
	}
	g, dtype := u.Graph(), u.DType()
	return ops.Where(ops.Less(u, g.Scalar(p, dtype)), g.Scalar(0, dtype), g.Scalar(scale, dtype))
}

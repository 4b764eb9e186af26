package ops

import (
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/philox"
)

// Random ops draw from a Philox-4x32-10 stream (see Stream) at a step read
// from their first input, a scalar: the same stream and step give the same
// values on any number of threads, and a program that advances the step
// (see Generator) draws fresh values at each run. Element i of a float32
// output comes from word i mod 4 of block i/4; a float64 element takes two
// words, so element i comes from block i/2. A prefix of a larger draw is
// the smaller draw: a Runner replaying a graph at a smaller batch size
// draws the first rows of the larger batch's values.
//
// The values are:
//   - uniform on [0, 1): the top 24 bits of a word times 2⁻²⁴ (float32),
//     the top 53 bits of two words times 2⁻⁵³ (float64), exact in both;
//   - standard normal by the Box–Muller transform, as cuRAND's
//     curand_normal4 does: from uniforms u in (0, 1] and v, the pair
//     √(−2 ln u)·cos 2πv and √(−2 ln u)·sin 2πv; float32 pairs take one
//     word each for u and v and are computed in float32 arithmetic by a
//     fixed procedure another device can repeat bit for bit (see
//     normalPair32), float64 pairs take 53-bit uniforms (two words each)
//     and a fixed float64 procedure, math.Log's and math.Sincos's (see
//     normalPair64). Box–Muller turns two uniforms into two
//     normals with no rejection, so every element maps to fixed counters,
//     which the inverse CDF also would, at several times the cost.
//
// A random op's output does not depend smoothly on anything: it has no
// gradient with respect to its step (Backward returns nil). Reparameterised
// samples carry gradients through the ops applied to them (μ + σ·ε).

// randomKind is a random op's distribution.
type randomKind uint8

const (
	uniformKind randomKind = iota
	normalKind
)

func (k randomKind) String() string {
	if k == normalKind {
		return "RandomNormal"
	}
	return "RandomUniform"
}

// maxRandomBlocks bounds the blocks a random op reads: the block index is
// one 32-bit word of the counter.
const maxRandomBlocks = 1 << 32

// randomOp draws a tensor of a fixed type, or, like, of the type of its
// second input (whose values it ignores), from stream s at the step held
// by its first input.
type randomOp struct {
	kind  randomKind
	s     Stream
	dtype tensor.Dtype
	shape []int
	like  bool
}

// RandomUniform returns a tensor of the given dtype and shape, uniform on
// [0, 1), drawn from stream s at the value of step, a scalar holding a
// non-negative integer. Prefer a Generator, which hands each node its own
// stream and advances the step; this builder serves callers that manage
// streams themselves. It has no gradient.
func RandomUniform(step *graph.Node, s Stream, dtype tensor.Dtype, shape ...int) *graph.Node {
	return graph.Apply(randomOp{kind: uniformKind, s: s, dtype: dtype, shape: append([]int(nil), shape...)}, step)
}

// RandomNormal returns a tensor of standard normal values of the given
// dtype and shape, drawn from stream s at the value of step (see
// RandomUniform).
func RandomNormal(step *graph.Node, s Stream, dtype tensor.Dtype, shape ...int) *graph.Node {
	return graph.Apply(randomOp{kind: normalKind, s: s, dtype: dtype, shape: append([]int(nil), shape...)}, step)
}

// RandomUniformLike is RandomUniform with x's dtype and shape; x's values
// are not read, so a graph replayed at another batch size draws a tensor
// of the new size.
func RandomUniformLike(step *graph.Node, s Stream, x *graph.Node) *graph.Node {
	return graph.Apply(randomOp{kind: uniformKind, s: s, like: true}, step, x)
}

// RandomNormalLike is RandomNormal with x's dtype and shape (see
// RandomUniformLike).
func RandomNormalLike(step *graph.Node, s Stream, x *graph.Node) *graph.Node {
	return graph.Apply(randomOp{kind: normalKind, s: s, like: true}, step, x)
}

// RandomBernoulli returns a tensor of p's type whose elements are 1 with
// the probability held by p's element there and 0 otherwise: 1 where a
// uniform drawn from stream s at step (as RandomUniformLike) is below p.
// The probabilities resolve to 2⁻²⁴ in float32, 2⁻⁵³ in float64. A p
// outside [0, 1], or NaN, has no distribution: the draw there is NaN, as
// PyTorch refuses to sample it (and as RandomCategorical draws for a row
// without a distribution), so that vm.WithNaNCheck reports it and any
// value computed from it shows it, rather than a 0 or a 1 drawn as if p
// were clamped. It has no gradient.
func RandomBernoulli(step *graph.Node, s Stream, p *graph.Node) *graph.Node {
	if bad := checkAs("RandomBernoulli", randomOp{kind: uniformKind, s: s, like: true}, step, p); bad != nil {
		return bad
	}
	draw := Less(RandomUniformLike(step, s, p), p)
	// √(p·(1−p)) is NaN exactly where p is outside [0, 1] or NaN (its
	// square is negative, or an infinity's product): there, not equal to
	// itself. The NaN drawn is a constant's, the same bits on every device.
	r := Sqrt(Mul(p, Sub(scalarLike(p, 1), p)))
	return Where(Equal(r, r), draw, scalarLike(p, math.NaN()))
}

// Name is "RandomUniform" or "RandomNormal".
func (op randomOp) Name() string { return op.kind.String() }

// Key identifies the op by its distribution, stream and type (its shape is
// a slice), so that two streams never merge.
func (op randomOp) Key() string {
	if op.like {
		return fmt.Sprintf("%v/%d/%d/like", op.kind, op.s.Seed, op.s.ID)
	}
	return fmt.Sprintf("%v/%d/%d/%v%s", op.kind, op.s.Seed, op.s.ID, op.dtype, graph.ShapeString(op.shape))
}

// stepInput checks that in holds arity inputs, the first of them the
// step of a draw: a scalar.
func stepInput(in []graph.Type, arity int) error {
	if err := graph.CheckArity(in, arity); err != nil {
		return err
	}
	if !in[0].IsScalar() {
		return fmt.Errorf("step must be a scalar, got %v", in[0])
	}
	return nil
}

// Type checks that the step is a scalar and gives the output's type.
func (op randomOp) Type(in []graph.Type) (graph.Type, error) {
	arity := 1
	if op.like {
		arity = 2
	}
	if err := stepInput(in, arity); err != nil {
		return graph.Type{}, err
	}
	if op.like {
		op.dtype, op.shape = in[1].DType, in[1].Shape
	}
	if !graph.IsFloat(op.dtype) {
		return graph.Type{}, fmt.Errorf("dtype %s is not supported (float32 or float64)", dtypeName(op.dtype))
	}
	for _, d := range op.shape {
		if d < 0 {
			return graph.Type{}, fmt.Errorf("negative dimension in shape %s", graph.ShapeString(op.shape))
		}
	}
	t := graph.TypeOf(op.dtype, op.shape...)
	if _, err := graph.Bytes(t.DType, t.Shape, math.MaxInt64); err != nil {
		return graph.Type{}, err
	}
	if blocks := (uint64(t.Size()) + perBlock(op.dtype) - 1) / perBlock(op.dtype); blocks > maxRandomBlocks {
		return graph.Type{}, fmt.Errorf("%v has %d elements, over the %d one stream draws at a step", t, t.Size(), maxRandomBlocks*perBlock(op.dtype))
	}
	return t, nil
}

// perBlock is the number of elements of dtype one Philox block gives.
func perBlock(dtype tensor.Dtype) uint64 {
	if dtype == graph.Float64 {
		return 2
	}
	return 4
}

// Forward fills the output from the stream at the step's value.
func (op randomOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec fills the output, split over e's threads when it is large.
// Each element depends only on its index, so the values do not depend on
// the number of threads.
func (op randomOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	step, err := randomStep(in[0])
	if err != nil {
		return err
	}
	n, split := parts(e, graph.ShapeSize(out.Shape()))
	if !split {
		return forFloat(out.Dtype(),
			func() error { fillRandom(floats[float32](out), 0, op.kind, op.s, step); return nil },
			func() error { fillRandom(floats[float64](out), 0, op.kind, op.s, step); return nil })
	}
	return forFloat(out.Dtype(),
		func() error { runRandom[float32](e, n, op, step, out); return nil },
		func() error { runRandom[float64](e, n, op, step, out); return nil })
}

// randomStep reads a step: a non-negative integer, held exactly.
func randomStep(t *tensor.Dense) (uint64, error) {
	v := graph.Float(t, 0)
	if !(v >= 0 && v < 1<<64 && v == math.Trunc(v)) {
		return 0, fmt.Errorf("step %v is not a non-negative integer", v)
	}
	return uint64(v), nil
}

// Backward: random values do not depend smoothly on the step.
func (op randomOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node {
	if op.like {
		return []*graph.Node{nil, nil}
	}
	return []*graph.Node{nil}
}

// randomTask fills one part of a random output.
type randomTask[T float] struct {
	kind randomKind
	s    Stream
	step uint64
	o    []T
}

func (t *randomTask[T]) Do(p int) {
	lo, hi := span(p, len(t.o))
	fillRandom(t.o[lo:hi], lo, t.kind, t.s, t.step)
}

type randomTaskKey[T float] struct{}

func runRandom[T float](e *graph.Exec, n int, op randomOp, step uint64, out *tensor.Dense) {
	t := e.State(randomTaskKey[T]{}, func() any { return new(randomTask[T]) }).(*randomTask[T])
	t.kind, t.s, t.step, t.o = op.kind, op.s, step, floats[T](out)
	e.Parallel(n, t)
	t.o = nil // hold no buffer between runs
}

// fillRandom sets out to elements off, off+1, ... of the stream's draw at
// step. The whole blocks of a float32 normal draw go to philox.Normals32,
// which gives normalPair32's values bit for bit, and runs of 8 blocks of a
// float64 one to philox.Normals64, which gives blockValues' bit for bit.
func fillRandom[T float](out []T, off int, kind randomKind, s Stream, step uint64) {
	var z T
	shift := 2 // elements per block: 4 float32s or 2 float64s
	if unsafe.Sizeof(z) == 8 {
		shift = 1
	}
	per := 1 << shift
	var v [4]T
	for i := 0; i < len(out); {
		at := off + i
		if whole := (len(out) - i) &^ 3; per == 4 && kind == normalKind && at&3 == 0 && whole > 0 {
			o := unsafe.Slice((*float32)(unsafe.Pointer(&out[i])), whole)
			philox.Normals32(o, [4]uint32{uint32(at >> 2), uint32(step), uint32(step >> 32), s.ID},
				[2]uint32{uint32(s.Seed), uint32(s.Seed >> 32)})
			i += whole
			continue
		}
		if per == 2 && kind == normalKind && at&1 == 0 && len(out)-i >= 16 {
			o := unsafe.Slice((*float64)(unsafe.Pointer(&out[i])), len(out)-i)
			if n := philox.Normals64(o, [4]uint32{uint32(at >> 1), uint32(step), uint32(step >> 32), s.ID},
				[2]uint32{uint32(s.Seed), uint32(s.Seed >> 32)}); n > 0 {
				i += n
				continue
			}
		}
		if at&(per-1) == 0 && len(out)-i >= 2*per { // two whole blocks
			w, x := s.blocks2(step, uint32(at>>shift))
			blockValues(kind, w, out[i:i+per])
			blockValues(kind, x, out[i+per:i+2*per])
			i += 2 * per
			continue
		}
		blockValues(kind, s.block(step, uint32(at>>shift)), v[:per])
		for j := at & (per - 1); j < per && i < len(out); j++ {
			out[i] = v[j]
			i++
		}
	}
}

// blockValues turns one block into four float32 or two float64 values.
func blockValues[T float](kind randomKind, w [4]uint32, v []T) {
	var z T
	if unsafe.Sizeof(z) == 4 {
		v = v[:4]
		if kind == uniformKind {
			for j, x := range w {
				v[j] = T(float32(x>>8) * 0x1p-24)
			}
			return
		}
		a, b := normalPair32(w[0], w[1])
		c, d := normalPair32(w[2], w[3])
		v[0], v[1], v[2], v[3] = T(a), T(b), T(c), T(d)
		return
	}
	v = v[:2]
	x := uint64(w[0])<<32 | uint64(w[1])
	y := uint64(w[2])<<32 | uint64(w[3])
	if kind == uniformKind {
		v[0], v[1] = T(float64(x>>11)*0x1p-53), T(float64(y>>11)*0x1p-53)
		return
	}
	a, b := boxMuller((float64(x>>11)+0.5)*0x1p-53, (float64(y>>11)+0.5)*0x1p-53)
	v[0], v[1] = T(a), T(b)
}

// boxMuller maps uniforms u in (0, 1) and v to two independent standard
// normal values (see normalPair64).
func boxMuller(u, v float64) (float64, float64) { return normalPair64(u, v) }

// DrawStep is the position of the step input (see graph.Drawer).
func (randomOp) DrawStep() int { return 0 }

// DrawStep is the position of the step input (see graph.Drawer).
func (randomIntOp) DrawStep() int { return 0 }

// DrawStep is the position of the step input (see graph.Drawer).
func (randomCategoricalOp) DrawStep() int { return 0 }

// DrawStream is the stream drawn (see graph.Drawer).
func (op randomOp) DrawStream() (uint64, uint32) { return op.s.Seed, op.s.ID }

// DrawStream is the stream drawn (see graph.Drawer).
func (op randomIntOp) DrawStream() (uint64, uint32) { return op.s.Seed, op.s.ID }

// DrawStream is the stream drawn (see graph.Drawer).
func (op randomCategoricalOp) DrawStream() (uint64, uint32) { return op.s.Seed, op.s.ID }

// DrawStream is the stream drawn (see graph.Drawer).
func (op randomGammaOp) DrawStream() (uint64, uint32) { return op.s.Seed, op.s.ID }

// DrawStream is the stream drawn (see graph.Drawer).
func (op randomPermutationOp) DrawStream() (uint64, uint32) { return op.s.Seed, op.s.ID }

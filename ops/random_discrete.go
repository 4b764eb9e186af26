package ops

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// randomIntOp draws integers uniform on [low, high) from a stream.
type randomIntOp struct {
	s         Stream
	low, high int64
	dtype     tensor.Dtype
	shape     []int
}

// RandomInt returns a tensor of the given dtype (int32, int64, or a float
// dtype holding integers) and shape whose elements are uniform on the
// integers of [low, high), drawn from stream s at the value of step (see
// RandomUniform). Element i takes the 64 bits of words 2(i mod 2) and
// 2(i mod 2)+1 of block i/2, x, and is low + ⌊x·(high−low)/2⁶⁴⌋
// (Lemire's multiply-shift): each value's probability is within
// (high−low)/2⁶⁴ of 1/(high−low), and no draw is rejected, so every
// element maps to fixed counters. It has no gradient.
func RandomInt(step *graph.Node, s Stream, low, high int64, dtype tensor.Dtype, shape ...int) *graph.Node {
	return graph.Apply(randomIntOp{s: s, low: low, high: high, dtype: dtype, shape: append([]int(nil), shape...)}, step)
}

// Name is "RandomInt".
func (randomIntOp) Name() string { return "RandomInt" }

// Key identifies the op by its stream, range and type.
func (op randomIntOp) Key() string {
	return fmt.Sprintf("%d/%d/%d/%d/%v%s", op.s.Seed, op.s.ID, op.low, op.high, op.dtype, graph.ShapeString(op.shape))
}

// exactInts is the largest magnitude of the integers each dtype holds
// exactly.
var exactInts = map[tensor.Dtype]int64{graph.Float32: 1 << 24, graph.Float64: 1 << 53, graph.Int32: 1<<31 - 1, graph.Int64: 1<<63 - 1}

// exactLimit checks the step input of an integer draw (stepInput) and
// its dtype, and returns the dtype's exactInts.
func exactLimit(in []graph.Type, dtype tensor.Dtype) (int64, error) {
	if err := stepInput(in, 1); err != nil {
		return 0, err
	}
	limit, ok := exactInts[dtype]
	if !ok {
		return 0, fmt.Errorf("dtype %s is not supported (int32, int64, float32 or float64)", dtypeName(dtype))
	}
	return limit, nil
}

// Type checks the step, the range and the dtype.
func (op randomIntOp) Type(in []graph.Type) (graph.Type, error) {
	limit, err := exactLimit(in, op.dtype)
	if err != nil {
		return graph.Type{}, err
	}
	switch {
	case op.low >= op.high:
		return graph.Type{}, fmt.Errorf("the range [%d, %d) is empty", op.low, op.high)
	case op.low < -limit || op.high-1 > limit:
		return graph.Type{}, fmt.Errorf("the range [%d, %d) holds integers that %v does not hold exactly (beyond ±%d)", op.low, op.high, op.dtype, limit)
	}
	for _, d := range op.shape {
		if d < 0 {
			return graph.Type{}, fmt.Errorf("negative dimension in shape %s", graph.ShapeString(op.shape))
		}
	}
	t := graph.TypeOf(op.dtype, op.shape...)
	if _, err := graph.Bytes(t.DType, t.Shape, 1<<62); err != nil {
		return graph.Type{}, err
	}
	if blocks := (uint64(t.Size()) + 1) / 2; blocks > maxRandomBlocks {
		return graph.Type{}, fmt.Errorf("%v has %d elements, over the %d one stream draws at a step", t, t.Size(), uint64(2*maxRandomBlocks))
	}
	return t, nil
}

// Forward fills the output from the stream at the step's value.
func (op randomIntOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	step, err := randomStep(in[0])
	if err != nil {
		return err
	}
	switch v := graph.Backing(out).(type) {
	case []float32:
		fillRandomInt(v, op, step)
	case []float64:
		fillRandomInt(v, op, step)
	case []int32:
		fillRandomInt(v, op, step)
	case []int64:
		fillRandomInt(v, op, step)
	}
	return nil
}

// Backward: random values do not depend smoothly on the step.
func (randomIntOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node {
	return []*graph.Node{nil}
}

func fillRandomInt[T float32 | float64 | int32 | int64](out []T, op randomIntOp, step uint64) {
	width := uint64(op.high - op.low) // high > low, so this wraps to the right width
	for i := 0; i < len(out); i += 2 {
		w := op.s.block(step, uint32(i/2))
		for j := 0; j < 2 && i+j < len(out); j++ {
			hi, _ := bits.Mul64(uint64(w[2*j])<<32|uint64(w[2*j+1]), width)
			out[i+j] = T(op.low + int64(hi))
		}
	}
}

// randomCategoricalOp draws a class per row of its logits input.
type randomCategoricalOp struct{ s Stream }

// RandomCategorical returns, for logits of shape (…, K), a tensor of shape
// (…) and logits' dtype holding for each row a class index in [0, K) drawn
// with probabilities softmax(row), from stream s at the value of step (see
// RandomUniform): the first class whose cumulative weight
// Σ exp(logit − max) exceeds u·Σ exp(logit − max), with u the row's
// uniform on [0, 1) (53 bits, as RandomUniform's float64 element of the
// row's index), the exponentials by a fixed procedure (math.Exp's Go
// code, see exp64) that the GPU kernel repeats, so that both draw the same
// classes. A row with a NaN or +∞ logit, or whose logits are all −∞, has
// no distribution: its draw is NaN, as torch refuses to sample it. It has
// no gradient.
func RandomCategorical(step *graph.Node, s Stream, logits *graph.Node) *graph.Node {
	return graph.Apply(randomCategoricalOp{s: s}, step, logits)
}

// Name is "RandomCategorical".
func (randomCategoricalOp) Name() string { return "RandomCategorical" }

// Type checks the step and that the logits have a non-empty last axis,
// and gives the batch shape.
func (op randomCategoricalOp) Type(in []graph.Type) (graph.Type, error) {
	if err := stepInput(in, 2); err != nil {
		return graph.Type{}, err
	}
	l := in[1]
	switch {
	case !graph.IsFloat(l.DType):
		return graph.Type{}, fmt.Errorf("logits %v: want float32 or float64", l)
	case len(l.Shape) == 0 || l.Shape[len(l.Shape)-1] == 0:
		return graph.Type{}, fmt.Errorf("logits %v have no classes: want a last axis of size ≥ 1", l)
	}
	out := l.WithShape(l.Shape[:len(l.Shape)-1]...)
	if blocks := (uint64(out.Size()) + 1) / 2; blocks > maxRandomBlocks {
		return graph.Type{}, fmt.Errorf("%d rows, over the %d one stream draws at a step", out.Size(), uint64(2*maxRandomBlocks))
	}
	return out, nil
}

// Forward draws each row's class.
func (op randomCategoricalOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	step, err := randomStep(in[0])
	if err != nil {
		return err
	}
	return forFloat(out.Dtype(),
		func() error { drawCategorical(floats[float32](out), floats[float32](in[1]), op.s, step); return nil },
		func() error { drawCategorical(floats[float64](out), floats[float64](in[1]), op.s, step); return nil })
}

// Backward: the draw does not depend smoothly on the step or the logits.
func (randomCategoricalOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node {
	return []*graph.Node{nil, nil}
}

func drawCategorical[T float](out, logits []T, s Stream, step uint64) {
	k := len(logits) / max(len(out), 1)
	var u [2]float64
	for r := range out {
		if r%2 == 0 {
			blockValues(uniformKind, s.block(step, uint32(r/2)), u[:])
		}
		row := logits[r*k : (r+1)*k]
		top := float64(row[0])
		for _, l := range row {
			top = max(top, float64(l))
		}
		total := 0.0
		for _, l := range row {
			total += exp64(float64(l) - top)
		}
		if total != total { // a NaN or +Inf logit (top), or all -Inf
			out[r] = T(math.NaN())
			continue
		}
		// The last class takes whatever rounding leaves.
		target, c := u[r%2]*total, 0
		for acc := exp64(float64(row[0]) - top); c < k-1 && acc <= target; {
			c++
			acc += exp64(float64(row[c]) - top)
		}
		out[r] = T(c)
	}
}

// randomPermutationOp draws a permutation of 0, …, n−1.
type randomPermutationOp struct {
	s     Stream
	n     int
	dtype tensor.Dtype
}

// RandomPermutation returns a tensor (n) of the given dtype (int32, int64,
// or a float dtype holding integers) holding a permutation of 0, …, n−1
// drawn uniformly from stream s at the value of step (see RandomUniform),
// as torch.randperm: the indices sorted by a 64-bit key each, element i's
// key the word pair RandomInt's element i takes, ties (probability below
// n²/2⁶⁵) broken by the index. On a GPU, a permutation of up to 2¹⁶
// elements is drawn there, each element ranking its key among all (n²
// work, no scratch memory to sort in), with the same result; a longer one
// sorts on the host. It has no gradient.
func RandomPermutation(step *graph.Node, s Stream, n int, dtype tensor.Dtype) *graph.Node {
	return graph.Apply(randomPermutationOp{s: s, n: n, dtype: dtype}, step)
}

// Name is "RandomPermutation".
func (randomPermutationOp) Name() string { return "RandomPermutation" }

// DrawStep is the position of the step input (see graph.Drawer).
func (randomPermutationOp) DrawStep() int { return 0 }

// Type checks the step, the length and the dtype.
func (op randomPermutationOp) Type(in []graph.Type) (graph.Type, error) {
	limit, err := exactLimit(in, op.dtype)
	if err != nil {
		return graph.Type{}, err
	}
	switch {
	case op.n < 0:
		return graph.Type{}, fmt.Errorf("length %d is negative", op.n)
	case int64(op.n)-1 > limit:
		return graph.Type{}, fmt.Errorf("length %d: %v does not hold its indices exactly (beyond %d)", op.n, op.dtype, limit)
	case uint64(op.n+1)/2 > maxRandomBlocks:
		return graph.Type{}, fmt.Errorf("length %d, over the %d one stream draws at a step", op.n, uint64(2*maxRandomBlocks))
	}
	return graph.TypeOf(op.dtype, op.n), nil
}

// Forward sorts the indices by their keys.
func (op randomPermutationOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	step, err := randomStep(in[0])
	if err != nil {
		return err
	}
	keys := make([]uint64, op.n)
	idx := make([]int, op.n)
	for i := range keys {
		w := op.s.block(step, uint32(i/2))
		keys[i], idx[i] = uint64(w[2*(i%2)])<<32|uint64(w[2*(i%2)+1]), i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(keys[a], keys[b]); c != 0 {
			return c
		}
		return a - b
	})
	switch v := graph.Backing(out).(type) {
	case []float32:
		fillIndices(v, idx)
	case []float64:
		fillIndices(v, idx)
	case []int32:
		fillIndices(v, idx)
	case []int64:
		fillIndices(v, idx)
	}
	return nil
}

func fillIndices[T float32 | float64 | int32 | int64](out []T, idx []int) {
	for i, j := range idx {
		out[i] = T(j)
	}
}

// Backward: a permutation does not depend smoothly on the step.
func (randomPermutationOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node {
	return []*graph.Node{nil}
}

package ops

import (
	"fmt"
	"math"
	"math/bits"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vmath"
)

// reduceKind is the combiner a reduction applies along its axes.
type reduceKind uint8

const (
	reduceSum reduceKind = iota
	reduceMean
	reduceMax
	reduceLogSumExp
)

var reduceNames = [...]string{"Sum", "Mean", "Max", "LogSumExp"}

// reduceOp reduces its input over a set of axes. The axes are a bitmask
// (bit a set = axis a is reduced), so the op stays comparable and two
// reductions over the same axes merge however the user spelled them.
type reduceOp struct {
	kind reduceKind
	axes uint64
	keep bool // keep reduced axes as size-1 dimensions
}

// Sum returns the sum of x's elements over the given axes (negative axes
// count from the end), which are removed from the shape. With no axes it
// sums every element into a scalar. Summing over zero elements gives 0.
func Sum(x *graph.Node, axes ...int) *graph.Node { return reduce(reduceSum, false, x, axes) }

// SumKeepDims is Sum keeping the reduced axes as dimensions of size 1, so
// that the result broadcasts against x.
func SumKeepDims(x *graph.Node, axes ...int) *graph.Node { return reduce(reduceSum, true, x, axes) }

// Mean returns the mean of x's elements over the given axes (all axes when
// none are given), which are removed from the shape. The mean of zero
// elements is a build error.
func Mean(x *graph.Node, axes ...int) *graph.Node { return reduce(reduceMean, false, x, axes) }

// MeanKeepDims is Mean keeping the reduced axes as dimensions of size 1.
func MeanKeepDims(x *graph.Node, axes ...int) *graph.Node { return reduce(reduceMean, true, x, axes) }

// Max returns the maximum of x's elements over the given axes (all axes
// when none are given), which are removed from the shape. A NaN element
// makes its maximum NaN; the maximum of zero elements is a build error.
// Its gradient is shared equally between tied maxima.
func Max(x *graph.Node, axes ...int) *graph.Node { return reduce(reduceMax, false, x, axes) }

// MaxKeepDims is Max keeping the reduced axes as dimensions of size 1.
func MaxKeepDims(x *graph.Node, axes ...int) *graph.Node { return reduce(reduceMax, true, x, axes) }

// LogSumExp returns log(sum(exp(x))) over the given axes (all axes when none
// are given), which are removed from the shape. It subtracts the maximum
// before exponentiating, so large inputs do not overflow; over zero
// elements it is -Inf.
func LogSumExp(x *graph.Node, axes ...int) *graph.Node {
	return reduce(reduceLogSumExp, false, x, axes)
}

// LogSumExpKeepDims is LogSumExp keeping the reduced axes as dimensions of
// size 1.
func LogSumExpKeepDims(x *graph.Node, axes ...int) *graph.Node {
	return reduce(reduceLogSumExp, true, x, axes)
}

func reduce(kind reduceKind, keep bool, x *graph.Node, axes []int) *graph.Node {
	if p := poisoned(reduceNames[kind], x); p != nil {
		return p
	}
	mask, err := axisMask(x.Shape(), axes)
	if err != nil {
		return failBuilder(reduceNames[kind], err, x)
	}
	return graph.Apply(reduceOp{kind: kind, axes: mask, keep: keep}, x)
}

// failBuilder records an error a builder found before calling Apply (in its
// non-tensor arguments) on the inputs' graph, worded as Apply words type
// errors: the op, what is wrong, the inputs' types and the caller's
// file:line.
func failBuilder(op string, err error, inputs ...*graph.Node) *graph.Node {
	types := make([]graph.Type, len(inputs))
	for i, in := range inputs {
		types[i] = in.Type()
	}
	return inputs[0].Graph().Fail(&graph.Error{
		Op:   op,
		Err:  fmt.Errorf("%w (inputs %s)", err, graph.TypesString(types)),
		Site: graph.CallerSite(),
	})
}

// axisMask turns a list of axes into a bitmask for a tensor of the given
// shape: no axes means all of them.
func axisMask(shape []int, axes []int) (uint64, error) {
	rank := len(shape)
	if rank > maxRank {
		return 0, fmt.Errorf("rank %d is above the supported %d", rank, maxRank)
	}
	if len(axes) == 0 {
		return 1<<rank - 1, nil
	}
	var mask uint64
	for _, axis := range axes {
		a, err := graph.NormalizeAxis(axis, rank)
		if err != nil {
			return 0, err
		}
		if mask&(1<<a) != 0 {
			return 0, fmt.Errorf("axis %d appears twice in axes %v", a, axes)
		}
		mask |= 1 << a
	}
	return mask, nil
}

// keepShape writes into dst the shape of a reduction of shape over axes
// with the reduced axes kept as 1, without allocating.
func keepShape(dst *[maxRank]int, shape []int, axes uint64) []int {
	for a, d := range shape {
		if axes&(1<<a) != 0 {
			d = 1
		}
		dst[a] = d
	}
	return dst[:len(shape)]
}

// reducedCount is the number of elements each output of the reduction
// combines.
func reducedCount(shape []int, axes uint64) int {
	n := 1
	for a, d := range shape {
		if axes&(1<<a) != 0 {
			n *= d
		}
	}
	return n
}

func (op reduceOp) Name() string { return reduceNames[op.kind] }

// Cost is one flop per input element.
func (reduceOp) Cost(in []graph.Type, out graph.Type) graph.Cost { return reductionCost(in, out) }

func (op reduceOp) Type(in []graph.Type) (graph.Type, error) {
	dtype, err := graph.CheckInputs(in, 1)
	if err != nil {
		return graph.Type{}, err
	}
	if err := checkRank(in); err != nil {
		return graph.Type{}, err
	}
	x := in[0]
	if op.axes>>x.Rank() != 0 {
		return graph.Type{}, fmt.Errorf("axes %v out of range for rank %d", maskAxes(op.axes), x.Rank())
	}
	var buf [maxRank]int
	shape := keepShape(&buf, x.Shape, op.axes)
	if !op.keep {
		shape = shape[:0]
		for a, d := range x.Shape {
			if op.axes&(1<<a) == 0 {
				shape = append(shape, d)
			}
		}
	}
	empty := reducedCount(x.Shape, op.axes) == 0 && graph.ShapeSize(shape) > 0
	switch {
	case empty && op.kind == reduceMean:
		return graph.Type{}, fmt.Errorf("mean over axes %v of zero elements is undefined", maskAxes(op.axes))
	case empty && op.kind == reduceMax:
		return graph.Type{}, fmt.Errorf("maximum over axes %v of zero elements is undefined", maskAxes(op.axes))
	}
	return graph.TypeOf(dtype, shape...), nil
}

// maskAxes lists the axes of a bitmask in increasing order, for messages
// and for building gradients.
func maskAxes(mask uint64) []int {
	axes := make([]int, 0, bits.OnesCount64(mask))
	for a := 0; mask>>a != 0; a++ {
		if mask&(1<<a) != 0 {
			axes = append(axes, a)
		}
	}
	return axes
}

func (op reduceOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	v, ok := ContiguousView(in[0].Shape())
	if !ok {
		return fmt.Errorf("rank %d is above the supported %d", in[0].Dims(), maxRank)
	}
	return forFloat(in[0].Dtype(),
		func() error {
			reduceKernel(op, floats[float32](out), floats[float32](in[0]), &v)
			return nil
		},
		func() error {
			reduceKernel(op, floats[float64](out), floats[float64](in[0]), &v)
			return nil
		})
}

// reduceKernel is the one reduction engine: it walks its operand, the
// elements of view v of x (x as it lies, or a Transpose or Slice of it
// read in place: see ReadThrough), row by row in the operand's row-major
// order, with the output broadcast along the reduced axes (stride 0), so
// each row either folds into one output (last axis reduced) or combines
// elementwise into a row of outputs. Sum shares SumTo's kernel; Mean
// scales a sum; LogSumExp (of contiguous operands alone) is a maximum
// followed by a second, output-major pass.
func reduceKernel[T float](op reduceOp, out, x []T, v *View) {
	var buf [maxRank]int
	shape := v.shape[:v.rank]
	w := v.reductionWalker(keepShape(&buf, shape, op.axes))
	switch op.kind {
	case reduceSum, reduceMean:
		// A keep-dims sum is SumTo the keep-dims shape; dropping the
		// size-1 axes does not move any element.
		sumToKernel(&w, out, x)
		if count := reducedCount(shape, op.axes); op.kind == reduceMean && count > 0 {
			scale := 1 / T(count)
			for j := range out {
				out[j] *= scale
			}
		}
	case reduceMax, reduceLogSumExp:
		for j := range out {
			out[j] = T(math.Inf(-1))
		}
		if maxColumns(&w, out, x) {
			return
		}
		s := max(w.inner[1], 1) // 0 where rows are one element (a scalar's)
		w.rows(func(_, n int, off [3]int) {
			row := x[off[1] : off[1]+(n-1)*s+1]
			if w.inner[0] == 0 {
				out[off[0]] = maxOf(out[off[0]], row, s)
				return
			}
			dst := out[off[0] : off[0]+n]
			for j := range dst {
				dst[j] = maxNaN(dst[j], row[j*s])
			}
		})
		if op.kind == reduceLogSumExp {
			logSumExpPass(out, x, shape, op.axes)
		}
	}
}

// maxOf returns the maximum of m and xs[0], xs[stride], …; a NaN anywhere
// makes it NaN.
func maxOf[T float](m T, xs []T, stride int) T {
	for i := 0; i < len(xs); i += stride {
		m = maxNaN(m, xs[i])
	}
	return m
}

// maxNaN is the larger of m and v, or NaN if v is NaN; once m is NaN it
// stays NaN, since no comparison with NaN is true.
func maxNaN[T float](m, v T) T {
	if v > m || v != v {
		return v
	}
	return m
}

// logSumExpPass turns out, holding each output's maximum m, into
// m + log(sum(exp(x - m))). It walks x output-major (kept axes outermost),
// so each output's elements come one after another: their sum lives in a
// local, and m is read from out until the output is finished.
func logSumExpPass[T float](out, x []T, shape []int, axes uint64) {
	w := outputMajorWalker(shape, axes)
	cur, sum := -1, 0.0
	finish := func() {
		if m := float64(out[cur]); !math.IsInf(m, 0) && !math.IsNaN(m) {
			out[cur] = T(m + math.Log(sum))
		}
	}
	// The exponentials are taken a block of wideBlock at a time by vmath;
	// a block reads the maxima of outputs that are not finished yet.
	var buf [wideBlock]float64
	w.rows(func(_, n int, off [3]int) {
		for start := 0; start < n; start += wideBlock {
			b := buf[:min(wideBlock, n-start)]
			for i := range b {
				j := start + i
				b[i] = float64(x[off[1]+j*w.inner[1]] - out[off[0]+j*w.inner[0]])
			}
			vmath.Exp64(b, b)
			for i, e := range b {
				o := off[0] + (start+i)*w.inner[0]
				if o != cur {
					if cur >= 0 {
						finish()
					}
					cur, sum = o, 0
				}
				sum += e
			}
		}
	})
	if cur >= 0 {
		finish()
	}
}

// outputMajorWalker walks a tensor of the given shape with its kept axes
// outermost and its reduced axes innermost, giving for each row its offset
// into the reduction's output (input 0) and into the tensor (input 1).
// Strides along the last walked axis may be any value.
func outputMajorWalker(shape []int, axes uint64) walker {
	var strides, outStrides [maxRank]int
	s, os := 1, 1
	for a := len(shape) - 1; a >= 0; a-- {
		strides[a] = s
		s *= shape[a]
		if axes&(1<<a) == 0 {
			outStrides[a] = os
			os *= shape[a]
		}
	}
	w := walker{rank: len(shape)}
	j := 0
	for _, reduced := range [2]bool{false, true} {
		for a, d := range shape {
			if (axes&(1<<a) != 0) == reduced {
				w.shape[j] = d
				w.strides[0][j] = outStrides[a]
				w.strides[1][j] = strides[a]
				j++
			}
		}
	}
	if w.rank > 0 {
		w.inner[0], w.inner[1] = w.strides[0][w.rank-1], w.strides[1][w.rank-1]
	}
	return w
}

// Backward: each rule first views the output gradient (and, where needed,
// the output) in the keep-dims shape, so that it broadcasts against x.
func (op reduceOp) Backward(ctx *graph.GradContext, gradOut *graph.Node) []*graph.Node {
	if !ctx.NeedsGrad(0) {
		return []*graph.Node{nil}
	}
	x := ctx.Input(0)
	var buf [maxRank]int
	keep := keepShape(&buf, x.Shape(), op.axes)
	asKeep := func(n *graph.Node) *graph.Node {
		if op.keep {
			return n
		}
		return Reshape(n, keep...)
	}
	g := asKeep(gradOut)
	var grad *graph.Node
	switch op.kind {
	case reduceSum:
		grad = BroadcastTo(g, x.Shape()...)
	case reduceMean:
		scale := 1.0
		if count := reducedCount(x.Shape(), op.axes); count > 0 {
			scale = 1 / float64(count)
		}
		grad = Scale(BroadcastTo(g, x.Shape()...), scale)
	case reduceMax:
		mask := Equal(x, asKeep(ctx.Output()))
		ties := graph.Apply(reduceOp{kind: reduceSum, axes: op.axes, keep: true}, mask)
		grad = Mul(mask, Div(g, ties))
	case reduceLogSumExp:
		grad = Mul(g, Exp(Sub(x, asKeep(ctx.Output()))))
	}
	return []*graph.Node{grad}
}

// JVP: sums and means reduce the tangent; a maximum passes on its
// maximal elements' tangents (shared between ties, as its gradient is),
// a log-sum-exp their average weighted by softmax.
func (op reduceOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil {
		return nil
	}
	x := c.Input(0)
	var buf [maxRank]int
	keep := keepShape(&buf, x.Shape(), op.axes)
	var weight *graph.Node // of x's shape; none for a sum or mean
	switch op.kind {
	case reduceMax:
		mask := Equal(x, Reshape(c.Output(), keep...))
		weight = Div(mask, graph.Apply(reduceOp{kind: reduceSum, axes: op.axes, keep: true}, mask))
	case reduceLogSumExp:
		weight = Exp(Sub(x, Reshape(c.Output(), keep...)))
	}
	kind := op.kind
	if weight != nil {
		t, kind = Mul(t, weight), reduceSum
	}
	return graph.Apply(reduceOp{kind: kind, axes: batchedAxes(c, op.axes), keep: op.keep}, t)
}

// Batch reduces the same axes of each example: those after the batch's.
func (op reduceOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	return graph.Apply(reduceOp{kind: op.kind, axes: op.axes << 1, keep: op.keep}, c.Input(0))
}

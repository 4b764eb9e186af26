package ops

import (
	"unsafe"

	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// shapeParam is a shape held by an op in a comparable form, so that ops
// differing in it never merge. A shape of rank above maxRank keeps only its
// rank, and the op's Type rejects it.
type shapeParam struct {
	rank int
	dims [maxRank]int
}

func newShapeParam(shape []int) shapeParam {
	s := shapeParam{rank: len(shape)}
	if s.rank <= maxRank {
		copy(s.dims[:], shape)
	}
	return s
}

func (s *shapeParam) shape() ([]int, error) {
	if s.rank > maxRank {
		return nil, fmt.Errorf("rank %d is above the supported %d", s.rank, maxRank)
	}
	return s.dims[:s.rank], nil
}

// singleInput checks that an op has one float input and returns its type.
func singleInput(in []graph.Type) (graph.Type, error) {
	if _, err := graph.CheckInputs(in, 1); err != nil {
		return graph.Type{}, err
	}
	return in[0], nil
}

// layoutInput checks the single input of an op that moves its input's
// elements without computing on them (Transpose, BroadcastTo), which
// takes every dtype, integers as floats.
func layoutInput(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 1); err != nil {
		return graph.Type{}, err
	}
	return in[0], nil
}

// copyForward is the kernel of ops that only relabel their input's data
// (Reshape, Identity): out's elements are in's, in order, of any dtype.
func copyForward(out, in *tensor.Dense) error {
	n, m := graph.ShapeSize(out.Shape()), graph.ShapeSize(in.Shape())
	if n == m && out.Dtype() == in.Dtype() && n > 0 && sameData(out, in) {
		return nil // computed in place: the elements are there already
	}
	if n != m || out.Dtype() != in.Dtype() || graph.CopyValues(out, in) < n {
		return fmt.Errorf("%d input elements (%v) for %d outputs (%v)", m, in.Dtype(), n, out.Dtype())
	}
	return nil
}

// axisSpan splits a shape around axis: the product of the dimensions
// before it, its size, and the product of those after it.
func axisSpan(shape []int, axis int) (outer, dim, inner int) {
	return graph.ShapeSize(shape[:axis]), shape[axis], graph.ShapeSize(shape[axis+1:])
}

type reshapeOp struct{ to shapeParam }

// Reshape returns x's elements, in order, in the given shape. One dimension
// may be -1: it is inferred from x's size. x may hold integers (labels to
// flatten, say).
func Reshape(x *graph.Node, shape ...int) *graph.Node {
	return graph.Apply(reshapeOp{newShapeParam(shape)}, x)
}

func (reshapeOp) Name() string { return "Reshape" }

// InPlace is 0: a Reshape may take over its input's buffer, where it
// relabels the elements without moving them.
func (reshapeOp) InPlace() int { return 0 }

func (op reshapeOp) Type(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 1); err != nil {
		return graph.Type{}, err
	}
	x := in[0]
	spec, err := op.to.shape()
	if err != nil {
		return graph.Type{}, err
	}
	shape := make([]int, len(spec))
	infer := -1
	for i, d := range spec {
		switch {
		case d == -1 && infer < 0:
			infer, shape[i] = i, 1 // inferred below, from the others' product
			continue
		case d == -1:
			return graph.Type{}, fmt.Errorf("cannot reshape %s to %s: only one dimension may be -1",
				graph.ShapeString(x.Shape), graph.ShapeString(spec))
		case d < 0:
			return graph.Type{}, fmt.Errorf("cannot reshape %s to %s: bad dimension %d",
				graph.ShapeString(x.Shape), graph.ShapeString(spec), d)
		}
		shape[i] = d
	}
	known, ok := mulSizes(shape...)
	if !ok {
		return graph.Type{}, fmt.Errorf("cannot reshape %s to %s: more elements than an int can count",
			graph.ShapeString(x.Shape), graph.ShapeString(spec))
	}
	if infer >= 0 {
		if known == 0 {
			return graph.Type{}, fmt.Errorf("cannot reshape %s to %s: -1 is ambiguous next to a zero dimension",
				graph.ShapeString(x.Shape), graph.ShapeString(spec))
		}
		shape[infer] = x.Size() / known
	}
	if graph.ShapeSize(shape) != x.Size() {
		return graph.Type{}, fmt.Errorf("cannot reshape %s (%d elements) to %s",
			graph.ShapeString(x.Shape), x.Size(), graph.ShapeString(spec))
	}
	return x.WithShape(shape...), nil
}

func (reshapeOp) Forward(out *tensor.Dense, in []*tensor.Dense) error { return copyForward(out, in[0]) }

// Backward reshapes the gradient back to the input's shape.
func (reshapeOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{Reshape(g, ctx.Input(0).Shape()...)}
}

// JVP reshapes the tangent.
func (reshapeOp) JVP(c *graph.JVPContext) *graph.Node {
	if t := c.Tangent(0); t != nil {
		return Reshape(t, c.Shape(c.Output().Shape())...)
	}
	return nil
}

// Batch reshapes each example.
func (reshapeOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	return Reshape(c.Input(0), c.Shape(c.Example().Shape())...)
}

// broadcastsTo reports an error unless from broadcasts to shape to by NumPy's
// rules: aligned on the right, each dimension equal or 1.
func broadcastsTo(from, to []int) error {
	if len(from) <= len(to) {
		off := len(to) - len(from)
		ok := true
		for i, d := range from {
			ok = ok && (d == to[off+i] || d == 1)
		}
		if ok {
			return nil
		}
	}
	return fmt.Errorf("%s does not broadcast to %s", graph.ShapeString(from), graph.ShapeString(to))
}

// broadcastTypes checks the single input of BroadcastTo or SumTo (with
// input: layoutInput or singleInput) and the op's target shape, returning
// the input type and the target.
func broadcastTypes(in []graph.Type, target shapeParam, input func([]graph.Type) (graph.Type, error)) (graph.Type, []int, error) {
	x, err := input(in)
	if err != nil {
		return graph.Type{}, nil, err
	}
	if err := checkRank(in); err != nil {
		return graph.Type{}, nil, err
	}
	to, err := target.shape()
	return x, to, err
}

type broadcastToOp struct{ to shapeParam }

// BroadcastTo repeats x along new leading axes and along its axes of size 1
// to the given shape, by NumPy's broadcasting rules. x may have any dtype,
// integers included: its elements are moved as they are.
func BroadcastTo(x *graph.Node, shape ...int) *graph.Node {
	return graph.Apply(broadcastToOp{newShapeParam(shape)}, x)
}

func (broadcastToOp) Name() string { return "BroadcastTo" }

// Broadcasts marks BroadcastTo as broadcasting its input to the shape it
// holds (graph.Broadcaster).
func (broadcastToOp) Broadcasts() {}

func (op broadcastToOp) Type(in []graph.Type) (graph.Type, error) {
	x, to, err := broadcastTypes(in, op.to, layoutInput)
	if err != nil {
		return graph.Type{}, err
	}
	if err := broadcastsTo(x.Shape, to); err != nil {
		return graph.Type{}, fmt.Errorf("cannot broadcast: %v", err)
	}
	return x.WithShape(to...), nil
}

func (op broadcastToOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	w := newElementwiseWalker(out.Shape(), in[0].Shape())
	return forWidth(out.Dtype(),
		func() { broadcastKernel(&w, elems[uint32](out), elems[uint32](in[0])) },
		func() { broadcastKernel(&w, elems[uint64](out), elems[uint64](in[0])) })
}

func broadcastKernel[T vek.Word](w *walker, out, x []T) {
	if fillEachRow(w, out, x) {
		return
	}
	w.rows(func(o, n int, off [3]int) {
		row := out[o : o+n]
		if w.inner[0] == 0 {
			vek.Fill(row, x[off[0]])
			return
		}
		copy(row, x[off[0]:off[0]+n])
	})
}

// fillEachRow is broadcastKernel's loop where each row of the output
// repeats its own element of x, the elements one after another in x (a
// layer norm's statistics, (32, 64, 1) to (32, 64, 64)), and reports
// whether it ran: one loop over the rows, not a walker's call a row.
func fillEachRow[T vek.Word](w *walker, out, x []T) bool {
	last := w.rank - 1
	if w.rank < 2 || w.inner[0] != 0 || w.strides[0][last-1] != 1 {
		return false
	}
	rows := 1
	for a := range last {
		if a < last-1 && w.strides[0][a] != w.strides[0][a+1]*w.shape[a+1] {
			return false
		}
		rows *= w.shape[a]
	}
	n := w.shape[last]
	for r, v := range x[:rows] {
		vek.Fill(out[r*n:(r+1)*n], v)
	}
	return true
}

// Backward sums the gradient over the broadcast axes.
func (broadcastToOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{SumTo(g, ctx.Input(0).Shape()...)}
}

// JVP broadcasts the tangent.
func (broadcastToOp) JVP(c *graph.JVPContext) *graph.Node {
	if t := aligned(c, 0); t != nil {
		return BroadcastTo(t, c.Shape(c.Output().Shape())...)
	}
	return nil
}

// Batch broadcasts each example.
func (broadcastToOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	shape := c.Example().Shape()
	return BroadcastTo(alignedBatch(c, 0, len(shape)), c.Shape(shape)...)
}

type sumToOp struct{ to shapeParam }

// SumTo sums x down to the given shape, one x could have been broadcast
// from: over x's extra leading axes and over the axes where shape has 1.
// It undoes BroadcastTo in gradients.
func SumTo(x *graph.Node, shape ...int) *graph.Node {
	return graph.Apply(sumToOp{newShapeParam(shape)}, x)
}

func (sumToOp) Name() string { return "SumTo" }

func (op sumToOp) Type(in []graph.Type) (graph.Type, error) {
	x, to, err := broadcastTypes(in, op.to, singleInput)
	if err != nil {
		return graph.Type{}, err
	}
	if err := broadcastsTo(to, x.Shape); err != nil {
		return graph.Type{}, fmt.Errorf("cannot sum %s to %s: %v", graph.ShapeString(x.Shape), graph.ShapeString(to), err)
	}
	return x.WithShape(to...), nil
}

// Cost is one flop per input element, as for any sum.
func (sumToOp) Cost(in []graph.Type, out graph.Type) graph.Cost { return reductionCost(in, out) }

// Forward walks x's rows, adding each into the output row it broadcasts
// from (or into one element, where the output's last axis has size 1).
func (op sumToOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	w := newReductionWalker(in[0].Shape(), out.Shape())
	return forFloat(out.Dtype(),
		func() error { sumToKernel(&w, floats[float32](out), floats[float32](in[0])); return nil },
		func() error { sumToKernel(&w, floats[float64](out), floats[float64](in[0])); return nil })
}

func sumToKernel[T float](w *walker, out, x []T) {
	clear(out)
	if len(out) == 0 || len(x) == 0 { // nothing to add: the row paths below would walk empty rows
		return
	}
	if sumColumns(w, out, x) {
		return
	}
	if sumOntoOneRow(w, out, x) || sumEachRow(w, out, x) {
		return
	}
	s := max(w.inner[1], 1) // 0 where rows are one element (a scalar's)
	var sums rowSums[T]
	var run rowRun[T]
	w.rows(func(_, n int, off [3]int) {
		row := x[off[1] : off[1]+(n-1)*s+1]
		if w.inner[0] == 0 {
			switch {
			case w.sequential:
				out[off[0]] = sumInOrder(out[off[0]], row, s)
			case s == 1:
				sums.add(out, off[0], row)
			default:
				out[off[0]] += sumStrided(row, s)
			}
			return
		}
		if s == 1 {
			// dst + row, a run of rows at a time: the axpy's sums (alpha
			// 1 multiplies exactly) without its call through gonum's
			// checks.
			run.add(out, x, off[0], off[1], n)
		} else {
			blasAxpy(n, 1, row, s, out[off[0]:off[0]+n])
		}
	})
	run.flush(out, x)
	sums.flush(out)
}

// sumInOrder is s + xs[0] + xs[stride] + …, added one after another.
func sumInOrder[T float](s T, xs []T, stride int) T {
	for i := 0; i < len(xs); i += stride {
		s += xs[i]
	}
	return s
}

// Backward broadcasts the gradient back to the input's shape.
func (sumToOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{BroadcastTo(g, ctx.Input(0).Shape()...)}
}

// JVP sums the tangent. A batched tangent is summed to the output's shape
// padded with size-1 axes to the input's rank, so that the batch axis
// stays in front, and then viewed in the output's shape.
func (sumToOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil {
		return nil
	}
	out := c.Output().Shape()
	if c.Batch() == 0 {
		return SumTo(t, out...)
	}
	padded := make([]int, 0, t.Type().Rank())
	padded = append(padded, c.Batch())
	for range c.Input(0).Type().Rank() - len(out) {
		padded = append(padded, 1)
	}
	return Reshape(SumTo(t, append(padded, out...)...), c.Shape(out)...)
}

// Batch sums each example: to its shape preceded by size-1 axes up to
// the input's rank, so that the batch axis is kept, then reshaped.
func (sumToOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	x, shape := c.Input(0), c.Example().Shape()
	kept := []int{c.Size()}
	for range x.Type().Rank() - 1 - len(shape) {
		kept = append(kept, 1)
	}
	return Reshape(SumTo(x, append(kept, shape...)...), c.Shape(shape)...)
}

type transposeOp struct{ perm shapeParam }

// Transpose permutes x's axes: output axis i is input axis perm[i]. With no
// perm it reverses the axes (a matrix's transpose). x may have any dtype,
// integers included: its elements are moved as they are.
func Transpose(x *graph.Node, perm ...int) *graph.Node {
	if p := poisoned("Transpose", x); p != nil {
		return p
	}
	if len(perm) == 0 {
		rank := x.Type().Rank()
		perm = make([]int, rank)
		for i := range perm {
			perm[i] = rank - 1 - i
		}
	}
	return graph.Apply(transposeOp{newShapeParam(perm)}, x)
}

func (transposeOp) Name() string { return "Transpose" }

func (op transposeOp) Type(in []graph.Type) (graph.Type, error) {
	x, err := layoutInput(in)
	if err != nil {
		return graph.Type{}, err
	}
	perm, err := op.perm.shape()
	if err != nil {
		return graph.Type{}, err
	}
	var seen [maxRank]bool
	valid := len(perm) == x.Rank()
	for _, p := range perm {
		valid = valid && p >= 0 && p < len(perm) && !seen[p]
		if valid {
			seen[p] = true
		}
	}
	if !valid {
		return graph.Type{}, fmt.Errorf("%v is not a permutation of the axes of %s", perm, graph.ShapeString(x.Shape))
	}
	shape := make([]int, len(perm))
	for i, p := range perm {
		shape[i] = x.Shape[p]
	}
	return x.WithShape(shape...), nil
}

// Forward walks the output's rows; along a row the input is read with the
// stride of the axis that became the last one.
func (op transposeOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	w := transposeWalker(in[0].Shape(), op.perm.dims[:op.perm.rank])
	return forWidth(out.Dtype(),
		func() { transposeKernel(&w, elems[uint32](out), elems[uint32](in[0])) },
		func() { transposeKernel(&w, elems[uint64](out), elems[uint64](in[0])) })
}

// transposeWalker walks the output of x's transpose by perm, input 0 read
// with the strides of the axes it came from, collapsed: axes that stay
// next to each other, in order, merge into one and size-1 axes drop, so
// that a (16, 256, 16) input by (1, 2, 0) is walked as the transpose of a
// (16, 4096) matrix, and one by (1, 0, 2) as 256 runs of 16 to move.
func transposeWalker(xShape, perm []int) walker {
	w := walker{rank: len(perm)}
	stride := 1
	var strides [maxRank]int
	for a := len(xShape) - 1; a >= 0; a-- {
		strides[a] = stride
		stride *= xShape[a]
	}
	for i, p := range perm {
		w.shape[i] = xShape[p]
		w.strides[0][i] = strides[p]
	}
	if w.rank > 0 {
		w.inner[0] = w.strides[0][w.rank-1]
	}
	w.collapse()
	return w
}

func transposeKernel[T any](w *walker, out, x []T) {
	s := w.inner[0]
	switch {
	case w.rank >= 2 && s == 1: // the last axis stays last
		transposeRuns(w, out, x)
		return
	case w.rank >= 2 && w.shape[w.rank-1] >= transposeTile && w.shape[w.rank-2] >= transposeTile:
		transposeTiles(w, out, x)
		return
	}
	w.rows(func(o, n int, off [3]int) {
		row, i := out[o:o+n], off[0]
		if s == 1 {
			copy(row, x[i:i+n])
			return
		}
		for j := range row {
			row[j] = x[i]
			i += s
		}
	})
}

// Backward transposes the gradient by the inverse permutation.
func (op transposeOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	inv := make([]int, op.perm.rank)
	for i, p := range op.perm.dims[:op.perm.rank] {
		inv[p] = i
	}
	return []*graph.Node{Transpose(g, inv...)}
}

// JVP transposes the tangent, the batch axis staying in front.
func (op transposeOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil {
		return nil
	}
	perm := op.perm.dims[:op.perm.rank]
	if c.Batch() == 0 {
		return Transpose(t, perm...)
	}
	shifted := make([]int, 0, len(perm)+1)
	shifted = append(shifted, 0)
	for _, p := range perm {
		shifted = append(shifted, p+1)
	}
	return Transpose(t, shifted...)
}

// Batch permutes each example's axes, the batch axis staying first.
func (op transposeOp) Batch(c *graph.BatchContext) *graph.Node {
	perm, err := op.perm.shape()
	if err != nil || !batchable(c) {
		c.Decline()
		return nil
	}
	batched := []int{0}
	for _, p := range perm {
		batched = append(batched, p+1)
	}
	return Transpose(c.Input(0), batched...)
}

type sliceOp struct{ axis, start, end int }

// Slice returns the elements of x with index in [start, end) along axis
// (negative axes count from the end); the other axes are kept whole.
func Slice(x *graph.Node, axis, start, end int) *graph.Node {
	return graph.Apply(sliceOp{canonicalAxis(x, axis), start, end}, x)
}

// canonicalAxis maps a negative axis to its index in x when it is valid, so
// that equal slices get equal ops; an invalid axis is kept for Type to report.
func canonicalAxis(x *graph.Node, axis int) int {
	if graph.Poisoned(x) == nil {
		if a, err := graph.NormalizeAxis(axis, x.Type().Rank()); err == nil {
			return a
		}
	}
	return axis
}

// axisInput checks that in is one input and axis one of its axes, which
// it returns counted from the front.
func axisInput(in []graph.Type, axis int) (graph.Type, int, error) {
	x, err := singleInput(in)
	if err != nil {
		return graph.Type{}, 0, err
	}
	a, err := graph.NormalizeAxis(axis, x.Rank())
	if err != nil {
		return graph.Type{}, 0, fmt.Errorf("shape %s: %v", graph.ShapeString(x.Shape), err)
	}
	return x, a, nil
}

func (sliceOp) Name() string { return "Slice" }

func (op sliceOp) Type(in []graph.Type) (graph.Type, error) {
	x, axis, err := axisInput(in, op.axis)
	if err != nil {
		return graph.Type{}, err
	}
	if op.start < 0 || op.start > op.end || op.end > x.Shape[axis] {
		return graph.Type{}, fmt.Errorf("slice [%d:%d] is out of range for axis %d of shape %s",
			op.start, op.end, axis, graph.ShapeString(x.Shape))
	}
	shape := append([]int(nil), x.Shape...)
	shape[axis] = op.end - op.start
	return x.WithShape(shape...), nil
}

// Forward copies, for each index over the axes before axis, one contiguous
// run of the input.
func (op sliceOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	outer, dim, inner := axisSpan(in[0].Shape(), op.axis)
	return forFloat(out.Dtype(),
		func() error { return sliceKernel(op, floats[float32](out), floats[float32](in[0]), outer, dim, inner) },
		func() error { return sliceKernel(op, floats[float64](out), floats[float64](in[0]), outer, dim, inner) })
}

func sliceKernel[T float](op sliceOp, out, x []T, outer, dim, inner int) error {
	n := (op.end - op.start) * inner
	return copyRuns(out, 0, n, x, op.start*inner, dim*inner, outer, n)
}

// copyRuns copies count runs of n elements, run i from src[from+i·srcStride:]
// to dst[to+i·dstStride:]. Slice, Pad and Concat move their data with it.
func copyRuns[T any](dst []T, to, dstStride int, src []T, from, srcStride int, count, n int) error {
	if count == 0 || n == 0 {
		return nil
	}
	if len(dst) < to+(count-1)*dstStride+n || len(src) < from+(count-1)*srcStride+n {
		return fmt.Errorf("%d runs of %d elements do not fit %d inputs and %d outputs", count, n, len(src), len(dst))
	}
	if n == 1 && dstStride == 1 {
		// One element a run, to consecutive elements: a strided gather.
		gatherStrided(dst[to:to+count], src[from:], srcStride)
		return nil
	}
	if n < shortCopy {
		// Runs this short cost more to hand to copy than to copy.
		for i := range count {
			d, s := dst[to+i*dstStride:to+i*dstStride+n], src[from+i*srcStride:from+i*srcStride+n]
			for j := range d {
				d[j] = s[j]
			}
		}
		return nil
	}
	if n*int(unsafe.Sizeof(src[0])) == 64 {
		// Runs of a cache line (attention's heads of 16 float32s): one
		// 64-byte assignment each, inline, rather than a call to memmove.
		for i := range count {
			d, s := dst[to+i*dstStride:to+i*dstStride+n], src[from+i*srcStride:from+i*srcStride+n]
			*(*[64]byte)(unsafe.Pointer(&d[0])) = *(*[64]byte)(unsafe.Pointer(&s[0]))
		}
		return nil
	}
	for i := range count {
		copy(dst[to+i*dstStride:to+i*dstStride+n], src[from+i*srcStride:from+i*srcStride+n])
	}
	return nil
}

// Backward pads the gradient with zeros back to the input's shape.
func (op sliceOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	dim := ctx.Input(0).Shape()[op.axis]
	return []*graph.Node{Pad(g, op.axis, op.start, dim-op.end)}
}

// JVP slices the tangent.
func (op sliceOp) JVP(c *graph.JVPContext) *graph.Node {
	if t := c.Tangent(0); t != nil {
		return Slice(t, c.Axis(op.axis, 0), op.start, op.end)
	}
	return nil
}

// Batch slices each example along the same axis.
func (op sliceOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	return Slice(c.Input(0), op.axis+1, op.start, op.end)
}

type padOp struct{ axis, before, after int }

// Pad adds before zeros ahead of x and after zeros behind it along axis
// (negative axes count from the end).
func Pad(x *graph.Node, axis, before, after int) *graph.Node {
	return graph.Apply(padOp{canonicalAxis(x, axis), before, after}, x)
}

func (padOp) Name() string { return "Pad" }

func (op padOp) Type(in []graph.Type) (graph.Type, error) {
	x, axis, err := axisInput(in, op.axis)
	if err != nil {
		return graph.Type{}, err
	}
	if op.before < 0 || op.after < 0 {
		return graph.Type{}, fmt.Errorf("negative padding (%d, %d) for shape %s", op.before, op.after, graph.ShapeString(x.Shape))
	}
	shape := append([]int(nil), x.Shape...)
	var ok bool
	if shape[axis], ok = addSizes(shape[axis], op.before, op.after); !ok {
		return graph.Type{}, fmt.Errorf("padding (%d, %d) of axis %d of shape %s overflows an int",
			op.before, op.after, axis, graph.ShapeString(x.Shape))
	}
	return x.WithShape(shape...), nil
}

func (op padOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	outer, dim, inner := axisSpan(in[0].Shape(), op.axis)
	return forFloat(out.Dtype(),
		func() error { return padKernel(op, floats[float32](out), floats[float32](in[0]), outer, dim, inner) },
		func() error { return padKernel(op, floats[float64](out), floats[float64](in[0]), outer, dim, inner) })
}

func padKernel[T float](op padOp, out, x []T, outer, dim, inner int) error {
	clear(out)
	span := (op.before + dim + op.after) * inner
	return copyRuns(out, op.before*inner, span, x, 0, dim*inner, outer, dim*inner)
}

// Backward slices the padding off the gradient.
func (op padOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	dim := ctx.Input(0).Shape()[op.axis]
	return []*graph.Node{Slice(g, op.axis, op.before, op.before+dim)}
}

// JVP pads the tangent with zeros.
func (op padOp) JVP(c *graph.JVPContext) *graph.Node {
	if t := c.Tangent(0); t != nil {
		return Pad(t, c.Axis(op.axis, 0), op.before, op.after)
	}
	return nil
}

// Batch pads each example along the same axis.
func (op padOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	return Pad(c.Input(0), op.axis+1, op.before, op.after)
}

type concatOp struct{ axis int }

// Concat joins xs along axis (negative axes count from the end); their other
// dimensions must agree. With no xs there is no graph to record the error
// on, and the returned node is poisoned.
func Concat(axis int, xs ...*graph.Node) *graph.Node {
	if len(xs) > 0 {
		axis = canonicalAxis(xs[0], axis)
	}
	return graph.Apply(concatOp{axis}, xs...)
}

func (concatOp) Name() string { return "Concat" }

func (op concatOp) Type(in []graph.Type) (graph.Type, error) {
	dtype, err := graph.SameDType(in)
	if err != nil {
		return graph.Type{}, err
	}
	first := in[0].Shape
	axis, err := graph.NormalizeAxis(op.axis, len(first))
	if err != nil {
		return graph.Type{}, fmt.Errorf("shape %s: %v", graph.ShapeString(first), err)
	}
	shape := append([]int(nil), first...)
	shape[axis] = 0
	for _, t := range in {
		match := len(t.Shape) == len(first)
		for i := 0; match && i < len(first); i++ {
			match = i == axis || t.Shape[i] == first[i]
		}
		if !match {
			return graph.Type{}, fmt.Errorf("shapes %s and %s differ off axis %d",
				graph.ShapeString(first), graph.ShapeString(t.Shape), axis)
		}
		var ok bool
		if shape[axis], ok = addSizes(shape[axis], t.Shape[axis]); !ok {
			return graph.Type{}, fmt.Errorf("the sizes along axis %d overflow an int", axis)
		}
	}
	return graph.TypeOf(dtype, shape...), nil
}

// Forward copies each input's runs to their place in the output's rows.
func (op concatOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	outer, dim, inner := axisSpan(out.Shape(), op.axis)
	return forFloat(out.Dtype(),
		func() error { return concatKernel[float32](out, in, op.axis, outer, dim*inner) },
		func() error { return concatKernel[float64](out, in, op.axis, outer, dim*inner) })
}

func concatKernel[T float](out *tensor.Dense, in []*tensor.Dense, axis, outer, rowLen int) error {
	o, at := floats[T](out), 0
	for _, t := range in {
		_, dim, inner := axisSpan(t.Shape(), axis)
		if err := copyRuns(o, at, rowLen, floats[T](t), 0, dim*inner, outer, dim*inner); err != nil {
			return err
		}
		at += dim * inner
	}
	return nil
}

// Backward gives each input its slice of the gradient.
func (op concatOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	grads := make([]*graph.Node, len(ctx.Inputs()))
	at := 0
	for i, x := range ctx.Inputs() {
		d := x.Shape()[op.axis]
		if ctx.NeedsGrad(i) {
			grads[i] = Slice(g, op.axis, at, at+d)
		}
		at += d
	}
	return grads
}

// JVP joins the tangents, zeros standing for the inputs that have none.
func (op concatOp) JVP(c *graph.JVPContext) *graph.Node {
	ts := make([]*graph.Node, len(c.Inputs()))
	some := false
	for i := range ts {
		ts[i] = c.Tangent(i)
		some = some || ts[i] != nil
	}
	if !some {
		return nil
	}
	for i, t := range ts {
		if t == nil {
			ts[i] = zeroTangent(c, i)
		}
	}
	return Concat(c.Axis(op.axis, 0), ts...)
}

// Batch joins each example's pieces along the same axis, shared pieces
// broadcast to every example.
func (op concatOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	xs := make([]*graph.Node, len(c.Inputs()))
	for i := range xs {
		xs[i] = batchedInput(c, i)
	}
	return Concat(op.axis+1, xs...)
}

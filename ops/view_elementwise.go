package ops

import (
	"fmt"
	"slices"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// readThroughStride is the largest stride between a view's adjacent
// elements (along its collapsed last axis) that an elementwise op reads
// through: a few elements apart, the view's elements share cache lines
// and a block of them is gathered about as fast as a copy; further apart
// (a transposed operand), gathering a block walks a column, an element a
// line, and Transpose's blocked copy is faster.
const readThroughStride = 8

// readThroughElementwiseOp is a unary or binary elementwise op reading
// one operand through a view of its input: a block of fusedBlock of the
// view's elements at a time is gathered into scratch and the op's kernel
// applied to it, so each element is computed as op computes it on the
// view copied out, bit for bit.
type readThroughElementwiseOp struct {
	op      graph.Op // a unary or binary
	operand int
	view    View
	gather  fusedGather // the view's elements in row-major order
}

// readThroughElementwise is ReadThrough for unary and binary ops.
func readThroughElementwise(op graph.Op, in []graph.Type, operand int, v View) (graph.Op, bool) {
	shape := v.shape[:v.rank]
	for k, t := range in {
		if k != operand && !slices.Equal(t.Shape, shape) {
			return nil, false // broadcasting: left to the op itself
		}
	}
	w := newWalker(shape, shape)
	w.strides[0] = v.strides
	w.collapse()
	if w.rank == 0 || w.strides[0][w.rank-1] > readThroughStride {
		return nil, false
	}
	return readThroughElementwiseOp{op: op, operand: operand, view: v,
		gather: fusedGather{rank: w.rank, shape: w.shape, strides: w.strides[0]}}, true
}

// Name is the op's, with the layout ops it reads through: "Neg(Slice)".
func (op readThroughElementwiseOp) Name() string { return op.op.Name() + "(" + op.view.via + ")" }

// operandTypes are the op's operands' types: the inputs', the view's in
// place of the viewed tensor's.
func (op readThroughElementwiseOp) operandTypes(in []graph.Type) []graph.Type {
	t := slices.Clone(in)
	t[op.operand] = in[op.operand].WithShape(op.view.shape[:op.view.rank]...)
	return t
}

// Type checks that the viewed input is the tensor the view was made for,
// and returns the op's type.
func (op readThroughElementwiseOp) Type(in []graph.Type) (graph.Type, error) {
	arity := 1
	if _, ok := op.op.(binary); ok {
		arity = 2
	}
	if err := graph.CheckArity(in, arity); err != nil {
		return graph.Type{}, err
	}
	if in[op.operand].Size() != op.view.size {
		return graph.Type{}, fmt.Errorf("input %d has %d elements, the view reads %d", op.operand, in[op.operand].Size(), op.view.size)
	}
	shape := op.view.shape[:op.view.rank]
	if other := 1 - op.operand; arity == 2 && !slices.Equal(in[other].Shape, shape) {
		return graph.Type{}, fmt.Errorf("input %d has shape %s, want the view's %s: the op reads its operands element by element, without broadcasting",
			other, graph.ShapeString(in[other].Shape), graph.ShapeString(shape))
	}
	return op.op.Type(op.operandTypes(in))
}

// Cost is the op's.
func (op readThroughElementwiseOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	return graph.DefaultCost(op.operandTypes(in), out)
}

// Backward reports that the op has no gradient: the compiler makes it
// after differentiation.
func (op readThroughElementwiseOp) Backward(ctx *graph.GradContext, _ *graph.Node) []*graph.Node {
	ctx.Errorf("%s is made by the compiler after differentiation and has no gradient: differentiate the op of the layout op", op.Name())
	return nil
}

// Forward gathers the view's elements a block at a time and applies the
// op's kernel to the block.
func (op readThroughElementwiseOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec is Forward with its block of scratch kept in e's state, so
// that a machine's runs allocate nothing.
func (op readThroughElementwiseOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	return forFloat(out.Dtype(),
		func() error { readThroughElementwiseKernel[float32](e, &op, out, in); return nil },
		func() error { readThroughElementwiseKernel[float64](e, &op, out, in); return nil })
}

// readThroughScratch keys a block of scratch of element type T in an
// Exec's state.
type readThroughScratch[T float] struct{}

func readThroughElementwiseKernel[T float](e *graph.Exec, op *readThroughElementwiseOp, out *tensor.Dense, in []*tensor.Dense) {
	buf := e.State(readThroughScratch[T]{}, func() any { return new([fusedBlock]T) }).(*[fusedBlock]T)
	o := floats[T](out)
	x := floats[T](in[op.operand])[op.view.offset:]
	var y []T
	if len(in) == 2 {
		y = floats[T](in[1-op.operand])
	}
	var cur gatherCursor
	for b := 0; b < len(o); b += fusedBlock {
		e := min(b+fusedBlock, len(o))
		blk := buf[:e-b]
		gatherBlock(&op.gather, blk, x, b, &cur)
		switch f := op.op.(type) {
		case unary:
			unaryLoop(f, o[b:e], blk)
		case binary:
			if op.operand == 0 {
				binaryLoop(f.kind, o[b:e], blk, 1, y[b:e], 1)
			} else {
				binaryLoop(f.kind, o[b:e], y[b:e], 1, blk, 1)
			}
		}
	}
}

// CUDA is the op's GPU kernel (graph.CUDAKernel): the op's own C
// expression, one work item per output element, the viewed operand read
// at its offset in the view.
func (op readThroughElementwiseOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if len(out) == 0 || !graph.IsFloat(out[0].DType) {
		return nil, fmt.Errorf("%s: no float output", op.Name())
	}
	g := &op.gather
	terms := []string{fmt.Sprintf("%dLL", op.view.offset)}
	outStride := 1
	for a := g.rank - 1; a >= 0; a-- {
		terms = append(terms, fmt.Sprintf("(i / %dLL %% %dLL) * %dLL", outStride, g.shape[a], g.strides[a]))
		outStride *= g.shape[a]
	}
	var b strings.Builder
	args := make([]string, len(in))
	for k := range in {
		index := "i"
		if k == op.operand {
			index = strings.Join(terms, " + ")
		}
		fmt.Fprintf(&b, "const T x%d = in%d[%s];\n", k, k, index)
		args[k] = fmt.Sprintf("x%d", k)
	}
	e, err := ElementwiseC(op.op, args, out[0].DType == graph.Float32)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&b, "out0[i] = %s;\n", e)
	return []graph.CUDASource{{N: int64(out[0].Size()), Body: b.String()}}, nil
}

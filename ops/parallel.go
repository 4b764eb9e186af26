package ops

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Elementwise kernels split their range over a machine's threads once it
// is long enough to pay for handing parts to other goroutines (about 2 µs
// a run): parallelMin elements at least, in parts of parallelChunk (a
// multiple of every kernel's block size, so each part computes exactly
// what the serial loop computes there).
const (
	parallelMin   = 1 << 15
	parallelChunk = 1 << 13
)

// parts returns how many parts a range of n elements splits into, and
// whether it is worth splitting at all on e.
func parts(e *graph.Exec, n int) (int, bool) {
	if e.Threads() == 1 || n < parallelMin {
		return 1, false
	}
	return (n + parallelChunk - 1) / parallelChunk, true
}

// span is part p of a range of n elements.
func span(p, n int) (lo, hi int) {
	return p * parallelChunk, min((p+1)*parallelChunk, n)
}

// unaryTask applies a unary op to one part of a slice.
type unaryTask[T float] struct {
	op   unary
	o, x []T
}

func (t *unaryTask[T]) Do(p int) {
	lo, hi := span(p, len(t.o))
	unaryLoop(t.op, t.o[lo:hi], t.x[lo:hi])
}

type unaryTaskKey[T float] struct{}

// ForwardExec computes what Forward does, split over e's threads when the
// output is large. Every element is computed as in Forward, so the result
// does not depend on the number of threads.
func (op unary) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	n, ok := parts(e, graph.ShapeSize(out.Shape()))
	if !ok {
		return op.Forward(out, in)
	}
	return forFloat(out.Dtype(),
		func() error { runUnary[float32](e, n, op, out, in[0]); return nil },
		func() error { runUnary[float64](e, n, op, out, in[0]); return nil })
}

func runUnary[T float](e *graph.Exec, n int, op unary, out, in *tensor.Dense) {
	t := e.State(unaryTaskKey[T]{}, func() any { return new(unaryTask[T]) }).(*unaryTask[T])
	t.op, t.o, t.x = op, floats[T](out), floats[T](in)
	e.Parallel(n, t)
	t.o, t.x = nil, nil // hold no buffers between runs
}

// binaryTask applies a binary op to one part of a slice whose operands
// are either full-length (stride 1) or one scalar (stride 0).
type binaryTask[T float] struct {
	kind   binaryKind
	o      []T
	x, y   []T
	sx, sy int
}

func (t *binaryTask[T]) Do(p int) {
	lo, hi := span(p, len(t.o))
	binaryLoop(t.kind, t.o[lo:hi], t.x[lo*t.sx:], t.sx, t.y[lo*t.sy:], t.sy)
}

type binaryTaskKey[T float] struct{}

// ForwardExec computes what Forward does, split over e's threads when the
// output is large and each operand is either the output's size or a
// scalar (other broadcasts run serially). The result does not depend on
// the number of threads.
func (op binary) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	size := graph.ShapeSize(out.Shape())
	n, ok := parts(e, size)
	sx, okx := elementStride(in[0], size)
	sy, oky := elementStride(in[1], size)
	if !ok || !okx || !oky {
		return op.Forward(out, in)
	}
	return forFloat(out.Dtype(),
		func() error { runBinary[float32](e, n, op.kind, out, in, sx, sy); return nil },
		func() error { runBinary[float64](e, n, op.kind, out, in, sx, sy); return nil })
}

// elementStride is 1 for an operand of the output's size, 0 for a scalar.
func elementStride(t *tensor.Dense, size int) (int, bool) {
	switch graph.ShapeSize(t.Shape()) {
	case size:
		return 1, true
	case 1:
		return 0, true
	}
	return 0, false
}

func runBinary[T float](e *graph.Exec, n int, k binaryKind, out *tensor.Dense, in []*tensor.Dense, sx, sy int) {
	t := e.State(binaryTaskKey[T]{}, func() any { return new(binaryTask[T]) }).(*binaryTask[T])
	t.kind, t.o, t.x, t.y, t.sx, t.sy = k, floats[T](out), floats[T](in[0]), floats[T](in[1]), sx, sy
	e.Parallel(n, t)
	t.o, t.x, t.y = nil, nil, nil
}

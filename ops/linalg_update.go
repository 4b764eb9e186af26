package ops

import (
	"fmt"
	"slices"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/gemm"
)

// MatMulUpdateOp is an optimiser's one-pass step (a FusedOp whose OnePass
// is not "", Adam's) whose gradient is a matrix product, op(A)·op(B) (a
// weight's gradient Xᵀ·dY), computed together: a block of the product's
// rows at a time into a scratch block that stays in cache, each block's
// step run right after on the same rows of the parameter and its state.
// The gradient is never written in full, nor read back from memory. The
// compiler makes it (pass "matmulupdate") where nothing else reads the
// gradient; every output is the step's, bit for bit, on the full
// product's bits (gemm.BlockRows).
//
// Its inputs are the step's, the gradient's replaced by A, then B; its
// outputs are the step's.
type MatMulUpdateOp struct {
	step    *FusedOp
	grad    int // the step's input the product stands for
	product MatMulOp
	node    *graph.Node // the product's, or nil
}

// NewMatMulUpdate returns the op computing step with its input grad the
// product of a and b (of the given types) by product, node's value (nil
// for none), and whether it can:
// step must be a one-pass step, the product one 2-D product of the step's
// size whose rows gemm.BlockRows cuts, in a build whose products give
// the same bits a block of rows at a time.
func NewMatMulUpdate(step *FusedOp, grad int, product MatMulOp, node *graph.Node, a, b graph.Type) (MatMulUpdateOp, bool) {
	op := MatMulUpdateOp{step: step, grad: grad, product: product, node: node}
	if !blockProducts || step == nil || step.OnePassGrad() != grad || grad < 0 || len(a.Shape) != 2 || len(b.Shape) != 2 {
		return op, false
	}
	d, err := product.dims(a.Shape, b.Shape)
	if err != nil || d.m*d.n != step.size || step.inSizes[grad] != step.size {
		return op, false
	}
	return op, gemm.BlockRows[float64](op.gemmProduct(d), 1) > 0 && gemm.BlockRows[float32](op.gemmProduct(d), 1) > 0
}

// Step returns the optimiser's step the op runs.
func (op MatMulUpdateOp) Step() *FusedOp { return op.step }

// ProductNode returns the graph node of the product the op computes, or
// nil.
func (op MatMulUpdateOp) ProductNode() *graph.Node { return op.node }

// Name is "MatMul+" and the step's kernel: "MatMul+Adam".
func (op MatMulUpdateOp) Name() string { return "MatMul+" + op.step.OnePass() }

// inputs is the number of inputs the op takes.
func (op MatMulUpdateOp) inputs() int { return op.step.NumInputs() + 1 }

// stepInputs returns the step's inputs: in without B, the product at
// the gradient's place.
func stepInputs[T any](op MatMulUpdateOp, in []T, product T) []T {
	s := slices.Clone(in[:op.step.NumInputs()])
	s[op.grad] = product
	return s
}

// Types checks the product's operands and the step's other inputs and
// returns the step's outputs' types.
func (op MatMulUpdateOp) Types(in []graph.Type) ([]graph.Type, error) {
	if len(in) != op.inputs() {
		return nil, fmt.Errorf("%d inputs, want %d", len(in), op.inputs())
	}
	a, b := in[op.grad], in[len(in)-1]
	if len(a.Shape) != 2 || len(b.Shape) != 2 {
		return nil, fmt.Errorf("product of shapes %s and %s: want 2-D operands", graph.ShapeString(a.Shape), graph.ShapeString(b.Shape))
	}
	g, err := op.product.Type([]graph.Type{a, b})
	if err != nil {
		return nil, err
	}
	return op.step.Types(stepInputs(op, in, g))
}

// Overwrites is the step's: an output may be written over an input the
// step may overwrite (a parameter, its state), never over A or B.
func (op MatMulUpdateOp) Overwrites(out, in int) bool {
	return in != op.grad && in < op.step.NumInputs() && op.step.Overwrites(out, in)
}

// Cost is the product's and the step's; the gradient is neither written
// nor read.
func (op MatMulUpdateOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	a, b := in[op.grad], in[len(in)-1]
	g := graph.TypeOf(out.DType, out.Shape...)
	c := op.product.Cost([]graph.Type{a, b}, g)
	s := op.step.Cost(stepInputs(op, in, g), out)
	c.Flops += s.Flops
	c.BytesRead += s.BytesRead - int64(g.Size())*int64(g.DType.Size())
	c.BytesWritten += s.BytesWritten - int64(g.Size())*int64(g.DType.Size())
	return c
}

// Decompose is the product, then the step, for backends without the op.
func (op MatMulUpdateOp) Decompose(in []*graph.Node) ([]*graph.Node, error) {
	g := MatMulT(in[op.grad], in[len(in)-1], op.product.TransA, op.product.TransB)
	return graph.ApplyMulti(op.step.Multi(), stepInputs(op, in, g)...), nil
}

// Forward computes the outputs serially.
func (op MatMulUpdateOp) Forward(out []*tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec computes the product a block of gemm.BlockRows rows at a
// time, each over e's threads as gemm.Mul spreads it, and the step on
// each block's elements right after, split over e's threads when the
// block is large; every element is what the product and then the step,
// each on its own, compute, whatever the number of threads. Its scratch
// block is kept in e's state, so a machine's runs allocate nothing.
func (op MatMulUpdateOp) ForwardExec(e *graph.Exec, out []*tensor.Dense, in []*tensor.Dense) error {
	if len(in) != op.inputs() || len(out) != len(op.step.outputs) {
		return fmt.Errorf("%d inputs and %d outputs, want %d and %d", len(in), len(out), op.inputs(), len(op.step.outputs))
	}
	a, b := in[op.grad], in[len(in)-1]
	d, err := op.product.dims(a.Shape(), b.Shape())
	if err != nil {
		return err
	}
	if d.batch != 1 || d.m*d.n != op.step.size {
		return fmt.Errorf("product of shapes %v and %v for a step of %d elements", a.Shape(), b.Shape(), op.step.size)
	}
	return forFloat(out[0].Dtype(),
		func() error { runMatMulUpdate[float32](e, op, d, out, in); return nil },
		func() error { runMatMulUpdate[float64](e, op, d, out, in); return nil })
}

// gemmProduct is the product's gemm.Product for dimensions d, C dense.
func (op MatMulUpdateOp) gemmProduct(d matMulDims) gemm.Product {
	lda, ldb := d.k, d.n
	if op.product.TransA {
		lda = d.m
	}
	if op.product.TransB {
		ldb = d.k
	}
	return gemm.Product{TransA: op.product.TransA, TransB: op.product.TransB, M: d.m, N: d.n, K: d.k, Lda: lda, Ldb: ldb, Ldc: d.n}
}

// updateBlock is about the bytes of the product a block holds: its
// scratch stays in a core's L2 cache (1 MiB on the Zen 4 it was tuned
// on). Smaller blocks read B again more often: in W1's first layer (B
// 64×784 float64), blocks of 128 KiB made the product 4% slower than in
// full, blocks of 512 KiB as fast.
const updateBlock = 512 << 10

// updateSplit is the fewest elements of a block its step is split over
// threads for.
const updateSplit = 4096

// matMulUpdateTask runs a block's step over parts of its elements.
type matMulUpdateTask[T float] struct {
	step      *fusedAdam
	scratch   []T
	full      [][]T // each input of the step (the product's: nil), then each output
	ins, outs [][]T // the block's elements of each input (the product's: scratch) and output
	n, parts  int
}

type matMulUpdateKey[T float] struct{}

func runMatMulUpdate[T float](e *graph.Exec, op MatMulUpdateOp, d matMulDims, out, in []*tensor.Dense) {
	t := e.State(matMulUpdateKey[T]{}, func() any { return new(matMulUpdateTask[T]) }).(*matMulUpdateTask[T])
	p := op.gemmProduct(d)
	rows := gemm.BlockRows[T](p, updateBlock/int(unsafe.Sizeof(T(0))))
	if rows == 0 {
		rows = d.m
	}
	t.scratch = grow(t.scratch, min(rows, d.m)*d.n)
	t.step = op.step.adam
	nIn := op.step.NumInputs()
	t.full = t.full[:0]
	for _, x := range in[:nIn] {
		t.full = append(t.full, floats[T](x))
	}
	for _, o := range out {
		t.full = append(t.full, floats[T](o))
	}
	t.ins, t.outs = grow2(t.ins, nIn), grow2(t.outs, len(out))
	a, b := floats[T](in[op.grad]), floats[T](in[len(in)-1])
	for r0 := 0; r0 < d.m; r0 += rows {
		q := p
		q.M = min(rows, d.m-r0)
		off := r0 * p.Lda
		if p.TransA {
			off = r0
		}
		lo, hi := r0*d.n, (r0+q.M)*d.n
		g := t.scratch[:hi-lo]
		gemm.Mul(e.Kernel(), q, a[off:], b, g)
		for i, x := range t.full[:nIn] {
			switch {
			case i == op.grad:
				t.ins[i] = g
			case op.step.inSizes[i] == op.step.size:
				t.ins[i] = x[lo:hi]
			default: // a scalar
				t.ins[i] = x
			}
		}
		for k, o := range t.full[nIn:] {
			t.outs[k] = o[lo:hi]
		}
		t.n, t.parts = hi-lo, 1
		if t.n >= 2*updateSplit {
			t.parts = min(e.Threads(), t.n/updateSplit)
		}
		e.Parallel(t.parts, t)
	}
	// Hold no buffers between runs.
	clear(t.full)
	clear(t.ins)
	clear(t.outs)
	t.step = nil
}

// Do runs the step on part p of the block's elements.
func (t *matMulUpdateTask[T]) Do(p int) {
	runAdam(t.step, t.outs, t.ins, p*t.n/t.parts, (p+1)*t.n/t.parts)
}

// grow2 returns s with n elements, reusing its array where it can.
func grow2[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

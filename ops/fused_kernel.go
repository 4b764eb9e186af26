package ops

import (
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// run computes a fused op's outputs (out alone, or outs) from in.
func (op *FusedOp) run(e *graph.Exec, out *tensor.Dense, outs, in []*tensor.Dense) error {
	if len(in) != len(op.inSizes) {
		return fmt.Errorf("%s: %d inputs, want %d", op.name, len(in), len(op.inSizes))
	}
	dtype := in[0].Dtype()
	if out != nil {
		dtype = out.Dtype()
	} else if len(outs) > 0 {
		dtype = outs[0].Dtype()
	}
	return forFloat(dtype,
		func() error { runFused[float32](e, op, out, outs, in); return nil },
		func() error { runFused[float64](e, op, out, outs, in); return nil })
}

// fusedTask evaluates a fused op over parts of its outputs; each part has
// scratch registers and a table of locations of its own.
type fusedTask[T float] struct {
	op      *FusedOp
	outs    [][]T
	ins     [][]T
	scratch []T
	ptrs    []unsafe.Pointer // per part, per location: the block's first element
	bcast   []T              // each scalar input's value, a block's worth of times
	chunk   int              // elements per part
	// The op whose registers ptrs locates (its parts are the same on each
	// run), so that a machine running one fused op after another sets
	// them once.
	regsOf *FusedOp
}

type fusedTaskKey[T float] struct{}

func runFused[T float](e *graph.Exec, op *FusedOp, out *tensor.Dense, outs, in []*tensor.Dense) {
	t := e.State(fusedTaskKey[T]{}, func() any { return new(fusedTask[T]) }).(*fusedTask[T])
	n, chunk := op.parts(e)
	t.op, t.chunk = op, chunk
	t.outs, t.ins = t.outs[:0], t.ins[:0]
	if out != nil {
		t.outs = append(t.outs, floats[T](out))
	}
	for _, o := range outs {
		t.outs = append(t.outs, floats[T](o))
	}
	for _, x := range in {
		t.ins = append(t.ins, floats[T](x))
	}
	perPart, locs := op.regs*op.stride, len(op.locStride)
	if need := n * perPart; len(t.scratch) < need {
		t.scratch = make([]T, need)
		t.regsOf = nil
	}
	if need := n * locs; len(t.ptrs) < need {
		t.ptrs = make([]unsafe.Pointer, need)
		t.regsOf = nil
	}
	if t.regsOf != op {
		for p := range n {
			for r := range op.regs {
				t.ptrs[p*locs+r] = unsafe.Pointer(&t.scratch[p*perPart+r*op.stride])
			}
		}
		t.regsOf = op
	}
	if need := op.scalars * op.stride; len(t.bcast) < need {
		t.bcast = make([]T, need)
	}
	if op.size > 1 && op.adam == nil { // a scalar input read as a vector of its copies
		k := 0
		for i, x := range t.ins {
			if op.inSizes[i] == 1 {
				b := t.bcast[k*op.stride : (k+1)*op.stride]
				for i := range b {
					b[i] = x[0]
				}
				k++
			}
		}
	}
	e.Parallel(n, t)
	t.op = nil // hold no buffers between runs (the registers are the task's own)
	clear(t.outs)
	clear(t.ins)
	for p := range n {
		clear(t.ptrs[p*locs+op.regs : (p+1)*locs])
	}
}

// parts returns how many parts a run splits into over e's threads, and
// their length. A step costs about what an elementwise op costs, so the
// run splits once its steps over its elements would make parallelMin
// element-ops, in parts of whole blocks that together make about
// parallelChunk element-ops each.
func (op *FusedOp) parts(e *graph.Exec) (n, chunk int) {
	work := op.size * op.costPerElement()
	if e.Threads() == 1 || work < parallelMin || op.size <= fusedBlock {
		return 1, max(op.size, 1)
	}
	chunk = max(1, parallelChunk/op.costPerElement()/fusedBlock) * fusedBlock
	return (op.size + chunk - 1) / chunk, chunk
}

// adamCost is what Adam's step in one pass costs an element, in
// elementwise ops: about its square root and two divisions.
const adamCost = 3

// costPerElement is what the op costs an element, in elementwise ops: one
// per step, or less in one pass.
func (op *FusedOp) costPerElement() int {
	if op.adam != nil {
		return adamCost
	}
	return len(op.steps)
}

func (t *fusedTask[T]) Do(p int) {
	lo := p * t.chunk
	hi := min(lo+t.chunk, t.op.size)
	locs := len(t.op.locStride)
	evalFused(t.op, t.outs, t.ins, lo, hi, t.ptrs[p*locs:(p+1)*locs], t.bcast)
}

// evalFused computes elements [lo, hi) of the outputs a block at a time,
// each step over the whole block before the next. ptrs holds the first
// element of each location's block: registers (set by runFused), inputs
// read in place, a scalar input's copies in bcast (of an op of more than
// one element), outputs.
func evalFused[T float](op *FusedOp, outs, ins [][]T, lo, hi int, ptrs []unsafe.Pointer, bcast []T) {
	if op.adam != nil {
		runAdam(op.adam, outs, ins, lo, hi)
		return
	}
	nIn := len(ins)
	var curs [cursoredGathers]gatherCursor
	for k := range min(len(op.gather), cursoredGathers) {
		curs[k].next = -1 // unset: the first block starts afresh
	}
	for b := lo; b < hi; b += op.stride {
		e := min(b+op.stride, hi)
		scalar := 0
		for i, x := range ins {
			switch op.inSizes[i] {
			case op.size:
				ptrs[op.regs+i] = unsafe.Pointer(&x[b])
			case 1:
				ptrs[op.regs+i] = unsafe.Pointer(&bcast[scalar*op.stride])
				scalar++
			} // a broadcast input is read from its register
		}
		for k, o := range outs {
			ptrs[op.regs+nIn+k] = unsafe.Pointer(&o[b])
		}
		for k := range op.gather {
			g := &op.gather[k]
			if b != lo && g.period > 0 && op.stride%g.period == 0 && lo%g.period == 0 {
				continue // a repeated input: its register holds this block's elements already
			}
			var cur *gatherCursor
			if k < cursoredGathers {
				cur = &curs[k]
			}
			gatherBlock(g, locSlice[T](ptrs, int32(g.reg), e-b), ins[g.input], b, cur)
		}
		runSteps[T](op.fast, ptrs, e-b)
	}
}

// locSlice is the block of n elements of location l.
func locSlice[T float](ptrs []unsafe.Pointer, l int32, n int) []T {
	return unsafe.Slice((*T)(ptrs[l]), n)
}

// gatherBlock sets dst to the elements of input x matching output
// elements [b, b+len(dst)): a run along the last axis at a time, carrying
// the multi-index odometer style. cur, if not nil, holds where the last
// call on it stopped: a block starting there carries on from its
// multi-index rather than dividing b by each axis, and cur is left at
// the element after dst's last.
func gatherBlock[T float](g *fusedGather, dst, x []T, b int, cur *gatherCursor) {
	var own gatherCursor
	if cur == nil {
		cur = &own
		cur.next = -1
	}
	if cur.next != b {
		cur.idx, cur.off = g.start(b)
	}
	idx, off := &cur.idx, cur.off
	last, s := g.rank-1, g.strides[g.rank-1]
	for k := 0; k < len(dst); {
		n := min(len(dst)-k, g.shape[last]-idx[last])
		switch s {
		case 1:
			copy(dst[k:k+n], x[off:off+n])
		case 0:
			vek.Fill(dst[k:k+n], x[off])
		default:
			gatherStrided(dst[k:k+n], x[off:], s)
		}
		k += n
		idx[last] += n
		off += n * s
		for a := last; a > 0 && idx[a] == g.shape[a]; a-- {
			off += g.strides[a-1] - g.strides[a]*idx[a]
			idx[a] = 0
			idx[a-1]++
		}
	}
	cur.off, cur.next = off, b+len(dst)
}

// gatherCursor is where a gather stopped: the output element next, its
// multi-index and the offset of the input element it reads. The zero
// value is output element 0.
type gatherCursor struct {
	idx  [maxRank]int
	off  int
	next int
}

// cursoredGathers is how many of a fused op's gathers carry a cursor from
// block to block (on the stack); any more start each block afresh.
const cursoredGathers = 8

// start returns the multi-index of output element b and the offset of the
// input element it reads.
func (g *fusedGather) start(b int) (idx [maxRank]int, off int) {
	for a := g.rank - 1; a >= 0; a-- {
		idx[a] = b % g.shape[a]
		b /= g.shape[a]
		off += idx[a] * g.strides[a]
	}
	return idx, off
}

// inputOffset is the element of input i that output element elem reads.
func (op *FusedOp) inputOffset(i, elem int) int {
	switch op.inSizes[i] {
	case op.size:
		return elem
	case 1:
		return 0
	}
	for k := range op.gather {
		if op.gather[k].input == i {
			_, off := op.gather[k].start(elem)
			return off
		}
	}
	return 0
}

// FirstNonFinite returns the first step whose result at element elem is
// NaN or infinite, computed from the inputs in as the kernel computes it;
// -1 if none is. A NaN check that finds a bad output element uses it to
// name the node that made it.
func (op *FusedOp) FirstNonFinite(in []*tensor.Dense, elem int) int {
	if len(in) != len(op.inSizes) || elem < 0 || elem >= op.size {
		return -1
	}
	var step int
	_ = forFloat(in[0].Dtype(),
		func() error { step = firstNonFinite[float32](op, in, elem); return nil },
		func() error { step = firstNonFinite[float64](op, in, elem); return nil })
	return step
}

func firstNonFinite[T float](op *FusedOp, in []*tensor.Dense, elem int) int {
	n := len(in)
	vals := make([]T, n+len(op.steps)) // the inputs' elements, then the steps'
	for i, x := range in {
		vals[i] = floats[T](x)[op.inputOffset(i, elem)]
	}
	for j, s := range op.steps {
		c := &op.code[j]
		o, arg := vals[n+j:n+j+1], func(k int) []T { return vals[s.Args[k] : s.Args[k]+1] }
		switch c.kind {
		case fusedUnary:
			unaryLoop(c.unary, o, arg(0))
		case fusedBinary:
			binaryLoop(c.bin, o, arg(0), 1, arg(1), 1)
		case fusedWhere:
			whereLoop(o, arg(0), 1, arg(1), 1, arg(2), 1)
		}
		if v := float64(o[0]); math.IsNaN(v) || math.IsInf(v, 0) {
			return j
		}
	}
	return -1
}

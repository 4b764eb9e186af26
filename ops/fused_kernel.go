package ops

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
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
// scratch registers of its own.
type fusedTask[T float] struct {
	op      *FusedOp
	outs    [][]T
	ins     [][]T
	scratch []T
	split   bool // parts are parallelChunk long; else one part is all
}

type fusedTaskKey[T float] struct{}

func runFused[T float](e *graph.Exec, op *FusedOp, out *tensor.Dense, outs, in []*tensor.Dense) {
	t := e.State(fusedTaskKey[T]{}, func() any { return new(fusedTask[T]) }).(*fusedTask[T])
	n, split := parts(e, op.size)
	t.op, t.split = op, split
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
	if need := n * op.regs * op.stride; len(t.scratch) < need {
		t.scratch = make([]T, need)
	}
	e.Parallel(n, t)
	t.op = nil // hold no buffers between runs
	clear(t.outs)
	clear(t.ins)
}

func (t *fusedTask[T]) Do(p int) {
	lo, hi := 0, t.op.size
	if t.split {
		lo, hi = span(p, t.op.size)
	}
	perPart := t.op.regs * t.op.stride
	evalFused(t.op, t.outs, t.ins, lo, hi, t.scratch[p*perPart:(p+1)*perPart])
}

// evalFused computes elements [lo, hi) of the outputs a block at a time,
// each step over the whole block before the next.
func evalFused[T float](op *FusedOp, outs, ins [][]T, lo, hi int, scratch []T) {
	for b := lo; b < hi; b += op.stride {
		e := min(b+op.stride, hi)
		for k := range op.gather {
			g := &op.gather[k]
			gatherBlock(g, fusedBlockAt(op, scratch, fusedLoc{inRegister, g.reg}, outs, ins, b, e), ins[g.input], b)
		}
		for i := range op.code {
			c := &op.code[i]
			o := fusedBlockAt(op, scratch, c.dst, outs, ins, b, e)
			x, sx := fusedOperand(op, scratch, c.src[0], outs, ins, b, e)
			switch c.kind {
			case fusedUnary:
				unaryLoop(c.unary, o, x)
			case fusedBinary:
				y, sy := fusedOperand(op, scratch, c.src[1], outs, ins, b, e)
				binaryLoop(c.bin, o, x, sx, y, sy)
			case fusedWhere:
				a, sa := fusedOperand(op, scratch, c.src[1], outs, ins, b, e)
				v, sv := fusedOperand(op, scratch, c.src[2], outs, ins, b, e)
				whereLoop(o, x, sx, a, sa, v, sv)
			}
		}
	}
}

// fusedBlockAt returns the elements [b, e) at l: a register's block, an
// output's or an input's elements.
func fusedBlockAt[T float](op *FusedOp, scratch []T, l fusedLoc, outs, ins [][]T, b, e int) []T {
	switch l.where {
	case inRegister:
		return scratch[l.i*op.stride : l.i*op.stride+e-b]
	case inOutput:
		return outs[l.i][b:e]
	}
	return ins[l.i][b:e]
}

// fusedOperand returns the elements [b, e) of an operand at l and their
// stride: 0 for an input of one element, read for every element.
func fusedOperand[T float](op *FusedOp, scratch []T, l fusedLoc, outs, ins [][]T, b, e int) ([]T, int) {
	if l.where == inInput && len(ins[l.i]) == 1 {
		return ins[l.i], 0
	}
	return fusedBlockAt(op, scratch, l, outs, ins, b, e), 1
}

// gatherBlock sets dst to the elements of input x matching output
// elements [b, b+len(dst)): a run along the last axis at a time, carrying
// the multi-index odometer style.
func gatherBlock[T float](g *fusedGather, dst, x []T, b int) {
	idx, off := g.start(b)
	last, s := g.rank-1, g.strides[g.rank-1]
	for k := 0; k < len(dst); {
		n := min(len(dst)-k, g.shape[last]-idx[last])
		for j := range n {
			dst[k+j] = x[off+j*s]
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
}

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

package ops

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// FusedStep is one step of a fused elementwise expression: an elementwise
// op (see IsElementwise) applied to operands. Operand k < n, for a fused op
// of n inputs, is input k; operand n+j is the result of step j, an earlier
// step.
type FusedStep struct {
	Op   graph.Op
	Args []int
	// Node is the graph node the step computes, kept so that errors,
	// NaN checks and profiles name the user's code; it may be nil.
	Node *graph.Node
}

// FusedOp computes an elementwise expression of its inputs, given as data
// (a list of steps), in one pass over the elements: a block of them at a
// time, each step applied to the whole block with the kernel of its own op
// before the next step runs, so that every element comes out bit for bit
// as the unfused ops compute it, while intermediates stay in a few blocks
// of scratch memory rather than in tensors of their own. The compiler
// makes fused ops (pass "fuse"); NewFused makes one by hand.
//
// Every step has the output's size; inputs broadcast to the output's
// shape. An input of the output's size or of one element is read where it
// is; one broadcast along some axes (a bias, a column) is first gathered a
// block at a time into scratch.
//
// Fused ops are made after differentiation, so they have no gradient of
// their own: Backward reports an error (differentiate the unfused graph).
type FusedOp struct {
	steps   []FusedStep
	code    []fusedInstr
	inSizes []int // each input's number of elements
	gather  []fusedGather
	inReg   []int // per input: the register it is gathered into, or -1
	shape   []int // the output's shape
	size    int   // the output's number of elements
	regs    int   // scratch blocks the expression needs at once
	name    string
}

// fusedGather copies the block of a broadcast input that matches a block
// of the output into a register.
type fusedGather struct {
	input, reg int
	rank       int
	shape      [maxRank]int // the output's
	strides    [maxRank]int // the input's, 0 along broadcast axes
}

// fusedBlock is the number of elements a fused op computes a step over at
// a time; parallelChunk is a multiple of it.
const fusedBlock = 256

// fusedInstr is a step ready to run: its op and where its operands and
// result live. An operand r ≥ 0 is scratch register r; r < 0 is input
// -1-r. A result dst < 0 is the output.
type fusedInstr struct {
	kind  fusedKind
	unary unary
	bin   binaryKind
	dst   int
	src   [3]int
}

type fusedKind uint8

const (
	fusedUnary fusedKind = iota
	fusedBinary
	fusedWhere
)

// IsElementwise reports whether op computes each element of its output
// from the matching elements of its inputs (broadcast): the unary and
// binary ops, comparisons and Where. Fused ops combine them.
func IsElementwise(op graph.Op) bool {
	_, _, ok := elementwiseKind(op)
	return ok
}

// elementwiseKind returns how a fused op runs op, and its arity.
func elementwiseKind(op graph.Op) (fusedKind, int, bool) {
	switch op.(type) {
	case unary:
		return fusedUnary, 1, true
	case binary:
		return fusedBinary, 2, true
	case whereOp:
		return fusedWhere, 3, true
	}
	return 0, 0, false
}

// NewFused returns the fused op computing steps from inputs of the given
// types; its output is the last step's result. It checks that every step
// is an elementwise op given as many operands as it takes, each an input
// or an earlier step, and that sizes fit (see FusedOp).
func NewFused(in []graph.Type, steps []FusedStep) (*FusedOp, error) {
	if len(steps) == 0 {
		return nil, fmt.Errorf("nabla: NewFused: no steps")
	}
	n := len(in)
	types := append([]graph.Type(nil), in...) // operands' types: inputs, then steps
	op := &FusedOp{steps: make([]FusedStep, len(steps)), code: make([]fusedInstr, len(steps))}
	lastUse := make([]int, n+len(steps))
	for j, s := range steps {
		kind, arity, ok := elementwiseKind(s.Op)
		if !ok {
			return nil, fmt.Errorf("nabla: NewFused: step %d: %v is not an elementwise op", j, opLabel(s.Op))
		}
		if len(s.Args) != arity {
			return nil, fmt.Errorf("nabla: NewFused: step %d (%s): %d operands, want %d", j, s.Op.Name(), len(s.Args), arity)
		}
		argTypes := make([]graph.Type, arity)
		for k, a := range s.Args {
			if a < 0 || a >= n+j {
				return nil, fmt.Errorf("nabla: NewFused: step %d (%s): operand %d is %d, neither an input nor an earlier step", j, s.Op.Name(), k, a)
			}
			argTypes[k] = types[a]
			lastUse[a] = j
		}
		t, err := s.Op.Type(argTypes)
		if err != nil {
			return nil, fmt.Errorf("nabla: NewFused: step %d (%s): %v", j, s.Op.Name(), err)
		}
		types = append(types, t)
		op.steps[j] = FusedStep{Op: s.Op, Args: append([]int(nil), s.Args...), Node: s.Node}
		op.code[j] = fusedInstr{kind: kind}
		switch kind {
		case fusedUnary:
			op.code[j].unary = s.Op.(unary)
		case fusedBinary:
			op.code[j].bin = s.Op.(binary).kind
		}
	}
	out := types[len(types)-1]
	op.shape, op.size = out.Shape, out.Size()
	for j, t := range types[n:] {
		if t.Size() != op.size {
			return nil, fmt.Errorf("nabla: NewFused: step %d (%s) has %d elements, the output %d", j, steps[j].Op.Name(), t.Size(), op.size)
		}
	}
	if len(op.shape) > maxRank {
		return nil, fmt.Errorf("nabla: NewFused: rank %d is above the supported %d", len(op.shape), maxRank)
	}
	op.allocate(n, lastUse)
	for i, t := range in {
		if b, err := graph.BroadcastShapes(t.Shape, op.shape); err != nil || !slices.Equal(b, op.shape) {
			return nil, fmt.Errorf("nabla: NewFused: input %d of shape %s does not broadcast to the output's %s", i, graph.ShapeString(t.Shape), graph.ShapeString(op.shape))
		}
		op.inSizes = append(op.inSizes, t.Size())
		op.inReg = append(op.inReg, -1)
		if s := t.Size(); s != op.size && s != 1 {
			w := newWalker(op.shape, t.Shape)
			op.inReg[i] = op.regs
			op.gather = append(op.gather, fusedGather{input: i, reg: op.regs, rank: w.rank, shape: w.shape, strides: w.strides[0]})
			op.regs++
		}
	}
	op.name = fusedName(op.steps)
	return op, nil
}

// allocate gives each step's result a scratch register, reusing those of
// results no later step reads; the last step writes the output.
func (op *FusedOp) allocate(n int, lastUse []int) {
	reg := make([]int, len(op.steps))
	var free []int
	for j := range op.steps {
		c := &op.code[j]
		for k, a := range op.steps[j].Args {
			if a < n {
				c.src[k] = -1 - a
				continue
			}
			c.src[k] = reg[a-n]
			if lastUse[a] == j && !freed(free, reg[a-n]) {
				free = append(free, reg[a-n]) // read here for the last time
			}
		}
		if j == len(op.steps)-1 {
			c.dst = -1
			break
		}
		if len(free) > 0 {
			reg[j], free = free[len(free)-1], free[:len(free)-1]
		} else {
			reg[j] = op.regs
			op.regs++
		}
		c.dst = reg[j]
		if lastUse[n+j] <= j { // never read
			free = append(free, reg[j])
		}
	}
}

func freed(free []int, r int) bool {
	for _, f := range free {
		if f == r {
			return true
		}
	}
	return false
}

// fusedName lists the ops a fused op absorbs, in order (the first few of a
// long expression).
func fusedName(steps []FusedStep) string {
	const shown = 8
	names := make([]string, 0, shown+1)
	for _, s := range steps[:min(len(steps), shown)] {
		names = append(names, s.Op.Name())
	}
	if len(steps) > shown {
		names = append(names, fmt.Sprintf("+%d", len(steps)-shown))
	}
	return "Fused(" + strings.Join(names, ",") + ")"
}

func opLabel(op graph.Op) string {
	if op == nil {
		return "nil"
	}
	return op.Name()
}

// Name lists the ops the expression absorbs: "Fused(Tanh,Mul,Add)".
func (op *FusedOp) Name() string { return op.name }

// Steps returns the expression's steps. The slice must not be modified.
func (op *FusedOp) Steps() []FusedStep { return op.steps }

// NumInputs is the number of inputs the fused op reads.
func (op *FusedOp) NumInputs() int { return len(op.inSizes) }

// Key identifies the expression, for common-subexpression elimination:
// its steps' ops and operands, and its inputs' sizes.
func (op *FusedOp) Key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %v", op.inSizes, op.shape)
	for _, s := range op.steps {
		fmt.Fprintf(&b, ";%#v%v", s.Op, s.Args)
	}
	return b.String()
}

// Type checks the inputs against the sizes the expression was built for:
// one dtype, and each input the output's size or a single element.
func (op *FusedOp) Type(in []graph.Type) (graph.Type, error) {
	dtype, err := graph.CheckInputs(in, len(op.inSizes))
	if err != nil {
		return graph.Type{}, err
	}
	for i, t := range in {
		if t.Size() != op.inSizes[i] {
			return graph.Type{}, fmt.Errorf("input %d has %d elements, want %d", i, t.Size(), op.inSizes[i])
		}
	}
	return graph.TypeOf(dtype, op.shape...), nil
}

// Cost is one flop per step and output element; the inputs are read and
// the output written once.
func (op *FusedOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	c.Flops = int64(len(op.steps)) * int64(out.Size())
	return c
}

// InPlace lets the output overwrite the first input of the output's size:
// a block's steps read the block's input elements before the last step
// writes them, and no other block reads them. -1 if there is none.
func (op *FusedOp) InPlace() int {
	for i, s := range op.inSizes {
		if s == op.size {
			return i
		}
	}
	return -1
}

// Backward reports that fused ops have no gradient: the compiler fuses
// after differentiation, so they are never differentiated. Build the
// gradient from the unfused graph.
func (op *FusedOp) Backward(ctx *graph.GradContext, _ *graph.Node) []*graph.Node {
	ctx.Errorf("%s is made by the compiler after differentiation and has no gradient: differentiate the unfused graph", op.name)
	return nil
}

// Forward computes the expression serially.
func (op *FusedOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec computes the expression, split over e's threads when the
// output is large, in parts of whole blocks: every element is computed as
// in Forward, whatever the number of threads. Its scratch memory is kept
// in e's state, so a machine's runs allocate nothing.
func (op *FusedOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	if len(in) != len(op.inSizes) {
		return fmt.Errorf("%s: %d inputs, want %d", op.name, len(in), len(op.inSizes))
	}
	return forFloat(out.Dtype(),
		func() error { runFused[float32](e, op, out, in); return nil },
		func() error { runFused[float64](e, op, out, in); return nil })
}

// fusedTask evaluates a fused op over parts of its output; each part has
// scratch registers of its own.
type fusedTask[T float] struct {
	op      *FusedOp
	out     []T
	ins     [][]T
	scratch []T
	split   bool // parts are parallelChunk long; else one part is all
}

type fusedTaskKey[T float] struct{}

func runFused[T float](e *graph.Exec, op *FusedOp, out *tensor.Dense, in []*tensor.Dense) {
	t := e.State(fusedTaskKey[T]{}, func() any { return new(fusedTask[T]) }).(*fusedTask[T])
	n, split := parts(e, op.size)
	t.op, t.out, t.split = op, floats[T](out), split
	t.ins = t.ins[:0]
	for _, x := range in {
		t.ins = append(t.ins, floats[T](x))
	}
	perPart := op.regs * fusedBlock
	if need := n * perPart; len(t.scratch) < need {
		t.scratch = make([]T, need)
	}
	e.Parallel(n, t)
	t.op, t.out = nil, nil // hold no buffers between runs
	clear(t.ins)
}

func (t *fusedTask[T]) Do(p int) {
	lo, hi := 0, len(t.out)
	if t.split {
		lo, hi = span(p, len(t.out))
	}
	perPart := t.op.regs * fusedBlock
	evalFused(t.op, t.out, t.ins, lo, hi, t.scratch[p*perPart:(p+1)*perPart])
}

// evalFused computes out[lo:hi] a block at a time, each step over the
// whole block before the next.
func evalFused[T float](op *FusedOp, out []T, ins [][]T, lo, hi int, scratch []T) {
	for b := lo; b < hi; b += fusedBlock {
		e := min(b+fusedBlock, hi)
		for k := range op.gather {
			g := &op.gather[k]
			gatherBlock(g, register(scratch, g.reg, e-b), ins[g.input], b)
		}
		for i := range op.code {
			c := &op.code[i]
			o := out[b:e]
			if c.dst >= 0 {
				o = register(scratch, c.dst, e-b)
			}
			x, sx := operand(op, c.src[0], scratch, ins, b, e)
			switch c.kind {
			case fusedUnary:
				unaryLoop(c.unary, o, x)
			case fusedBinary:
				y, sy := operand(op, c.src[1], scratch, ins, b, e)
				binaryLoop(c.bin, o, x, sx, y, sy)
			case fusedWhere:
				a, sa := operand(op, c.src[1], scratch, ins, b, e)
				v, sv := operand(op, c.src[2], scratch, ins, b, e)
				whereLoop(o, x, sx, a, sa, v, sv)
			}
		}
	}
}

func register[T float](scratch []T, r, n int) []T {
	return scratch[r*fusedBlock : r*fusedBlock+n]
}

// operand returns the elements [b, e) of an operand and their stride: a
// register's block, an input's elements, a single-element input's one,
// or the register a broadcast input is gathered into.
func operand[T float](op *FusedOp, r int, scratch []T, ins [][]T, b, e int) ([]T, int) {
	if r < 0 && op.inReg[-1-r] >= 0 {
		r = op.inReg[-1-r]
	}
	if r >= 0 {
		return register(scratch, r, e-b), 1
	}
	x := ins[-1-r]
	if len(x) == 1 {
		return x, 0
	}
	return x[b:e], 1
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

// FirstNonFinite returns the first step whose result at output element
// elem is NaN or infinite, computed from the inputs in as the kernel
// computes it; -1 if none is. A NaN check that finds a bad output element
// uses it to name the node that made it.
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

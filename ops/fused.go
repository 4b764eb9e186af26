package ops

import (
	"fmt"
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

// MaxFusedRank is the highest rank a fused instruction computes in: the
// fuse pass leaves values of higher rank unfused.
const MaxFusedRank = maxRank

// FusedOp computes an elementwise expression of its inputs, given as data
// (a list of steps), in one pass over the elements: a block of them at a
// time, each step applied to the whole block before the next step runs,
// with the arithmetic of its own op's kernel, so that every element comes
// out bit for bit as the unfused ops compute it, while intermediates stay
// in a few blocks of scratch memory rather than in tensors of their own.
// The cheap steps (arithmetic, comparisons, Neg, Abs, Square, Sign, Scale,
// ReLU) run in a kernel of their own that dispatches a step for little
// more than the cost of a few vector instructions (AVX2 on amd64); the
// others call their op's kernel. The compiler makes fused ops (pass
// "fuse"); NewFused makes one by hand.
//
// Every step has the outputs' size; inputs broadcast to the outputs'
// shape. An input of the outputs' size is read where it is, one of one
// element from a block of its copies made once a run; one broadcast along
// some axes (a bias, a column) is first gathered a block at a time into
// scratch.
//
// A fused op with one output is a graph.Op; one with several (steps whose
// results are also read outside the expression) is applied as a
// graph.MultiOp, Multi.
//
// Fused ops are made after differentiation, so they have no gradient of
// their own: Backward reports an error (differentiate the unfused graph).
type FusedOp struct {
	steps     []FusedStep
	outputs   []int // the steps whose results are the outputs
	outShapes [][]int
	code      []fusedInstr
	fast      []fusedCode // code as the kernel runs it
	inSizes   []int       // each input's number of elements
	scalars   int         // inputs of one element
	gather    []fusedGather
	size      int   // the outputs' number of elements
	regs      int   // scratch registers the expression needs at once
	stride    int   // elements of scratch per register: a block, or less
	locStride []int // per location (see fusedInstr): its elements' stride, 0 or 1
	name      string
	adam      *fusedAdam // Adam's step, run as one pass (matchAdam), or nil
}

// fusedBlock is the number of elements a fused op computes a step over at
// a time; parallelChunk is a multiple of it.
const fusedBlock = 256

// fusedInstr is a step ready to run: its op and where its operands and
// result live, as locations: registers first, then inputs, then outputs
// (a kernel keeps a table of their blocks' elements).
type fusedInstr struct {
	kind  fusedKind
	unary unary
	bin   binaryKind
	dst   int
	src   [3]int
	// The operands' strides, 0 for an input of one element, and whether
	// the step adds, subtracts, multiplies or divides two whole vectors.
	stride [3]int
	vv     bool
}

type fusedKind uint8

const (
	fusedUnary fusedKind = iota
	fusedBinary
	fusedWhere
)

// fusedLoc is where a step finds an operand or puts its result: a scratch
// register, an input (read in place) or an output.
type fusedLoc struct {
	where fusedPlace
	i     int
}

type fusedPlace uint8

const (
	inRegister fusedPlace = iota
	inInput
	inOutput
)

// fusedGather copies the block of a broadcast input that matches a block
// of the output into a register.
type fusedGather struct {
	input, reg int
	rank       int
	shape      [maxRank]int // the output's
	strides    [maxRank]int // the input's, 0 along broadcast axes
	// period is, for an input repeated whole along leading axes (a bias
	// row, say), its size: output element i reads input element i mod
	// period. 0 otherwise.
	period int
}

// tiledPeriod returns g's period: its size when it is its output's
// trailing axes laid out in order, repeated along broadcast leading axes;
// 0 otherwise.
func (g *fusedGather) tiledPeriod() int {
	size, a := 1, g.rank-1
	for ; a >= 0 && g.strides[a] != 0; a-- {
		if g.strides[a] != size {
			return 0
		}
		size *= g.shape[a]
	}
	for ; a >= 0; a-- {
		if g.strides[a] != 0 {
			return 0
		}
	}
	return size
}

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
// types. Its outputs are the results of the steps listed, in that order;
// with none listed, the last step's. It checks that every step is an
// elementwise op given as many operands as it takes, each an input or an
// earlier step, and that sizes fit (see FusedOp).
func NewFused(in []graph.Type, steps []FusedStep, outputs ...int) (*FusedOp, error) {
	if len(steps) == 0 {
		return nil, fmt.Errorf("nabla: NewFused: no steps")
	}
	if len(outputs) == 0 {
		outputs = []int{len(steps) - 1}
	}
	n := len(in)
	types := append([]graph.Type(nil), in...) // operands' types: inputs, then steps
	op := &FusedOp{steps: make([]FusedStep, len(steps)), code: make([]fusedInstr, len(steps))}
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
		}
		t, err := s.Op.Type(argTypes)
		if err != nil {
			return nil, fmt.Errorf("nabla: NewFused: step %d (%s): %v", j, s.Op.Name(), err)
		}
		if !graph.IsFloat(t.DType) {
			return nil, fmt.Errorf("nabla: NewFused: step %d (%s) gives %v: fused ops compute on float32 or float64", j, s.Op.Name(), t)
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
	for k, j := range outputs {
		if j < 0 || j >= len(steps) || slices.Index(outputs, j) != k {
			return nil, fmt.Errorf("nabla: NewFused: output %d is step %d: not a step, or listed twice", k, j)
		}
		op.outShapes = append(op.outShapes, types[n+j].Shape)
	}
	op.outputs = slices.Clone(outputs)
	op.size = types[n+outputs[0]].Size()
	shape := op.outShapes[0]
	for j, t := range types[n:] {
		if t.Size() != op.size {
			return nil, fmt.Errorf("nabla: NewFused: step %d (%s) has %d elements, the output %d", j, steps[j].Op.Name(), t.Size(), op.size)
		}
		if t.Rank() > len(shape) {
			shape = t.Shape // the same axes, with leading 1s
		}
	}
	if len(shape) > MaxFusedRank {
		return nil, fmt.Errorf("nabla: NewFused: rank %d is above the supported %d", len(shape), maxRank)
	}
	for i, t := range in {
		if b, err := graph.BroadcastShapes(t.Shape, shape); err != nil || !slices.Equal(b, shape) {
			return nil, fmt.Errorf("nabla: NewFused: input %d of shape %s does not broadcast to the output's %s", i, graph.ShapeString(t.Shape), graph.ShapeString(shape))
		}
		op.inSizes = append(op.inSizes, t.Size())
		if t.Size() == 1 {
			op.scalars++
		}
		if s := t.Size(); s != op.size && s != 1 {
			w := newElementwiseWalker(shape, t.Shape)
			op.gather = append(op.gather, fusedGather{input: i, reg: len(op.gather), rank: w.rank, shape: w.shape, strides: w.strides[0]})
			g := &op.gather[len(op.gather)-1]
			g.period = g.tiledPeriod()
		}
	}
	op.allocate(n)
	op.stride = max(1, min(fusedBlock, op.size))
	op.locStride = make([]int, op.regs+n+len(op.outputs))
	for l := range op.locStride {
		op.locStride[l] = 1
		if i := l - op.regs; i >= 0 && i < n && op.inSizes[i] == 1 {
			op.locStride[l] = 0 // read for every element
		}
	}
	for j := range op.code {
		c := &op.code[j]
		for k := range op.steps[j].Args {
			c.stride[k] = op.locStride[c.src[k]]
		}
		c.vv = c.kind == fusedBinary && c.bin <= divKind && c.stride[0] == 1 && c.stride[1] == 1
	}
	op.compileCode()
	op.name = fusedName(op.steps)
	op.adam = matchAdam(op)
	return op, nil
}

// allocate places each step's operands and result: gathered inputs in the
// first registers, outputs in the output buffers, and every other result
// in a register, reusing those of results no later step reads.
func (op *FusedOp) allocate(n int) {
	lastUse := make([]int, len(op.steps))
	for j, s := range op.steps {
		for _, a := range s.Args {
			if a >= n {
				lastUse[a-n] = j
			}
		}
	}
	output := make(map[int]int, len(op.outputs))
	for k, j := range op.outputs {
		output[j] = k
	}
	gathered := make(map[int]int, len(op.gather))
	for _, g := range op.gather {
		gathered[g.input] = g.reg
	}
	op.regs = len(op.gather)
	loc := make([]fusedLoc, len(op.steps))
	var srcs [][3]fusedLoc // resolved once every register is numbered
	dsts := make([]fusedLoc, len(op.steps))
	var free []int
	isFree := map[int]bool{}
	release := func(l fusedLoc) {
		if l.where == inRegister && !isFree[l.i] {
			free = append(free, l.i)
			isFree[l.i] = true
		}
	}
	for j, s := range op.steps {
		var src [3]fusedLoc
		for k, a := range s.Args {
			switch r, ok := gathered[a]; {
			case a < n && ok:
				src[k] = fusedLoc{inRegister, r}
			case a < n:
				src[k] = fusedLoc{inInput, a}
			default:
				src[k] = loc[a-n]
				if lastUse[a-n] == j {
					release(loc[a-n]) // read here for the last time
				}
			}
		}
		srcs = append(srcs, src)
		switch k, ok := output[j]; {
		case ok:
			loc[j] = fusedLoc{inOutput, k}
		case len(free) > 0:
			loc[j] = fusedLoc{inRegister, free[len(free)-1]}
			free = free[:len(free)-1]
			isFree[loc[j].i] = false
		default:
			loc[j] = fusedLoc{inRegister, op.regs}
			op.regs++
		}
		dsts[j] = loc[j]
		if lastUse[j] <= j { // never read
			release(loc[j])
		}
	}
	id := func(l fusedLoc) int {
		switch l.where {
		case inInput:
			return op.regs + l.i
		case inOutput:
			return op.regs + n + l.i
		}
		return l.i
	}
	for j := range op.code {
		op.code[j].dst = id(dsts[j])
		for k := range op.steps[j].Args {
			op.code[j].src[k] = id(srcs[j][k])
		}
	}
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

// Outputs returns the steps whose results are the outputs. The slice must
// not be modified.
func (op *FusedOp) Outputs() []int { return op.outputs }

// NumInputs is the number of inputs the fused op reads.
func (op *FusedOp) NumInputs() int { return len(op.inSizes) }

// Key identifies the expression, for common-subexpression elimination:
// its steps' ops and operands, its outputs and its inputs' sizes.
func (op *FusedOp) Key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %v %v", op.inSizes, op.outputs, op.outShapes)
	for _, s := range op.steps {
		fmt.Fprintf(&b, ";%#v%v", s.Op, s.Args)
	}
	return b.String()
}

// Types checks the inputs against the sizes the expression was built for
// and returns the outputs' types.
func (op *FusedOp) Types(in []graph.Type) ([]graph.Type, error) {
	dtype, err := graph.CheckInputs(in, len(op.inSizes))
	if err != nil {
		return nil, err
	}
	for i, t := range in {
		if t.Size() != op.inSizes[i] {
			return nil, fmt.Errorf("input %d has %d elements, want %d", i, t.Size(), op.inSizes[i])
		}
	}
	out := make([]graph.Type, len(op.outShapes))
	for k, s := range op.outShapes {
		out[k] = graph.TypeOf(dtype, s...)
	}
	return out, nil
}

// Type is Types for a fused op of one output.
func (op *FusedOp) Type(in []graph.Type) (graph.Type, error) {
	if len(op.outputs) != 1 {
		return graph.Type{}, fmt.Errorf("%s has %d outputs: apply it with Multi", op.name, len(op.outputs))
	}
	t, err := op.Types(in)
	if err != nil {
		return graph.Type{}, err
	}
	return t[0], nil
}

// Cost is one flop per step and element; the inputs are read and the
// outputs written once.
func (op *FusedOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	outs := make([]graph.Type, len(op.outputs))
	for k := range outs {
		outs[k] = graph.TypeOf(out.DType, op.outShapes[k]...)
	}
	c := graph.DefaultCost(in, outs...)
	c.Flops = int64(len(op.steps)) * int64(op.size)
	return c
}

// InPlace lets the output overwrite the first input of the output's size
// that it may overwrite (Overwrites). -1 if there is none, or several
// outputs.
func (op *FusedOp) InPlace() int {
	if len(op.outputs) != 1 {
		return -1
	}
	for i := range op.inSizes {
		if op.Overwrites(0, i) {
			return i
		}
	}
	return -1
}

// Overwrites reports whether output out may be written over input in's
// buffer: the input has the outputs' size (read where it is, not
// gathered), and no step after the one computing that output reads it. A
// block's steps then read the block's elements of the input before they
// are overwritten, and no other block reads them.
func (op *FusedOp) Overwrites(out, in int) bool {
	if out < 0 || out >= len(op.outputs) || in < 0 || in >= len(op.inSizes) || op.inSizes[in] != op.size {
		return false
	}
	for j := op.outputs[out] + 1; j < len(op.steps); j++ {
		if slices.Contains(op.steps[j].Args, in) {
			return false
		}
	}
	return true
}

// Backward reports that fused ops have no gradient: the compiler fuses
// after differentiation, so they are never differentiated. Build the
// gradient from the unfused graph.
func (op *FusedOp) Backward(ctx *graph.GradContext, _ *graph.Node) []*graph.Node {
	ctx.Errorf("%s is made by the compiler after differentiation and has no gradient: differentiate the unfused graph", op.name)
	return nil
}

// Forward computes the expression of one output serially.
func (op *FusedOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec computes the expression of one output, split over e's
// threads when it is large, in parts of whole blocks: every element is
// computed as in Forward, whatever the number of threads. Its scratch
// memory is kept in e's state, so a machine's runs allocate nothing.
func (op *FusedOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	if len(op.outputs) != 1 {
		return fmt.Errorf("%s has %d outputs: apply it with Multi", op.name, len(op.outputs))
	}
	return op.run(e, out, nil, in)
}

// Multi returns the fused op as a graph.MultiOp, for an expression with
// several outputs (or one).
func (op *FusedOp) Multi() FusedMulti { return FusedMulti{op} }

// FusedMulti is a fused op applied as a graph.MultiOp: one output per
// step listed as an output.
type FusedMulti struct{ op *FusedOp }

// Fused returns the fused op.
func (m FusedMulti) Fused() *FusedOp { return m.op }

// Name lists the ops the expression absorbs.
func (m FusedMulti) Name() string { return m.op.name }

// Key identifies the expression (see FusedOp.Key).
func (m FusedMulti) Key() string { return m.op.Key() }

// Types returns the outputs' types.
func (m FusedMulti) Types(in []graph.Type) ([]graph.Type, error) { return m.op.Types(in) }

// Overwrites is FusedOp.Overwrites.
func (m FusedMulti) Overwrites(out, in int) bool { return m.op.Overwrites(out, in) }

// Forward computes every output serially.
func (m FusedMulti) Forward(out []*tensor.Dense, in []*tensor.Dense) error {
	return m.ForwardExec(nil, out, in)
}

// ForwardExec computes every output as FusedOp.ForwardExec computes one.
func (m FusedMulti) ForwardExec(e *graph.Exec, out []*tensor.Dense, in []*tensor.Dense) error {
	if len(out) != len(m.op.outputs) {
		return fmt.Errorf("%s: %d outputs, want %d", m.op.name, len(out), len(m.op.outputs))
	}
	return m.op.run(e, nil, out, in)
}

package cuda

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// A plan is a program lowered to a backend's steps: kernels, products and
// copies on device buffers, and instructions left to the host. Buffers
// 0..len(slots)-1 are the program's slots; the others are the
// intermediate values of decomposed instructions and the updates' staging
// copies.
type plan struct {
	buffers []graph.Type          // every buffer's type (its size and dtype)
	consts  map[int]*tensor.Dense // buffers holding constants, uploaded at load
	kernels []kernelDef           // every distinct kernel, named k0, k1, …
	f32     []bool                // per kernel: its module's T is float32
	known   map[string]int        // kernels by their source, for reuse
	steps   []step
	instrs  [][2]int            // per instruction: its steps, [first, end)
	onHost  []bool              // per instruction: it runs on the host
	updates [2]int              // the updates' steps
	scratch int                 // the buffer of the kernels' scratch (graph.CUDASource's), 0 for none yet
	libs    *libraries          // for graph.LibraryOp's calls; nil plans none
	calls   []graph.LibraryCall // the library steps' calls
}

// stepKind is what a step does.
type stepKind int

const (
	stepKernel  stepKind = iota // launch kernel on args
	stepGemm                    // a matrix product
	stepCopy                    // copy bytes from args[1] to args[0]
	stepHost                    // run the instruction on the host
	stepLibrary                 // a library call (graph.LibraryOp) on args: n inputs, then the outputs
)

// ref is a place in device memory: a buffer and a byte offset in it.
type ref struct {
	buf int
	off int64
}

// step is one unit of a plan's work.
type step struct {
	instr  int // the instruction it belongs to; -1 for the updates
	kind   stepKind
	kernel int   // stepKernel: index in plan.kernels
	lib    int   // stepLibrary: index in plan.calls
	args   []ref // stepKernel: pointer arguments; stepCopy: dst, src; stepGemm: a, b, c; stepLibrary: inputs, outputs
	n      int64 // stepKernel: items; stepCopy: bytes; stepLibrary: inputs
	work   int64 // stepKernel: the most loop iterations of one item (graph.CUDASource's Work)
	gemm   gemmCall
}

// lowering is how one instruction's inputs and outputs map to buffers,
// while its steps are planned.
type lowering struct {
	p       *plan
	in, out []ref
	inT     []graph.Type
	outT    []graph.Type
	aliased bool // an output shares an input's memory
	node    *graph.Node
}

// newPlan lowers every instruction of p: to the kernels of its op
// (graph.CUDAKernel), to products for the matrix-product ops and most
// convolutions (ops.ConvProducts, with kernels unfolding or folding the
// images), to copies for reshapes, to its decomposition's steps
// (graph.Decomposer), a Scan whose steps are all taken to its loop
// unrolled (scan), or else to the host. It plans no library call
// (graph.LibraryOp): see newPlanOn.
func newPlan(p *compile.Program) (*plan, error) { return newPlanOn(p, nil) }

// newPlanOn is newPlan with the ops that run as library calls
// (graph.LibraryOp) asked for them, on libs's device.
func newPlanOn(p *compile.Program, libs *libraries) (*plan, error) {
	pl := &plan{consts: map[int]*tensor.Dense{}, known: map[string]int{}, libs: libs}
	for i, s := range p.Slots() {
		pl.buffers = append(pl.buffers, s.Type)
		if s.Kind == graph.KindConst {
			pl.consts[i] = s.Const
		}
	}
	for _, in := range p.Instructions() {
		first := len(pl.steps)
		l := &lowering{p: pl, inT: in.InTypes, outT: in.OutTypes, node: in.Node}
		for _, s := range in.In {
			l.in = append(l.in, ref{buf: s})
		}
		for _, s := range in.Out {
			l.out = append(l.out, ref{buf: s})
			l.aliased = l.aliased || slices.Contains(in.In, s)
		}
		var ok bool
		var err error
		if len(in.Bodies) == 0 {
			ok, err = l.lower(in.Op, in.Multi)
		} else if lay, plain := ops.ScanLayoutOf(in.Multi); plain && in.Op == nil && len(in.Bodies) == 1 {
			ok, err = l.scan(&in, lay)
		}
		if err != nil {
			return nil, fmt.Errorf("%s (node %v): %v", in.Name(), in.Node, err)
		}
		if !ok {
			pl.steps = append(pl.steps[:first], step{kind: stepHost})
		}
		for k := first; k < len(pl.steps); k++ {
			pl.steps[k].instr = len(pl.instrs)
		}
		pl.instrs = append(pl.instrs, [2]int{first, len(pl.steps)})
		pl.onHost = append(pl.onHost, !ok)
	}
	pl.planUpdates(p)
	return pl, nil
}

// lower plans the steps of an op (single- or multi-output) on l's
// buffers, or reports that the device has none for it.
func (l *lowering) lower(op graph.Op, multi graph.MultiOp) (bool, error) {
	if graph.AllEmpty(l.outT) {
		return true, nil // nothing to write
	}
	var generic any = op
	if op == nil {
		generic = multi
	}
	switch o := generic.(type) {
	case ops.MatMulOp:
		return true, l.matMul(o, false)
	case ops.MatMulAddOp:
		if err := l.broadcastInto(l.out[0], l.in[2], l.inT[2], l.outT[0]); err != nil {
			return false, err
		}
		return true, l.matMul(o.Product(), true)
	}
	if op != nil && (ops.IsReshape(op) || ops.IsIdentityLike(op)) && l.inT[0].Size() == l.outT[0].Size() {
		l.copy(l.out[0], l.in[0], l.outT[0])
		return true, nil
	}
	if c, ok := ops.ConvAsProducts(op, l.inT); ok {
		l.convProducts(c)
		return true, nil
	}
	if o, ok := generic.(graph.LibraryOp); ok {
		if ok, err := l.library(o); ok || err != nil {
			return ok, err
		}
	}
	if k, ok := generic.(graph.CUDAKernel); ok {
		srcs, err := k.CUDA(l.inT, l.outT)
		if err == nil {
			l.kernels(srcs)
			return true, nil
		}
	}
	if d, ok := generic.(graph.Decomposer); ok {
		return l.decompose(d)
	}
	return false, nil
}

// kernels plans the op's kernels on its inputs and outputs.
func (l *lowering) kernels(srcs []graph.CUDASource) {
	f32 := floatType(l.inT, l.outT) == graph.Float32
	for _, src := range srcs {
		if src.N == 0 {
			continue
		}
		k := l.p.kernel(newKernelDef("", src, l.inT, l.outT, !l.aliased), f32)
		args := append(slices.Clone(l.in), l.out...)
		if src.Scratch > 0 {
			args = append(args, l.p.scratchOf(src.Scratch))
		}
		l.p.steps = append(l.p.steps, step{kind: stepKernel, kernel: k, args: args, n: src.N, work: src.Work})
	}
}

// scratchOf is the scratch memory of a kernel using n doubles: one
// buffer that every kernel shares (they run one after another), as large
// as the largest asks.
func (pl *plan) scratchOf(n int64) ref {
	if pl.scratch == 0 {
		pl.scratch = pl.buffer(graph.Type{DType: graph.Float64, Shape: []int{0}}).buf
	}
	if t := &pl.buffers[pl.scratch]; int64(t.Shape[0]) < n {
		t.Shape = []int{int(n)}
	}
	return ref{buf: pl.scratch}
}

// kernel returns the index of a kernel like d (T float32 when f32),
// adding and naming it when it is new: instructions with the same kernel
// share its code.
func (pl *plan) kernel(d kernelDef, f32 bool) int {
	key := fmt.Sprint(f32, d.params, d.helpers, d.body)
	if k, ok := pl.known[key]; ok {
		return k
	}
	k := len(pl.kernels)
	d.name = fmt.Sprintf("k%d", k)
	pl.kernels, pl.f32 = append(pl.kernels, d), append(pl.f32, f32)
	pl.known[key] = k
	return k
}

// copy plans a copy of a value of type t from src to dst.
func (l *lowering) copy(dst, src ref, t graph.Type) { l.p.copy(dst, src, t) }

// copy plans a copy of a value of type t from src to dst (nothing when
// they are the same place).
func (pl *plan) copy(dst, src ref, t graph.Type) {
	if dst == src || t.Size() == 0 {
		return
	}
	pl.steps = append(pl.steps, step{kind: stepCopy, args: []ref{dst, src}, n: int64(t.Size()) * int64(t.DType.Size())})
}

// buffer adds a device buffer for a value of type t.
func (pl *plan) buffer(t graph.Type) ref {
	pl.buffers = append(pl.buffers, t)
	return ref{buf: len(pl.buffers) - 1}
}

// planUpdates plans the program's parameter updates as copies, after
// every instruction, all from values computed before any is written: a
// value another update overwrites is staged first (as vm does).
func (pl *plan) planUpdates(p *compile.Program) {
	first := len(pl.steps)
	ups := p.Updates()
	updated := map[int]bool{}
	for _, u := range ups {
		if u.From != u.Slot {
			updated[u.Slot] = true
		}
	}
	from := make([]ref, len(ups))
	for i, u := range ups {
		from[i] = ref{buf: u.From}
		if updated[u.From] {
			t := p.Slots()[u.From].Type
			from[i] = pl.buffer(t)
			pl.copy(from[i], ref{buf: u.From}, t)
		}
	}
	for i, u := range ups {
		if u.From != u.Slot {
			pl.copy(ref{buf: u.Slot}, from[i], p.Slots()[u.Slot].Type)
		}
	}
	for k := first; k < len(pl.steps); k++ {
		pl.steps[k].instr = -1
	}
	pl.updates = [2]int{first, len(pl.steps)}
}

// broadcastInto plans writing a value of type from, broadcast to type to,
// into dst.
func (l *lowering) broadcastInto(dst, src ref, from, to graph.Type) error {
	if from.Size() == to.Size() {
		l.copy(dst, src, to)
		return nil
	}
	sub := &lowering{p: l.p, in: []ref{src}, out: []ref{dst}, inT: []graph.Type{from}, outT: []graph.Type{to}, node: l.node}
	sub.kernels([]graph.CUDASource{{N: int64(to.Size()), Body: "out0[i] = in0[" + ops.BroadcastIndexC(from, to.Shape) + "];"}})
	return nil
}

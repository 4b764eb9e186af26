package cuda

import (
	"slices"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// maxScanSteps bounds the steps a Scan unrolls into: beyond it (a loop
// of many steps over a long body) the loop runs on the host, as loops
// that stop on a value do.
const maxScanSteps = 1 << 16

// scan plans a Scan whose steps are all taken (ops.ScanLayoutOf) as its
// loop unrolled on the device: the body's program lowered once onto
// buffers of its own, and for each step the copies in (the carries, the
// sequences' slices), the body's steps, and the copies out (the step
// outputs' slices, the new carries) with the sums' terms added — the
// CPU's kernel's order, so the values are its bits. The whole loop then
// joins the program's CUDA graph. It reports false, for the host, when
// the body has an instruction without a device kernel or the unrolled
// loop would exceed maxScanSteps.
func (l *lowering) scan(in *compile.Instruction, lay ops.ScanLayout) (bool, error) {
	body := in.Bodies[0]
	bp, err := newPlan(body)
	if err != nil {
		return false, err
	}
	if hasHost(bp) || bp.updates[0] != bp.updates[1] || lay.Steps*(len(bp.steps)+8) > maxScanSteps {
		return false, nil
	}
	pl := l.p
	base := len(pl.buffers)
	var op any = in.Op
	if in.Op == nil {
		op = in.Multi
	}
	sub := op.(graph.SubgraphOp).Subgraphs()[0]
	// slot is the body's buffer of node n, in the plan's numbering.
	slot := func(n *graph.Node) (ref, bool) {
		s, ok := body.SlotOf(n)
		return ref{buf: base + s}, ok
	}
	outs := make([]ref, len(sub.Outputs))
	for k, n := range sub.Outputs {
		r, ok := slot(n)
		if !ok {
			return false, nil
		}
		outs[k] = r
	}
	pl.buffers = append(pl.buffers, bp.buffers...)
	for b, c := range bp.consts {
		pl.consts[base+b] = c
	}
	kernels := make([]int, len(bp.kernels))
	for k, d := range bp.kernels {
		kernels[k] = pl.kernel(d, bp.f32[k])
	}
	bodyIn := func(i int) (ref, graph.Type, bool) {
		n := sub.Inputs[i]
		r, ok := slot(n)
		return r, n.Type(), ok
	}
	C, A, S := lay.Carries, lay.Sums, lay.Seqs
	for i := C + A + S; i < len(l.in); i++ { // captured: the same every step
		if r, t, ok := bodyIn(lay.BodyInput(i)); ok {
			l.copy(r, l.in[i], t)
		}
	}
	for c := range C + A {
		l.copy(l.out[c], l.in[c], l.outT[c])
	}
	for i := range lay.Steps {
		t := int64(i)
		if lay.Reverse {
			t = int64(lay.Steps - 1 - i)
		}
		for c := range C {
			if r, ty, ok := bodyIn(c); ok {
				l.copy(r, l.out[c], ty)
			}
		}
		for s := range S {
			if r, ty, ok := bodyIn(C + s); ok {
				l.copy(r, at(l.in[C+A+s], ty, t), ty)
			}
		}
		for _, s := range bp.steps {
			s.args = slices.Clone(s.args)
			for a := range s.args {
				s.args[a].buf += base
			}
			if s.kind == stepKernel {
				s.kernel = kernels[s.kernel]
			}
			pl.steps = append(pl.steps, s)
		}
		k := C + A
		for j := C + A; j < len(l.out); j++ {
			if !lay.Skip[j] {
				ty := sub.Outputs[k].Type()
				l.copy(at(l.out[j], ty, t), outs[k], ty)
				k++
			}
		}
		for a := C; a < C+A; a++ {
			ty := l.outT[a]
			add := &lowering{p: pl, in: []ref{l.out[a], outs[a]}, out: []ref{l.out[a]}, inT: []graph.Type{ty, ty}, outT: []graph.Type{ty}, aliased: true, node: l.node}
			add.kernels([]graph.CUDASource{{N: int64(ty.Size()), Body: "out0[i] = in0[i] + in1[i];"}})
		}
		for c := range C {
			l.copy(l.out[c], outs[c], l.outT[c])
		}
	}
	return true, nil
}

// at is the place of slice t, of type t1, in the stack of slices at r.
func at(r ref, t1 graph.Type, t int64) ref {
	r.off += t * int64(t1.Size()) * int64(t1.DType.Size())
	return r
}

package cuda

import (
	"fmt"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
)

// decompose plans an op as the program of its decomposition: its inputs
// are the instruction's, its outputs written to the instruction's, its
// other values in buffers of their own. It reports false when some op of
// the decomposition has no device kernel: the instruction then runs on
// the host whole.
func (l *lowering) decompose(d graph.Decomposer) (bool, error) {
	g := graph.New()
	ins := make([]*graph.Node, len(l.inT))
	for i, t := range l.inT {
		ins[i] = g.Input(fmt.Sprintf("in%d", i), t.DType, t.Shape...)
	}
	outs, err := d.Decompose(ins)
	if err == nil {
		err = g.Err()
	}
	if err != nil {
		return false, fmt.Errorf("Decompose: %v", err)
	}
	if len(outs) != len(l.outT) {
		return false, fmt.Errorf("Decompose returned %d nodes for %d outputs", len(outs), len(l.outT))
	}
	for k, n := range outs {
		if n == nil || !n.Type().Equal(l.outT[k]) {
			return false, fmt.Errorf("Decompose: output %d is %v, want %v", k, n, l.outT[k])
		}
	}
	// The products a SharedMatMul decomposes into stay apart.
	sub, err := compile.Compile(outs, compile.WithoutPass("sharedmatmul"))
	if err != nil {
		return false, fmt.Errorf("compiling the decomposition: %v", err)
	}
	refs := make([]ref, len(sub.Slots()))
	mapped := make([]bool, len(refs))
	for i, n := range ins {
		if s, ok := sub.SlotOf(n); ok {
			refs[s], mapped[s] = l.in[i], true
		}
	}
	// Outputs are computed in place unless the instruction writes over an
	// input, or the output is an input or constant of the decomposition:
	// then they are copied at the end.
	for k, n := range outs {
		s, _ := sub.SlotOf(n)
		if !mapped[s] && !l.aliased && sub.Slots()[s].Kind == graph.KindOp {
			refs[s], mapped[s] = l.out[k], true
		}
	}
	for s, slot := range sub.Slots() {
		if mapped[s] {
			continue
		}
		refs[s], mapped[s] = l.p.buffer(slot.Type), true
		if slot.Kind == graph.KindConst {
			l.p.consts[refs[s].buf] = slot.Const
		}
	}
	for _, in := range sub.Instructions() {
		sl := &lowering{p: l.p, inT: in.InTypes, outT: in.OutTypes, node: in.Node}
		for _, s := range in.In {
			sl.in = append(sl.in, refs[s])
		}
		for _, s := range in.Out {
			sl.out = append(sl.out, refs[s])
			for _, r := range sl.in {
				sl.aliased = sl.aliased || r == refs[s]
			}
		}
		ok, err := sl.lower(in.Op, in.Multi)
		if err != nil || !ok || len(in.Bodies) > 0 {
			return false, err
		}
	}
	for k, n := range outs {
		s, _ := sub.SlotOf(n)
		l.copy(l.out[k], refs[s], l.outT[k])
	}
	return true, nil
}

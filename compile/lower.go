package compile

import (
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// lower emits the program: its slots (placed by earlier passes) and its
// instruction list.
func lower(f *function, g *graph.Graph) *Program {
	p := &Program{graph: g, nodes: map[*graph.Node]int{}, instrs: make([]Instruction, 0, len(f.values))}
	slotOf := func(v *value) int { return v.slot }
	typeOf := func(v *value) graph.Type { return v.typ }
	for _, v := range f.values {
		for v.slot >= len(p.slots) {
			p.slots = append(p.slots, Slot{})
			p.slotNodes = append(p.slotNodes, nil)
		}
		s := &p.slots[v.slot]
		if s.Node == nil {
			*s = Slot{Type: v.typ, Kind: v.kind, Node: v.node, Const: v.konst}
		}
		p.slotNodes[v.slot] = append(p.slotNodes[v.slot], v.node)
		switch v.kind {
		case graph.KindInput:
			p.inputs = append(p.inputs, v.node)
			p.nodes[v.node] = v.slot
		case graph.KindParam:
			p.params = append(p.params, v.node)
			p.nodes[v.node] = v.slot
		case graph.KindOp:
			if v != v.instr() {
				continue // written by its group's first output
			}
			outs := v.results()
			p.instrs = append(p.instrs, Instruction{
				Op: v.op, Multi: v.multi, Node: v.node,
				In: mapSlice(v.args, slotOf), Out: mapSlice(outs, slotOf),
				InTypes: mapSlice(v.args, typeOf), OutTypes: mapSlice(outs, typeOf),
			})
		}
	}
	p.outputs = slices.Clone(f.outNodes) // the caller may reuse its slice
	merged := map[*graph.Node]bool{}     // outputs whose value another node computes
	for i, n := range f.outNodes {
		v := f.outputs[i]
		p.nodes[n] = v.slot
		if v.node != n && !merged[n] {
			merged[n] = true
			p.slotNodes[v.slot] = append(p.slotNodes[v.slot], n)
		}
	}
	for _, u := range f.updates {
		p.updates = append(p.updates, Update{Param: u.param.node, Slot: u.param.slot, From: u.expr.slot})
	}
	return p
}

func mapSlice[T, U any](xs []T, fn func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = fn(x)
	}
	return out
}

package compile

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// memory plans the slots. A value takes the slot of a value that died
// before it, of the same dtype and element count (the shape may differ),
// or, where its op allows it (graph.InPlacer), the slot of the argument it
// overwrites when that argument dies at it. Inputs, parameters and
// constants have slots of their own, but for an update's value computed in
// its parameter's slot (pass inplace); outputs and the values updates read
// live to the end of the run, so their slots are never taken over.
func memory(f *function) error {
	lv := liveness(f)
	free := map[bufferKey][]int{} // dead values' slots, reused last-freed first
	slots := 0
	take := func(v *value) {
		k := bufferKey{v.typ.DType, v.typ.Size()}
		if n := len(free[k]); n > 0 {
			v.slot = free[k][n-1]
			free[k] = free[k][:n-1]
			return
		}
		v.slot = slots
		slots++
	}
	release := func(v *value) {
		k := bufferKey{v.typ.DType, v.typ.Size()}
		free[k] = append(free[k], v.slot)
	}
	for _, v := range f.values {
		if v.kind != graph.KindOp {
			v.slot = slots
			slots++
			continue
		}
		if v != v.instr() {
			continue // placed with its group's first output
		}
		t := lv.def[v]
		outs := v.results()
		over := inPlaceArg(v, lv)
		if v.into != nil {
			over = nil
		}
		for _, o := range outs {
			switch {
			case o.into != nil:
				o.slot = o.into.slot
			case over != nil:
				o.slot = over.slot
			default:
				take(o)
			}
		}
		// Arguments dying here free their slots only now: the kernel
		// reads them while it writes its outputs.
		for _, a := range v.args {
			if a.kind == graph.KindOp && lv.last[a] == t && a != over {
				release(a)
				lv.last[a] = -1 // released once, however often v reads it
			}
		}
		for _, o := range outs {
			if lv.last[o] == t && o.into == nil { // never read
				release(o)
			}
		}
	}
	return nil
}

// bufferKey says which slots can hold a value: same dtype, same size.
type bufferKey struct {
	dtype tensor.Dtype
	size  int
}

// inPlaceArg returns the argument whose slot v may take over, or nil: its
// op must allow it, and the argument must be a computed value of v's type
// (of its dtype and size, for a Reshape, whose elements stay where they
// are) that nothing reads after v.
func inPlaceArg(v *value, lv lifetimes) *value {
	p, ok := v.op.(graph.InPlacer)
	if !ok {
		return nil
	}
	k := p.InPlace()
	if k < 0 || k >= len(v.args) {
		return nil
	}
	a := v.args[k]
	sameType := a.typ.Equal(v.typ) ||
		ops.IsReshape(v.op) && a.typ.DType == v.typ.DType && a.typ.Size() == v.typ.Size()
	if a.kind != graph.KindOp || !sameType || lv.last[a] != lv.def[v] {
		return nil
	}
	return a
}

// lifetimes gives each value the position (in f.values) of the
// instruction computing it and of the last instruction reading it; values
// read after the run, by outputs and updates, are read at len(f.values).
type lifetimes struct {
	def, last map[*value]int
}

func liveness(f *function) lifetimes {
	lv := lifetimes{def: make(map[*value]int, len(f.values)), last: make(map[*value]int, len(f.values))}
	for i, v := range f.values {
		t := i
		if v != v.instr() {
			t = lv.def[v.instr()] // the group's first output comes first
		}
		lv.def[v], lv.last[v] = t, t
		for _, a := range v.args {
			lv.last[a] = t
		}
	}
	end := len(f.values)
	for _, o := range f.outputs {
		lv.last[o] = end
	}
	for _, u := range f.updates {
		lv.last[u.expr] = end
	}
	return lv
}

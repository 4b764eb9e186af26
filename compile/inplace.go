package compile

import "github.com/nabla-go/nabla/graph"

// inplace lets an update be computed in its parameter's own buffer, so
// that no copy is left for after the run: where the instruction computing
// the update's value is the last to read the parameter's old value, and
// its op may write that value over the parameter where it reads it
// (graph.Overwriter, graph.InPlacer), or does not read the parameter at
// all. Every update still reads the old values: none is read after the
// instruction writes the new one. The memory pass places such a value in
// the parameter's slot.
func inplace(f *function) error {
	lv := liveness(f)
	for _, u := range f.updates {
		if o := u.expr; o.kind == graph.KindOp && o.into == nil && overwritable(o, u.param, lv) {
			o.into = u.param
		}
	}
	return nil
}

// overwritable reports whether value o may be computed in parameter p's
// slot: nothing reads p after o's instruction, and that instruction, if it
// reads p, may write o over it. A parameter made after o is refused too
// (its position is its first "read"), so its slot is placed before o's.
func overwritable(o, p *value, lv lifetimes) bool {
	t := lv.def[o]
	switch last := lv.last[p]; {
	case last < t:
		return true
	case last > t:
		return false
	}
	v := o.instr()
	for i, a := range v.args {
		if a == p && !overwrites(v, o.index, i) {
			return false
		}
	}
	return true
}

// overwrites reports whether v's instruction may write its output out
// over its input in.
func overwrites(v *value, out, in int) bool {
	var op any = v.op
	if v.multi != nil {
		op = v.multi
	}
	if w, ok := op.(graph.Overwriter); ok {
		return w.Overwrites(out, in)
	}
	p, ok := op.(graph.InPlacer)
	return ok && v.multi == nil && p.InPlace() == in
}

package compile

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// checkFunction verifies the invariants every pass must keep: values are in
// topological order, every argument is present, op values' types are what
// their ops infer, outputs, updates and groups refer to live values, and
// once slots are placed, no value overwrites one still needed.
func checkFunction(f *function) error {
	pos := make(map[*value]int, len(f.values))
	for i, v := range f.values {
		pos[v] = i
	}
	for i, v := range f.values {
		for j, a := range v.args {
			k, ok := pos[a]
			if !ok || k >= i {
				return fmt.Errorf("value %d (%s): argument %d is missing or not before it", i, v.opName(), j)
			}
		}
		if v.kind != graph.KindOp {
			continue
		}
		if v.op == nil && v.multi == nil {
			return fmt.Errorf("value %d has no op", i)
		}
		types := mapSlice(v.args, func(a *value) graph.Type { return a.typ })
		var want graph.Type
		if v.op != nil {
			t, err := v.op.Type(types)
			if err != nil {
				return fmt.Errorf("value %d (%s): %v", i, v.opName(), err)
			}
			want = t
		} else {
			ts, err := v.multi.Types(types)
			if err != nil || v.index >= len(ts) {
				return fmt.Errorf("value %d (%s): output %d: %v", i, v.opName(), v.index, err)
			}
			want = ts[v.index]
			for _, s := range v.group {
				if _, ok := pos[s]; !ok {
					return fmt.Errorf("value %d (%s): a sibling output is missing", i, v.opName())
				}
			}
		}
		if !want.Equal(v.typ) {
			return fmt.Errorf("value %d (%s): type %v, but the op infers %v", i, v.opName(), v.typ, want)
		}
	}
	for i, o := range f.outputs {
		if _, ok := pos[o]; !ok {
			return fmt.Errorf("output %d is not computed", i)
		}
	}
	for _, u := range f.updates {
		if _, ok := pos[u.expr]; !ok {
			return fmt.Errorf("update of %v is not computed", u.param.node)
		}
	}
	return checkSlots(f)
}

// checkSlots verifies a memory plan. A slot holds one value at a time: a
// value may take a slot only when the value held there is dead, or is the
// argument its op overwrites in place. Inputs, parameters and constants
// keep their slots to themselves, and values sharing a slot have one dtype
// and size.
func checkSlots(f *function) error {
	placed := 0
	for _, v := range f.values {
		if v.slot >= 0 {
			placed++
		}
	}
	if placed == 0 {
		return nil
	}
	if placed < len(f.values) {
		return fmt.Errorf("%d of %d values have no slot", len(f.values)-placed, len(f.values))
	}
	lv := liveness(f)
	holder := map[int]*value{}
	for i, v := range f.values {
		prev, shared := holder[v.slot]
		holder[v.slot] = v
		if !shared {
			continue
		}
		t := lv.def[v]
		switch {
		case v.into == prev && overwritable(v, prev, lv):
		case prev.kind != graph.KindOp || v.kind != graph.KindOp:
			return fmt.Errorf("value %d (%s) shares slot %d with a %s", i, v.opName(), v.slot, prev.opName())
		case prev.typ.DType != v.typ.DType || prev.typ.Size() != v.typ.Size():
			return fmt.Errorf("value %d (%s) of type %v shares slot %d with a value of type %v", i, v.opName(), v.typ, v.slot, prev.typ)
		case lv.last[prev] < t:
		case lv.last[prev] == t && inPlaceArg(v, lv) == prev:
		default:
			return fmt.Errorf("value %d (%s) overwrites slot %d while %s %v is still needed", i, v.opName(), v.slot, prev.opName(), prev.node)
		}
	}
	return nil
}

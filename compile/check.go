package compile

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// checkFunction verifies the invariants every pass must keep: values are in
// topological order, every argument is present, op values' types are what
// their ops infer, and outputs, updates and groups refer to live values.
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
	return nil
}

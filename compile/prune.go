package compile

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// prune gives multi-output ops that can spare unread outputs
// (graph.OutputPruner) the outputs nothing reads: a Scan's stored
// carries, when no second derivative reads them, cost neither time nor
// memory.
func prune(f *function) error {
	read := map[*value]bool{}
	for _, v := range f.values {
		for _, a := range v.args {
			read[a] = true
		}
	}
	for _, o := range f.outputs {
		read[o] = true
	}
	for _, u := range f.updates {
		read[u.param], read[u.expr] = true, true
	}
	for _, v := range f.values {
		if v.multi == nil || v != v.instr() {
			continue
		}
		p, ok := v.multi.(graph.OutputPruner)
		if !ok {
			continue
		}
		used := make([]bool, len(v.group))
		for k, o := range v.group {
			used[k] = read[o]
		}
		if !slices.Contains(used, false) {
			continue
		}
		op := p.Prune(used)
		if op == nil {
			continue
		}
		types, err := op.Types(mapSlice(v.args, func(a *value) graph.Type { return a.typ }))
		if err != nil || len(types) != len(v.group) {
			return fmt.Errorf("%s: pruned op does not type its inputs: %v", v.opName(), err)
		}
		for k, o := range v.group {
			if used[k] && !types[k].Equal(o.typ) {
				return fmt.Errorf("%s: pruned op changes the type of output %d, which is read, from %v to %v", v.opName(), k, o.typ, types[k])
			}
		}
		for k, o := range v.group {
			o.multi, o.typ = op, types[k]
		}
	}
	return nil
}

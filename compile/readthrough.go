package compile

import "github.com/nabla-go/nabla/ops"

// readthrough lets a reduction (Sum, Mean, Max, SumTo) of a Transpose, a
// Slice or a Reshape of them read its operand where the elements lie
// (ops.ReadThrough) where nothing else reads the layout ops' results: the
// layout ops' copies, a pass over the data that can cost more than the
// reduction itself (a transpose reads a column at a time), are not made.
// The reduction adds (or compares) the same elements in the same order,
// so its values stay the same bit for bit. The layout values it absorbs
// are left for late deadcode.
//
// The chain of layout ops below the reduction is read through from the
// deepest value it can start at: a Reshape that regroups strided
// elements (no strided view) ends it, its own result then read as it is.
func readthrough(f *function) error {
	uses := f.uses()
	f.rewrite(func(v *value) *value {
		if v.op == nil || len(v.args) != 1 {
			return v
		}
		var chain []*value // the layout values, the reduction's operand first
		for p := v.args[0]; ops.IsLayout(p.op) && uses[p] == 1; p = p.args[0] {
			if _, ok := ops.ContiguousView(p.args[0].typ.Shape); !ok {
				break
			}
			chain = append(chain, p)
		}
		for base := len(chain); base > 0; base-- {
			src := chain[base-1].args[0]
			view, ok := ops.ContiguousView(src.typ.Shape)
			for k := base - 1; k >= 0 && ok; k-- {
				view, ok = view.Through(chain[k].op, chain[k].typ)
			}
			if !ok {
				continue
			}
			if op, ok := ops.ReadThrough(v.op, view); ok {
				v.op, v.args = op, []*value{src}
				return v
			}
		}
		return v
	})
	return nil
}

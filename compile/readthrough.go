package compile

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// readthrough lets an op read an operand that a Transpose, a Slice or a
// Reshape of them makes where the elements lie (ops.ReadThrough), where
// nothing else reads the layout ops' results: their copy, a pass over the
// data that can cost more than the op itself, is not made. Reductions
// (Sum, Mean, Max, SumTo) read any such view; unary and binary
// elementwise ops read views whose elements lie a few apart (a Slice's
// every other element), and only where they would not join a fused group
// (pass fuse), whose one pass over the elements they would split. The
// op computes the same elements in the same order, so its values stay the
// same bit for bit. The layout values it absorbs are left for late
// deadcode.
//
// The chain of layout ops below an operand is read through from the
// deepest value it can start at: a Reshape that regroups strided
// elements (no strided view) ends it, its own result then read as it is.
func readthrough(f *function) error {
	uses := f.uses()
	readByElementwise := map[*value]bool{}
	for _, v := range f.values {
		if v.op != nil && ops.IsElementwise(v.op) {
			for _, a := range v.args {
				readByElementwise[a] = true
			}
		}
	}
	f.rewrite(func(v *value) *value {
		if v.op == nil || !graph.IsFloat(v.typ.DType) {
			return v
		}
		if ops.IsElementwise(v.op) && readByElementwise[v] {
			return v
		}
		for k := range v.args {
			if readThroughOperand(v, k, uses) {
				return v
			}
		}
		return v
	})
	return nil
}

// readThroughOperand makes v read its operand k through the layout ops
// below it, if it can, and reports whether it did.
func readThroughOperand(v *value, k int, uses map[*value]int) bool {
	if ops.IsElementwise(v.op) {
		for j, a := range v.args {
			if j != k && a.op != nil && ops.IsElementwise(a.op) {
				return false // v would join a's fused group
			}
		}
	}
	var chain []*value // the layout values, v's operand first
	for p := v.args[k]; ops.IsLayout(p.op) && uses[p] == 1; p = p.args[0] {
		if _, ok := ops.ContiguousView(p.args[0].typ.Shape); !ok {
			break
		}
		chain = append(chain, p)
	}
	in := mapSlice(v.args, func(a *value) graph.Type { return a.typ })
	for base := len(chain); base > 0; base-- {
		src := chain[base-1].args[0]
		view, ok := ops.ContiguousView(src.typ.Shape)
		for j := base - 1; j >= 0 && ok; j-- {
			view, ok = view.Through(chain[j].op, chain[j].typ)
		}
		if !ok {
			continue
		}
		in[k] = src.typ
		if op, ok := ops.ReadThrough(v.op, in, k, view); ok {
			v.op = op
			v.args[k] = src
			return true
		}
	}
	return false
}

package compile

import "github.com/nabla-go/nabla/ops"

// matmuladd turns x + a·b, where nothing else reads the product, into one
// MatMulAdd that accumulates the product onto x: the sum costs no pass of
// its own, and the result takes x's buffer where x dies there. Gradients
// summed over several consumers and biases added to a product are such
// sums. The product is rounded once less (each element is x plus the
// products, not the rounded product plus x).
//
// x must not be an operand of the product: computed in place over x, the
// kernel would overwrite the operand it reads.
func matmuladd(f *function) error {
	uses := f.uses()
	f.rewrite(func(v *value) *value {
		if v.op == nil || !ops.IsAdd(v.op) {
			return v
		}
		for i, p := range v.args {
			mm, ok := ops.IsMatMul(p.op)
			x := v.args[1-i]
			if !ok || uses[p] != 1 || !p.typ.Equal(v.typ) || x == p.args[0] || x == p.args[1] {
				continue
			}
			v.op = ops.MatMulAddOp{TransA: mm.TransA, TransB: mm.TransB}
			v.args = []*value{p.args[0], p.args[1], x}
			return v
		}
		return v
	})
	return nil
}

// uses counts the reads of each value: by other values (once per
// argument), by the outputs and by the updates.
func (f *function) uses() map[*value]int {
	n := make(map[*value]int, len(f.values))
	for _, v := range f.values {
		for _, a := range v.args {
			n[a]++
		}
	}
	for _, o := range f.outputs {
		n[o]++
	}
	for _, u := range f.updates {
		n[u.expr]++
	}
	return n
}

package compile

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// solve turns products with an inverse into solves: Inverse(A)·B into
// Solve(A, B), and B·Inverse(A) into the solve from the right, either
// with the inverse transposed too (a solve with Aᵀ). A solve factorises A
// and substitutes B's columns (rows), a third of the flops of inverting A
// and multiplying, and rounds less. It rewrites an inverse only when
// every reader is such a product: an inverse read otherwise is computed
// anyway, and the solves would add their factorisations to it. The
// inverse is left for late deadcode.
//
// The solution is rounded differently from the product (it is not the
// same bits, as matmuladd's sums are not); it agrees to rounding, which
// for an ill-conditioned A means to about cond(A) times the unit roundoff.
func solve(f *function) error {
	uses := f.uses()
	solvable := map[*value]int{} // an inverse: its reads by rewritable products
	for _, v := range f.values {
		if inv, _, _, ok := solveOperands(v); ok {
			solvable[inv]++
		}
	}
	f.rewrite(func(v *value) *value {
		inv, b, op, ok := solveOperands(v)
		if !ok || solvable[inv] != uses[inv] {
			return v
		}
		v.op = op
		v.args = []*value{inv.args[0], b}
		return v
	})
	return nil
}

// solveOperands returns the inverse that v multiplies, the other operand
// and the solve that computes v, when v is a product Inverse(A)·B or
// B·Inverse(A) (the inverse transposed or not, B not) with B of the
// solve's shape: A and B with the same batch axes (a product that
// broadcasts one matrix over a batch stays a product).
func solveOperands(v *value) (inv, b *value, op graph.Op, ok bool) {
	if v.op == nil {
		return nil, nil, nil, false
	}
	mm, ok := ops.IsMatMul(v.op)
	if !ok {
		return nil, nil, nil, false
	}
	isInverse := func(x *value) bool { return x.op != nil && ops.IsInverse(x.op) }
	switch {
	case isInverse(v.args[0]) && !mm.TransB:
		inv, b, op = v.args[0], v.args[1], ops.SolveOp(mm.TransA, false)
	case isInverse(v.args[1]) && !mm.TransA:
		inv, b, op = v.args[1], v.args[0], ops.SolveOp(mm.TransB, true)
	default:
		return nil, nil, nil, false
	}
	t, err := op.Type([]graph.Type{inv.args[0].typ, b.typ})
	if err != nil || !t.Equal(v.typ) {
		return nil, nil, nil, false
	}
	return inv, b, op, true
}

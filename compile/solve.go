package compile

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// solve turns products with an inverse into solves: Inverse(A)·B into
// Solve(A, B), and Inverse(A)ᵀ·B (a product that transposes its first
// operand) into the solve with Aᵀ. A solve factorises A and substitutes
// B's columns, a third of the flops of inverting A and multiplying, and
// rounds less. It rewrites an inverse only when every reader is such a
// product: an inverse read otherwise is computed anyway, and the solves
// would add their factorisations to it. The inverse is left for late
// deadcode.
//
// The solution is rounded differently from the product (it is not the
// same bits, as matmuladd's sums are not); it agrees to rounding, which
// for an ill-conditioned A means to about cond(A) times the unit roundoff.
func solve(f *function) error {
	uses := f.uses()
	solvable := map[*value]int{} // an inverse: its reads by rewritable products
	for _, v := range f.values {
		if inv, ok := solveOperands(v); ok {
			solvable[inv]++
		}
	}
	f.rewrite(func(v *value) *value {
		inv, ok := solveOperands(v)
		if !ok || solvable[inv] != uses[inv] {
			return v
		}
		mm, _ := ops.IsMatMul(v.op)
		v.op = ops.SolveOp(mm.TransA)
		v.args = []*value{inv.args[0], v.args[1]}
		return v
	})
	return nil
}

// solveOperands returns the inverse that v multiplies from the left, when
// v is a product Inverse(A)·B (or Inverse(A)ᵀ·B) that a solve computes:
// B not transposed and of the solve's shape, A and B with the same batch
// axes (a product that broadcasts one matrix over a batch stays a
// product).
func solveOperands(v *value) (*value, bool) {
	if v.op == nil {
		return nil, false
	}
	mm, ok := ops.IsMatMul(v.op)
	if !ok || mm.TransB {
		return nil, false
	}
	inv, b := v.args[0], v.args[1]
	if inv.op == nil || !ops.IsInverse(inv.op) {
		return nil, false
	}
	t, err := ops.SolveOp(mm.TransA).Type([]graph.Type{inv.args[0].typ, b.typ})
	if err != nil || !t.Equal(v.typ) {
		return nil, false
	}
	return inv, true
}

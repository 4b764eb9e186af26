package compile

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// lushare factorises a matrix once for all its solves, inverses and
// determinants: where two or more of them read the same matrix A (a
// solve and the solve with Aᵀ of its gradient, a determinant and a
// solve), one LUFactors value computes A's LU factors, just before the
// first of them, and each becomes its factored variant reading it. The
// factored ops load the factors the plain ones would compute, so values
// keep their bits; a singular A fails each reader as before. (Cholesky
// factors are graph values already: CSE shares them.)
func lushare(f *function) error {
	readers := map[*value][]*value{} // a matrix: its LU readers, in order
	for _, v := range f.values {
		if v.op == nil || len(v.args) == 0 {
			continue
		}
		if _, ok := ops.FactoredLU(v.op); ok {
			readers[v.args[0]] = append(readers[v.args[0]], v)
		}
	}
	before := map[*value]*value{} // the first reader: the factors computed before it
	for a, rs := range readers {
		if len(rs) < 2 {
			continue
		}
		op := ops.LUFactorsOp()
		t, err := op.Type([]graph.Type{a.typ})
		if err != nil {
			continue
		}
		lu := &value{node: rs[0].node, kind: graph.KindOp, op: op, args: []*value{a}, typ: t, slot: -1}
		before[rs[0]] = lu
		for _, r := range rs {
			r.op, _ = ops.FactoredLU(r.op)
			r.args[0] = lu
		}
	}
	if len(before) == 0 {
		return nil
	}
	values := make([]*value, 0, len(f.values)+len(before))
	for _, v := range f.values {
		if lu, ok := before[v]; ok {
			values = append(values, lu)
		}
		values = append(values, v)
	}
	f.values = values
	return nil
}

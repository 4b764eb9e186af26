package optable

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// linalgRows are the rows of the linear-algebra ops (ops/linalg_*.go).
// Cholesky and the ops built on it take a symmetric positive-definite
// matrix, built inside the checked function from a free one as users
// build theirs (A = X·Xᵀ + n·I), and Eigh a symmetric one (X + Xᵀ), so
// that finite differences move A symmetrically; triangular solves take
// matrices whose diagonal is well away from 0, as do Solve, Inverse and
// Det. Builders returning several nodes (SlogDet, QR, Eigh, SVD) are
// checked as functions of one or more of them.
func linalgRows(v Values) []Case {
	one := func(f func(*graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return f(in[0]) }
	}
	tril := func(k int) func(*graph.Node) *graph.Node {
		return func(x *graph.Node) *graph.Node { return ops.Tril(x, k) }
	}
	triu := func(k int) func(*graph.Node) *graph.Node {
		return func(x *graph.Node) *graph.Node { return ops.Triu(x, k) }
	}
	solve := func(o ops.TriangularOptions) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return ops.TriangularSolve(in[0], in[1], o) }
	}
	solveGeneral := func(in []*graph.Node) *graph.Node { return ops.Solve(in[0], in[1]) }
	// A matrix whose factorisation swaps rows: each column's largest
	// element lies off the diagonal.
	pivoting := TensorOf([]int{3, 3}, 0.3, 2, -0.5, 1.8, -0.4, 0.6, 0.5, 0.7, -2.1)
	rows := []Case{
		row("Tril", "k 0", one(tril(0)), v.Signed(3, 3)),
		row("Tril", "k -1 batched wide", one(tril(-1)), v.Signed(2, 3, 4)),
		row("Triu", "k 1 batched tall", one(triu(1)), v.Signed(2, 4, 3)),
		row("Diagonal", "square", one(ops.Diagonal), v.Signed(3, 3)),
		row("Diagonal", "batched wide", one(ops.Diagonal), v.Signed(2, 2, 3)),
		row("Diagonal", "tall", one(ops.Diagonal), v.Signed(3, 2)),
		row("DiagEmbed", "vector", one(ops.DiagEmbed), v.Signed(3)),
		row("DiagEmbed", "batched", one(ops.DiagEmbed), v.Signed(2, 3)),
		row("TriangularSolve", "lower left", solve(ops.TriangularOptions{}), v.WellConditioned(3), v.Signed(3, 2)),
		row("TriangularSolve", "upper left transposed", solve(ops.TriangularOptions{Upper: true, Transpose: true}), v.WellConditioned(3), v.Signed(3, 2)),
		row("TriangularSolve", "lower right transposed batched", solve(ops.TriangularOptions{Right: true, Transpose: true}),
			v.WellConditioned(2, 3), v.Signed(2, 2, 3)),
		row("TriangularSolve", "upper right unit diagonal", solve(ops.TriangularOptions{Upper: true, Right: true, UnitDiagonal: true}),
			v.WellConditioned(3), v.Signed(2, 3)),
		row("TriangularSolve", "lower left unit diagonal rank 4", solve(ops.TriangularOptions{UnitDiagonal: true}),
			v.WellConditioned(2, 1, 2), v.Signed(2, 1, 2, 3)),
		row("Solve", "matrix", solveGeneral, v.WellConditioned(3), v.Signed(3, 2)),
		row("Solve", "batched", solveGeneral, v.WellConditioned(2, 3), v.Signed(2, 3, 1)),
		row("Solve", "rank 4", solveGeneral, v.WellConditioned(2, 1, 2), v.Signed(2, 1, 2, 3)),
		row("Solve", "pivoting", solveGeneral, pivoting, v.Signed(3, 2)),
		row("Inverse", "matrix", one(ops.Inverse), v.WellConditioned(3)),
		row("Inverse", "pivoting", one(ops.Inverse), pivoting),
		row("Inverse", "batched", one(ops.Inverse), v.WellConditioned(2, 2)),
		row("Det", "matrix", one(ops.Det), v.WellConditioned(3)),
		row("Det", "batched", one(ops.Det), v.WellConditioned(2, 2)),
		row("Det", "pivoting", one(ops.Det), pivoting),
		row("MatrixExp", "matrix", one(ops.MatrixExp), v.Signed(3, 3)),
		row("MatrixExp", "batched", one(ops.MatrixExp), v.Signed(2, 2, 2)),
		row("MatrixExp", "scaled and squared", one(ops.MatrixExp), TensorOf([]int{2, 2}, 3.1, -2.7, 2.9, 3.3)),
	}
	composite := []Case{
		row("Trace", "batched", one(ops.Trace), v.Signed(2, 3, 3)),
		row("Eye", "times a batch", one(func(x *graph.Node) *graph.Node { return ops.Mul(x, ops.Eye(x.Graph(), x.DType(), 3)) }), v.Signed(2, 3, 3)),
		row("Cholesky", "matrix", one(func(x *graph.Node) *graph.Node { return ops.Cholesky(positiveDefinite(x)) }), v.Signed(3, 3)),
		row("Cholesky", "batched", one(func(x *graph.Node) *graph.Node { return ops.Cholesky(positiveDefinite(x)) }), v.Signed(2, 2, 2)),
		row("CholeskySolve", "batched", func(in []*graph.Node) *graph.Node {
			return ops.CholeskySolve(ops.Cholesky(positiveDefinite(in[0])), in[1])
		}, v.Signed(2, 3, 3), v.Signed(2, 3, 2)),
		row("CholeskySolve", "triangular factor", func(in []*graph.Node) *graph.Node { return ops.CholeskySolve(in[0], in[1]) },
			v.WellConditioned(3), v.Signed(3, 1)),
		row("LogDet", "matrix", one(func(x *graph.Node) *graph.Node { return ops.LogDet(positiveDefinite(x)) }), v.Signed(3, 3)),
		row("LogDet", "batched", one(func(x *graph.Node) *graph.Node { return ops.LogDet(positiveDefinite(x)) }), v.Signed(2, 2, 2)),
		row("SVD", "values", one(func(x *graph.Node) *graph.Node { _, s, _ := ops.SVD(x); return s }), v.Signed(3, 2)),
		row("SVD", "U of a tall batch", one(func(x *graph.Node) *graph.Node { u, _, _ := ops.SVD(x); return u }), v.Signed(2, 4, 3)),
		row("SVD", "Vh of a wide matrix", one(func(x *graph.Node) *graph.Node { _, _, vh := ops.SVD(x); return vh }), v.Signed(2, 4)),
		row("SVD", "all three of a square matrix", one(func(x *graph.Node) *graph.Node {
			u, s, vh := ops.SVD(x)
			return ops.Concat(-2, u, vh, ops.Reshape(s, 1, 3))
		}), v.Signed(3, 3)),
		row("SVD", "U and Vh of a wide matrix", one(func(x *graph.Node) *graph.Node { u, _, vh := ops.SVD(x); return ops.Concat(-1, u, vh) }), v.Signed(2, 3)),
		row("SlogDet", "log |det| batched", one(func(x *graph.Node) *graph.Node { _, l := ops.SlogDet(x); return l }), v.WellConditioned(2, 3)),
		row("SlogDet", "sign times log |det|, pivoting", one(func(x *graph.Node) *graph.Node { s, l := ops.SlogDet(x); return ops.Mul(s, l) }), pivoting),
		row("QR", "Q of a tall batch", one(func(x *graph.Node) *graph.Node { q, _ := ops.QR(x); return q }), v.Signed(2, 4, 3)),
		row("QR", "R", one(func(x *graph.Node) *graph.Node { _, r := ops.QR(x); return r }), v.Signed(3, 3)),
		row("QR", "Q and R together", one(func(x *graph.Node) *graph.Node { q, r := ops.QR(x); return ops.Concat(-2, q, r) }), v.Signed(3, 2)),
		row("Eigh", "values", one(func(x *graph.Node) *graph.Node { w, _ := ops.Eigh(symmetric(x)); return w }), v.Signed(3, 3)),
		row("Eigh", "vectors batched", one(func(x *graph.Node) *graph.Node { _, u := ops.Eigh(symmetric(x)); return u }), v.Signed(2, 3, 3)),
		row("Eigh", "vectors scaled by values", one(func(x *graph.Node) *graph.Node {
			w, u := ops.Eigh(symmetric(x))
			return ops.Mul(u, ops.Reshape(w, 1, 2))
		}), v.Signed(2, 2)),
	}
	for i := range composite {
		composite[i].Composite = true
	}
	return append(rows, composite...)
}

// symmetric returns X + Xᵀ for a batch of square matrices X (rank 2 or 3).
func symmetric(x *graph.Node) *graph.Node {
	perm := []int{1, 0}
	if x.Type().Rank() == 3 {
		perm = []int{0, 2, 1}
	}
	return ops.Add(x, ops.Transpose(x, perm...))
}

// positiveDefinite returns X·Xᵀ + n·I for a batch of n×n matrices X (rank 2
// or 3): symmetric positive-definite, as users build covariances.
func positiveDefinite(x *graph.Node) *graph.Node {
	n := x.Shape()[x.Type().Rank()-1]
	return ops.Add(ops.MatMulT(x, x, false, true), ops.Scale(ops.Eye(x.Graph(), x.DType(), n), float64(n)))
}

package ops

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// General square systems through LU factorisation with partial pivoting
// (LAPACK's getrf): Solve and Inverse here, Det and SlogDet in
// linalg_det.go. Their gradients are Giles's (2008), built from the same
// ops; a matrix that is exactly singular (a zero pivot) is a run-time
// error for Solve and Inverse, and a zero determinant for Det.

// lapackLUOrder is the order from which float64 matrices are factorised
// by the recursive blocked LU (levelThree.getrf) and solved by LAPACK's
// dgetrs (gonum's), their products nabla's; smaller ones, and float32
// ones, by a direct loop with no per-matrix overhead.
const lapackLUOrder = 64

// luScratch is a kernel's working memory: one matrix's factors and pivots,
// kept by the machine across runs (graph.Exec.State), so that a run
// allocates nothing once warm.
type luScratch[T float] struct {
	lu  []T
	piv []int
	t   []T // a right-hand side transposed, for solves from the right
}

type luKey[T float] struct{}

// luScratchFor returns scratch for matrices of order n.
func luScratchFor[T float](e *graph.Exec, n int) *luScratch[T] {
	s := e.State(luKey[T]{}, func() any { return new(luScratch[T]) }).(*luScratch[T])
	if cap(s.lu) < n*n {
		s.lu, s.piv = make([]T, n*n), make([]int, n)
	}
	s.lu, s.piv = s.lu[:n*n], s.piv[:n]
	return s
}

// factor copies the n×n matrix a into the scratch and factorises it in
// place, P·A = L·U: L unit lower triangular below the diagonal, U on and
// above it, row i swapped with row piv[i] at step i. It returns the order
// (1-based) of the first zero pivot, 0 when A is nonsingular.
func (s *luScratch[T]) factor(a []T, n int) int {
	lu, piv := s.lu, s.piv
	copy(lu, a)
	if lu64, ok := any(lu).([]float64); ok && n >= lapackLUOrder {
		levelThree{}.getrf(n, n, lu64, n, piv)
		return s.firstZeroPivot(n)
	}
	for j := range n {
		p := j
		for i := j + 1; i < n; i++ {
			if abs(lu[i*n+j]) > abs(lu[p*n+j]) {
				p = i
			}
		}
		piv[j] = p
		if p != j {
			for c := range n {
				lu[j*n+c], lu[p*n+c] = lu[p*n+c], lu[j*n+c]
			}
		}
		d := lu[j*n+j]
		if d == 0 {
			continue // the column below is zero already: nothing to eliminate
		}
		for i := j + 1; i < n; i++ {
			f := lu[i*n+j] / d
			lu[i*n+j] = f
			if f != 0 {
				axpyRow(lu[i*n+j+1:(i+1)*n], -f, lu[j*n+j+1:(j+1)*n])
			}
		}
	}
	return s.firstZeroPivot(n)
}

// prepare fills the scratch with the factors of matrix m of a batch and
// returns the order of its first zero pivot (0 when there is none):
// factorising it, or, when packed, loading them from a batch of
// LUFactors' outputs, n×(n+1) each.
func (s *luScratch[T]) prepare(a []T, m, n int, packed bool) int {
	if !packed {
		return s.factor(a[m*n*n:(m+1)*n*n], n)
	}
	f := a[m*n*(n+1) : (m+1)*n*(n+1)]
	for i := range n {
		copy(s.lu[i*n:(i+1)*n], f[i*(n+1):i*(n+1)+n])
		s.piv[i] = int(f[i*(n+1)+n])
	}
	return s.firstZeroPivot(n)
}

func (s *luScratch[T]) firstZeroPivot(n int) int {
	for i := range n {
		if s.lu[i*n+i] == 0 {
			return i + 1
		}
	}
	return 0
}

func abs[T float](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

// axpyRow is y += f·x.
func axpyRow[T float](y []T, f T, x []T) {
	for i := range y {
		y[i] += f * x[i]
	}
}

// solve overwrites the n×k matrix b with A⁻¹·b (Aᵀ⁻¹·b when trans) from
// the factors, row operations throughout: P·A = L·U gives L·U·X = P·B,
// and Aᵀ = Uᵀ·Lᵀ·P gives Uᵀ·Lᵀ·(P·X) = B.
func (s *luScratch[T]) solve(b []T, n, k int, trans bool) {
	lu, piv := s.lu, s.piv
	if lu64, ok := any(lu).([]float64); ok && n >= lapackLUOrder {
		t := blas.NoTrans
		if trans {
			t = blas.Trans
		}
		lapackImpl.Dgetrs(t, n, k, lu64, n, piv, any(b).([]float64), k)
		return
	}
	row := func(i int) []T { return b[i*k : (i+1)*k] }
	if !trans {
		for i := range n {
			if p := piv[i]; p != i {
				swapRows(row(i), row(p))
			}
		}
		for i := range n { // L·Y = P·B, L unit lower
			for j := range i {
				axpyRow(row(i), -lu[i*n+j], row(j))
			}
		}
		for i := n - 1; i >= 0; i-- { // U·X = Y
			for j := i + 1; j < n; j++ {
				axpyRow(row(i), -lu[i*n+j], row(j))
			}
			scaleRow(row(i), 1/lu[i*n+i])
		}
		return
	}
	for i := range n { // Uᵀ·W = B, Uᵀ lower
		for j := range i {
			axpyRow(row(i), -lu[j*n+i], row(j))
		}
		scaleRow(row(i), 1/lu[i*n+i])
	}
	for i := n - 1; i >= 0; i-- { // Lᵀ·Z = W, Lᵀ unit upper
		for j := i + 1; j < n; j++ {
			axpyRow(row(i), -lu[j*n+i], row(j))
		}
	}
	for i := n - 1; i >= 0; i-- { // X = Pᵀ·Z
		if p := piv[i]; p != i {
			swapRows(row(i), row(p))
		}
	}
}

func swapRows[T float](x, y []T) {
	for i := range x {
		x[i], y[i] = y[i], x[i]
	}
}

func scaleRow[T float](x []T, f T) {
	for i := range x {
		x[i] *= f
	}
}

// singularError is the error for a batch element whose pivot of the
// given order is zero, worded as torch.linalg words it; doing is what
// could not be completed ("the solve", "the inversion").
func singularError(batched bool, m, order int, doing string) error {
	return batchError(batched, m, fmt.Errorf("the diagonal element %d is zero, %s could not be completed because "+
		"the input matrix is singular", order, doing))
}

// solveOp solves op(A)·X = B, or X·op(A) = B when right, op(A) being Aᵀ
// when transpose. When factored its first input is A's LUFactors.
type solveOp struct{ transpose, right, factored bool }

// Solve returns the solution X of A·X = B for each square matrix of a, by
// LU factorisation with partial pivoting: torch.linalg.solve(A, B) for a
// matrix B. A is (…, n, n) and B (…, n, k) with the same leading axes. A
// matrix that is singular (a zero pivot) is a run-time error naming the
// batch element and the pivot.
func Solve(a, b *graph.Node) *graph.Node { return graph.Apply(solveOp{}, a, b) }

// Name is "Solve" (with A or Aᵀ).
func (solveOp) Name() string { return "Solve" }

// Type checks the system's shapes (solveType).
func (op solveOp) Type(in []graph.Type) (graph.Type, error) {
	if _, err := graph.CheckInputs(in, 2); err != nil {
		return graph.Type{}, err
	}
	a, err := factoredInput(in[0], op.factored)
	if err != nil {
		return graph.Type{}, err
	}
	return solveType(a, in[1], op.right)
}

// Cost is 2n³/3 flops per factorisation (none when factored) and 2n² per
// right-hand side.
func (op solveOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	batch, n, _ := matrices(in[0].Shape)
	c.Flops = 2 * int64(out.Size()) * int64(n)
	if !op.factored {
		c.Flops += int64(batch) * int64(n) * int64(n) * int64(n) * 2 / 3
	}
	return c
}

// Forward solves on the calling goroutine; see ForwardExec.
func (op solveOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec factorises each matrix into the machine's scratch and
// solves in the output, which starts as a copy of B.
func (op solveOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	s := solveShape{batched: len(in[0].Shape()) > 2}
	s.batch, s.n, _ = matrices(in[0].Shape())
	_, s.rows, s.cols = matrices(in[1].Shape())
	return forFloat(out.Dtype(),
		func() error {
			return solveKernel(e, op, s, floats[float32](out), floats[float32](in[0]), floats[float32](in[1]))
		},
		func() error {
			return solveKernel(e, op, s, floats[float64](out), floats[float64](in[0]), floats[float64](in[1]))
		})
}

// solveKernel solves each system in x, a copy of b. From the right,
// X·op(A) = B is op(A)ᵀ·Xᵀ = Bᵀ: each right-hand side is transposed into
// the scratch, solved with the other transpose, and transposed back.
func solveKernel[T float](e *graph.Exec, op solveOp, s solveShape, x, a, b []T) error {
	n, size := s.n, s.rows*s.cols
	lu := luScratchFor[T](e, n)
	copy(x, b)
	if op.right && cap(lu.t) < size {
		lu.t = make([]T, size)
	}
	for m := range s.batch {
		if zero := lu.prepare(a, m, n, op.factored); zero > 0 {
			return singularError(s.batched, m, zero, "the solve")
		}
		xm := x[m*size : (m+1)*size]
		if !op.right {
			lu.solve(xm, n, s.cols, op.transpose)
			continue
		}
		t := lu.t[:size]
		transposeInto(t, xm, s.rows, s.cols)
		lu.solve(t, n, s.rows, !op.transpose)
		transposeInto(xm, t, s.cols, s.rows)
	}
	return nil
}

// transposeInto writes the transpose of the rows×cols matrix x into y.
func transposeInto[T float](y, x []T, rows, cols int) {
	for i := range rows {
		for j, v := range x[i*cols : (i+1)*cols] {
			y[j*rows+i] = v
		}
	}
}

// Backward: B's gradient is op(A)⁻ᵀ·G (G·op(A)⁻ᵀ from the right), a
// solve with the other transpose, and A's is −B̄·Xᵀ (−X·B̄ᵀ when the op
// solves with Aᵀ), or from the right −Xᵀ·B̄ (−B̄ᵀ·X).
func (op solveOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	if op.factored {
		return []*graph.Node{nil, nil} // compiled programs only: never differentiated
	}
	a, x := ctx.Input(0), ctx.Output()
	gb := graph.Apply(solveOp{transpose: !op.transpose, right: op.right}, a, g)
	grads := []*graph.Node{nil, nil}
	if ctx.NeedsGrad(0) {
		switch {
		case !op.right && !op.transpose:
			grads[0] = Neg(batchMatMul(gb, x, false, true))
		case !op.right:
			grads[0] = Neg(batchMatMul(x, gb, false, true))
		case !op.transpose:
			grads[0] = Neg(batchMatMul(x, gb, true, false))
		default:
			grads[0] = Neg(batchMatMul(gb, x, true, false))
		}
	}
	if ctx.NeedsGrad(1) {
		grads[1] = gb
	}
	return grads
}

// JVP is op(A)⁻¹·(dB − op(dA)·X), or (dB − X·op(dA))·op(A)⁻¹ from the
// right.
func (op solveOp) JVP(c *graph.JVPContext) *graph.Node {
	if op.factored {
		return nil // compiled programs only: never differentiated
	}
	a, x := batchedPrimal(c, c.Input(0)), batchedPrimal(c, c.Output())
	rhs := c.Tangent(1)
	if t := c.Tangent(0); t != nil {
		var dax *graph.Node
		if op.right {
			dax = batchMatMul(x, t, false, op.transpose)
		} else {
			dax = batchMatMul(t, x, op.transpose, false)
		}
		if rhs == nil {
			rhs = Neg(dax)
		} else {
			rhs = Sub(rhs, dax)
		}
	}
	if rhs == nil {
		return nil
	}
	return graph.Apply(op, a, rhs)
}

// Batch solves each example's system: the batch is one more leading axis.
func (op solveOp) Batch(c *graph.BatchContext) *graph.Node { return leadingBatch(c, op) }

// inverseOp inverts each matrix of its input, or, when factored, each
// matrix whose LUFactors its input is.
type inverseOp struct{ factored bool }

// Inverse returns the inverse of each square matrix of a (its last two
// axes), by LU factorisation with partial pivoting: torch.linalg.inv. A
// matrix that is singular (a zero pivot) is a run-time error naming the
// batch element and the pivot.
func Inverse(a *graph.Node) *graph.Node { return graph.Apply(inverseOp{}, a) }

// Name is "Inverse".
func (inverseOp) Name() string { return "Inverse" }

// Type checks that a is a batch of square matrices and returns its type.
func (op inverseOp) Type(in []graph.Type) (graph.Type, error) {
	if _, err := graph.CheckInputs(in, 1); err != nil {
		return graph.Type{}, err
	}
	a, err := factoredInput(in[0], op.factored)
	if err != nil {
		return graph.Type{}, err
	}
	return squareMatrices([]graph.Type{a})
}

// Cost is 2n³ flops per matrix (factorisation and n solves), 4n³/3 when
// factored.
func (op inverseOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	batch, n, _ := matrices(in[0].Shape)
	c.Flops = 2 * int64(batch) * int64(n) * int64(n) * int64(n)
	if op.factored {
		c.Flops -= int64(batch) * int64(n) * int64(n) * int64(n) * 2 / 3
	}
	return c
}

// Forward inverts on the calling goroutine; see ForwardExec.
func (op inverseOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec factorises each matrix into the machine's scratch and
// solves for the identity in the output.
func (op inverseOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	batched := len(in[0].Shape()) > 2
	batch, n, _ := matrices(in[0].Shape())
	return forFloat(out.Dtype(),
		func() error {
			return inverseKernel(e, op, batched, batch, n, floats[float32](out), floats[float32](in[0]))
		},
		func() error {
			return inverseKernel(e, op, batched, batch, n, floats[float64](out), floats[float64](in[0]))
		})
}

func inverseKernel[T float](e *graph.Exec, op inverseOp, batched bool, batch, n int, y, a []T) error {
	lu := luScratchFor[T](e, n)
	for m := range batch {
		if zero := lu.prepare(a, m, n, op.factored); zero > 0 {
			return singularError(batched, m, zero, "the inversion")
		}
		ym := y[m*n*n : (m+1)*n*n]
		clear(ym)
		for i := range n {
			ym[i*n+i] = 1
		}
		lu.solve(ym, n, n, false)
	}
	return nil
}

// Backward is Ā = −Yᵀ·Ȳ·Yᵀ for Y = A⁻¹.
func (op inverseOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	if op.factored {
		return []*graph.Node{nil} // compiled programs only: never differentiated
	}
	y := ctx.Output()
	return []*graph.Node{Neg(batchMatMul(batchMatMul(y, g, true, false), y, false, true))}
}

// JVP is dY = −Y·dA·Y.
func (op inverseOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil || op.factored {
		return nil
	}
	y := batchedPrimal(c, c.Output())
	return Neg(batchMatMul(batchMatMul(y, t, false, false), y, false, false))
}

// Batch inverts each example: the batch is one more leading axis.
func (op inverseOp) Batch(c *graph.BatchContext) *graph.Node { return leadingBatch(c, op) }

// IsInverse reports whether op is Inverse's.
func IsInverse(op graph.Op) bool {
	_, ok := op.(inverseOp)
	return ok
}

// SolveOp returns the op of Solve(a, b), a⁻¹·b, for compiler passes that
// turn products with an inverse into solves: with transposed a⁻ᵀ·b, and
// with right b·a⁻¹ (b·a⁻ᵀ), b then (…, k, n).
func SolveOp(transposed, right bool) graph.Op { return solveOp{transpose: transposed, right: right} }

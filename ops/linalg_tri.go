package ops

import (
	"fmt"
	"slices"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// TriangularOptions says which triangular system TriangularSolve solves,
// as the keywords of torch.linalg.solve_triangular do. The zero value
// solves A·X = B with A lower triangular.
type TriangularOptions struct {
	// Upper reads A's upper triangle; otherwise its lower one. The other
	// triangle is never read.
	Upper bool
	// Right solves X·op(A) = B; otherwise op(A)·X = B (torch's left=False).
	Right bool
	// Transpose solves with op(A) = Aᵀ; otherwise op(A) = A.
	Transpose bool
	// UnitDiagonal takes A's diagonal to be ones and does not read it
	// (torch's unitriangular).
	UnitDiagonal bool
}

// triangle masks a matrix to the triangle the options read: the diagonal
// and one side of it, or that side alone with a unit diagonal.
func (o TriangularOptions) triangle(x *graph.Node) *graph.Node {
	k := 0
	if o.UnitDiagonal {
		k = 1
	}
	if o.Upper {
		return Triu(x, k)
	}
	return Tril(x, -k)
}

type triangularSolveOp struct{ opts TriangularOptions }

// TriangularSolve returns the solution X of op(A)·X = B, or of X·op(A) = B
// with opts.Right, for a triangular A: torch.linalg.solve_triangular(A, B,
// upper, left, unitriangular), with a transposed A as a flag rather than a
// transpose. A is a batch of n×n matrices (…, n, n), of which only the
// triangle opts names is read; B has the same leading axes and is (…, n, k)
// (or (…, k, n) with opts.Right). A zero on A's diagonal is a run-time
// error, not a result of infinities.
func TriangularSolve(a, b *graph.Node, opts TriangularOptions) *graph.Node {
	return graph.Apply(triangularSolveOp{opts}, a, b)
}

// Name is "TriangularSolve".
func (triangularSolveOp) Name() string { return "TriangularSolve" }

// Type checks that A is a batch of square matrices and that B is a batch
// of as many matrices, of rows (columns with Right) A's order.
func (op triangularSolveOp) Type(in []graph.Type) (graph.Type, error) {
	if _, err := graph.CheckInputs(in, 2); err != nil {
		return graph.Type{}, err
	}
	return solveType(in[0], in[1], op.opts.Right)
}

// solveType is the type of the solution X of A·X = B (X·A = B when right):
// A is (…, n, n), B (…, n, k) ((…, k, n) when right) with the same leading
// axes, and X is B's type.
func solveType(a, b graph.Type, right bool) (graph.Type, error) {
	if _, err := squareMatrices([]graph.Type{a}); err != nil {
		return graph.Type{}, err
	}
	r := a.Rank()
	n := a.Shape[r-1]
	side, axis := "rows", r-2
	if right {
		side, axis = "columns", r-1
	}
	if b.Rank() != r || !slices.Equal(a.Shape[:r-2], b.Shape[:r-2]) || b.Shape[axis] != n {
		return graph.Type{}, fmt.Errorf("shapes %s and %s: the right-hand side must have A's leading axes and %d %s",
			graph.ShapeString(a.Shape), graph.ShapeString(b.Shape), n, side)
	}
	return b, nil
}

// Cost is n² flops per column (row with Right) of each right-hand side.
func (op triangularSolveOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	if n := in[0].Shape[in[0].Rank()-1]; n > 0 {
		c.Flops = int64(out.Size()) * int64(n)
	}
	return c
}

// Forward copies B into the output and solves in place with BLAS's trsm,
// one matrix at a time, after checking A's diagonal for zeros.
func (op triangularSolveOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	s := solveShape{batched: len(in[0].Shape()) > 2}
	s.batch, s.n, _ = matrices(in[0].Shape())
	_, s.rows, s.cols = matrices(in[1].Shape())
	return forFloat(out.Dtype(),
		func() error {
			return triangularSolveKernel(op.opts, s, floats[float32](out), floats[float32](in[0]), floats[float32](in[1]))
		},
		func() error {
			return triangularSolveKernel(op.opts, s, floats[float64](out), floats[float64](in[0]), floats[float64](in[1]))
		})
}

// solveShape is the geometry of a batch of solves A·X = B: batch
// matrices A of order n and as many right-hand sides B of rows×cols;
// batched says whether the inputs have leading axes.
type solveShape struct {
	batched              bool
	batch, n, rows, cols int
}

func triangularSolveKernel[T float](o TriangularOptions, s solveShape, x, a, b []T) error {
	n, rows, cols := s.n, s.rows, s.cols
	side, uplo, trans, diag := blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit
	if o.Right {
		side = blas.Right
	}
	if o.Upper {
		uplo = blas.Upper
	}
	if o.Transpose {
		trans = blas.Trans
	}
	if o.UnitDiagonal {
		diag = blas.Unit
	}
	copy(x, b)
	for m := range s.batch {
		am, xm := a[m*n*n:(m+1)*n*n], x[m*rows*cols:(m+1)*rows*cols]
		if !o.UnitDiagonal {
			for i := range n {
				if am[i*n+i] == 0 {
					return batchError(s.batched, m,
						fmt.Errorf("the triangular matrix is singular: its diagonal element (%d,%d) is zero", i+1, i+1))
				}
			}
		}
		switch {
		case n < blasTriangularOrder:
			triangularSolveDirect(o, am, xm, n, rows, cols)
		case unsafe.Sizeof(am[0]) == 4:
			blasImpl.Strsm(side, uplo, trans, diag, rows, cols, 1, asFloat32s(am), n, asFloat32s(xm), cols)
		default:
			levelThree{}.Dtrsm(side, uplo, trans, diag, rows, cols, 1, asFloat64s(am), n, asFloat64s(xm), cols)
		}
	}
	return nil
}

// blasTriangularOrder is the order from which triangular systems are
// solved by BLAS's trsm (float64: levelThree's, blocked on nabla's matrix
// product where the right-hand sides are many enough; float32: gonum's);
// below it, the typical batch of small matrices (up to 32×32), by
// triangularSolveDirect, which spares trsm's per-call checks and dispatch
// and its calls per row (about twice as fast on a batch of 4×4 systems,
// and a quarter faster on 32×32 ones with four right-hand sides).
const blasTriangularOrder = 33

// triangularSolveDirect solves one system in place, x holding B (rows ×
// cols), by substitution: with M = op(A), M·X = B row by row of X, each
// from those already solved (before it for a lower M, after it for an
// upper one); X·M = B one row x of X at a time, element j of x·M = b from
// the elements of x already solved.
func triangularSolveDirect[T float](o TriangularOptions, a, x []T, n, rows, cols int) {
	lower := o.Upper == o.Transpose // M = op(A) is lower triangular
	ri, ci := n, 1                  // M[i][j] = a[i·ri + j·ci]
	if o.Transpose {
		ri, ci = 1, n
	}
	if !o.Right {
		for s := range n {
			i, from, to := s, 0, s // solved rows: [from, to)
			if !lower {
				i, from, to = n-1-s, n-s, n
			}
			xi := x[i*cols : (i+1)*cols]
			for j := from; j < to; j++ {
				axpyRow(xi, -a[i*ri+j*ci], x[j*cols:(j+1)*cols])
			}
			if !o.UnitDiagonal {
				scaleRow(xi, 1/a[i*n+i])
			}
		}
		return
	}
	for r := range rows {
		xr := x[r*cols : (r+1)*cols]
		for s := range n {
			j, from, to := s, 0, s // solved elements: [from, to)
			if lower {
				j, from, to = n-1-s, n-s, n
			}
			v := xr[j]
			for i := from; i < to; i++ {
				v -= xr[i] * a[i*ri+j*ci]
			}
			if !o.UnitDiagonal {
				v /= a[j*n+j]
			}
			xr[j] = v
		}
	}
}

// batchError prefixes a kernel's error about one matrix of a batch with
// its index, as torch.linalg does ("(Batch element 0): …"); batched says
// whether the input has leading axes at all.
func batchError(batched bool, m int, err error) error {
	if !batched {
		return err
	}
	return fmt.Errorf("batch element %d: %w", m, err)
}

// Backward differentiates X = op(A)⁻¹·B (Giles 2008): B's gradient is
// op(A)⁻ᵀ·G, another triangular solve, and op(A)'s is −B̄·Xᵀ (−Xᵀ·B̄
// for X = B·op(A)⁻¹), transposed back when op transposes and masked to
// the triangle the kernel reads.
func (op triangularSolveOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	a, x := ctx.Input(0), ctx.Output()
	adjoint := op.opts
	adjoint.Transpose = !adjoint.Transpose
	gb := TriangularSolve(a, g, adjoint)
	grads := []*graph.Node{nil, nil}
	if ctx.NeedsGrad(0) {
		// op(A)'s gradient is −gb·Xᵀ (left) or −Xᵀ·gb (right); A's is
		// that or its transpose.
		var ga *graph.Node
		switch {
		case !op.opts.Right && !op.opts.Transpose:
			ga = batchMatMul(gb, x, false, true)
		case !op.opts.Right:
			ga = batchMatMul(x, gb, false, true)
		case !op.opts.Transpose:
			ga = batchMatMul(x, gb, true, false)
		default:
			ga = batchMatMul(gb, x, true, false)
		}
		grads[0] = Neg(op.opts.triangle(ga))
	}
	if ctx.NeedsGrad(1) {
		grads[1] = gb
	}
	return grads
}

// JVP is op(A)⁻¹·(dB − op(dA)·X), or (dB − X·op(dA))·op(A)⁻¹ with Right,
// dA masked to the triangle the kernel reads.
func (op triangularSolveOp) JVP(c *graph.JVPContext) *graph.Node {
	a, x := batchedPrimal(c, c.Input(0)), batchedPrimal(c, c.Output())
	rhs := c.Tangent(1)
	if t := c.Tangent(0); t != nil {
		da := op.opts.triangle(t)
		var dax *graph.Node
		if op.opts.Right {
			dax = batchMatMul(x, da, false, op.opts.Transpose)
		} else {
			dax = batchMatMul(da, x, op.opts.Transpose, false)
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
	return TriangularSolve(a, rhs, op.opts)
}

// Batch solves each example's system: the batch is one more leading axis.
func (op triangularSolveOp) Batch(c *graph.BatchContext) *graph.Node { return leadingBatch(c, op) }

// batchedPrimal is a primal value as the forward rule's tangents are
// shaped: itself, or broadcast along their leading batch axis.
func batchedPrimal(c *graph.JVPContext, x *graph.Node) *graph.Node {
	if c.Batch() == 0 {
		return x
	}
	return BroadcastTo(x, c.Shape(x.Shape())...)
}

// batchMatMul is op(a)·op(b) for batches of matrices with the same leading
// axes, of any rank MatMulT takes after folding them into one.
func batchMatMul(a, b *graph.Node, transA, transB bool) *graph.Node {
	if p := graph.Poisoned(a, b); p != nil {
		return p
	}
	sa, sb := a.Shape(), b.Shape()
	r := len(sa)
	if r <= 3 || len(sb) != r {
		return MatMulT(a, b, transA, transB)
	}
	batch := graph.ShapeSize(sa[:r-2])
	y := MatMulT(Reshape(a, batch, sa[r-2], sa[r-1]), Reshape(b, batch, sb[r-2], sb[r-1]), transA, transB)
	if graph.Poisoned(y) != nil {
		return y
	}
	return Reshape(y, append(slices.Clone(sa[:r-2]), y.Shape()[1:]...)...)
}

// transposeMatrices swaps the last two axes of x.
func transposeMatrices(x *graph.Node) *graph.Node {
	if p := graph.Poisoned(x); p != nil {
		return p
	}
	r := x.Type().Rank()
	perm := make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	if r >= 2 {
		perm[r-2], perm[r-1] = r-1, r-2
	}
	return Transpose(x, perm...)
}

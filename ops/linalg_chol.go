package ops

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

type choleskyOp struct{}

// Cholesky returns the lower-triangular factor L of A = L·Lᵀ for each
// symmetric positive-definite matrix of a (its last two axes), as
// torch.linalg.cholesky(A): (…, n, n) → (…, n, n), L with a positive
// diagonal and zeros above it. Only A's lower triangle is read. A matrix
// that is not positive-definite is a run-time error naming the batch
// element and the order of the leading minor that is not.
//
// Its gradient is symmetric, as torch.linalg.cholesky's: that of
// Cholesky(½(A + Aᵀ)), and its forward rule is the same function's. Where
// A varies as a symmetric matrix (A = X·Xᵀ + c·I, a covariance), that is
// A's derivative; finite differences that move one off-diagonal element
// alone see only the lower triangle the kernel reads, and differ.
func Cholesky(a *graph.Node) *graph.Node { return graph.Apply(choleskyOp{}, a) }

// Name is "Cholesky".
func (choleskyOp) Name() string { return "Cholesky" }

// Type checks that a is a batch of square matrices and returns its type.
func (choleskyOp) Type(in []graph.Type) (graph.Type, error) { return squareMatrices(in) }

// Cost is n³/3 flops per matrix.
func (choleskyOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	batch, n, _ := matrices(in[0].Shape)
	c.Flops = int64(batch) * int64(n) * int64(n) * int64(n) / 3
	return c
}

// lapackCholeskyOrder is the order from which float64 matrices are
// factorised by LAPACK's blocked dpotrf (gonum's); smaller ones, the
// typical batch of small matrices, by a direct loop with no per-matrix
// overhead, as are float32 ones (gonum has no spotrf).
const lapackCholeskyOrder = 64

// Forward factorises each matrix, failing on the first that is not
// positive-definite.
func (choleskyOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	batched := len(in[0].Shape()) > 2
	batch, n, _ := matrices(in[0].Shape())
	return forFloat(out.Dtype(),
		func() error { return choleskyKernel(floats[float32](out), floats[float32](in[0]), batched, batch, n) },
		func() error { return choleskyKernel(floats[float64](out), floats[float64](in[0]), batched, batch, n) })
}

func choleskyKernel[T float](out, a []T, batched bool, batch, n int) error {
	for m := range batch {
		l, am := out[m*n*n:(m+1)*n*n], a[m*n*n:(m+1)*n*n]
		if k := choleskyMatrix(l, am, n); k > 0 {
			return batchError(batched, m, fmt.Errorf("the factorization could not be completed because the input is not "+
				"positive-definite (the leading minor of order %d is not positive-definite)", k))
		}
	}
	return nil
}

// choleskyMatrix writes the Cholesky factor of the n×n matrix a (its lower
// triangle) into l, or returns the order of the first leading minor that
// is not positive-definite (0 on success).
func choleskyMatrix[T float](l, a []T, n int) int {
	if l64, ok := any(l).([]float64); ok && n >= lapackCholeskyOrder {
		copy(l64, any(a).([]float64))
		if lapackImpl.Dpotrf(blas.Lower, n, l64, n) {
			for i := range n {
				clear(l64[i*n+i+1 : (i+1)*n])
			}
			return 0
		}
		// dpotrf says only that it failed: the direct loop finds where.
	}
	return choleskyDirect(l, a, n)
}

var lapackImpl gonum.Implementation

// choleskyDirect is the Cholesky–Banachiewicz loop, row by row: each
// element is a dot product of two rows of l, summed in float64. A pivot
// that is not positive (or is NaN) stops it.
func choleskyDirect[T float](l, a []T, n int) int {
	for i := range n {
		li := l[i*n : (i+1)*n]
		for j := 0; j <= i; j++ {
			lj := l[j*n : (j+1)*n]
			s := float64(a[i*n+j])
			for k := range j {
				s -= float64(li[k]) * float64(lj[k])
			}
			if i == j {
				if !(s > 0) {
					return i + 1
				}
				li[i] = T(math.Sqrt(s))
			} else {
				li[j] = T(s / float64(lj[j]))
			}
		}
		clear(li[i+1:])
	}
	return 0
}

// Backward is Murray's (20.5) rule, symmetrised as torch.linalg.cholesky's:
// with P = tril(Lᵀ·L̄) and Φ = ½(P + tril(P, −1)ᵀ) (P's lower triangle
// mirrored, its diagonal halved), Ā = L⁻ᵀ·Φ·L⁻¹, by two triangular solves.
func (choleskyOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	l := ctx.Output()
	p := Tril(batchMatMul(l, g, true, false), 0)
	phi := Scale(Add(p, transposeMatrices(Tril(p, -1))), 0.5)
	ga := TriangularSolve(l, phi, TriangularOptions{Transpose: true})
	return []*graph.Node{TriangularSolve(l, ga, TriangularOptions{Right: true})}
}

// JVP is dL = L·Φ(L⁻¹·dS·L⁻ᵀ), with dS = ½(dA + dAᵀ), the tangent of
// the symmetric part the gradient is that of, and Φ taking the lower
// triangle with its diagonal halved.
func (choleskyOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil {
		return nil
	}
	l := batchedPrimal(c, c.Output())
	ds := Scale(Add(t, transposeMatrices(t)), 0.5)
	z := TriangularSolve(l, TriangularSolve(l, ds, TriangularOptions{}), TriangularOptions{Right: true, Transpose: true})
	phi := Scale(Add(Tril(z, 0), Tril(z, -1)), 0.5)
	return batchMatMul(l, phi, false, false)
}

// Batch factorises each example: the batch is one more leading axis.
func (op choleskyOp) Batch(c *graph.BatchContext) *graph.Node { return leadingBatch(c, op) }

// CholeskySolve returns the solution X of A·X = B given A's Cholesky factor
// L (A = L·Lᵀ, L lower triangular as Cholesky returns it): two triangular
// solves, L·Y = B and Lᵀ·X = Y. L is (…, n, n) and B (…, n, k) with the
// same leading axes; torch.cholesky_solve(B, L) takes them in the other
// order.
func CholeskySolve(l, b *graph.Node) *graph.Node {
	if p := checkAs("CholeskySolve", triangularSolveOp{}, l, b); p != nil {
		return p
	}
	return TriangularSolve(l, TriangularSolve(l, b, TriangularOptions{}), TriangularOptions{Transpose: true})
}

// LogDet returns log det A for each symmetric positive-definite matrix of
// a (its last two axes), (…, n, n) → (…), from its Cholesky factor:
// 2·Σ log Lᵢᵢ, stable where the determinant itself would overflow or
// underflow. A matrix that is not positive-definite is Cholesky's run-time
// error; the gradient is A⁻¹, symmetric as Cholesky's.
func LogDet(a *graph.Node) *graph.Node {
	if p := checkAs("LogDet", choleskyOp{}, a); p != nil {
		return p
	}
	d := Diagonal(Cholesky(a))
	if graph.Poisoned(d) != nil {
		return d
	}
	return Scale(Sum(Log(d), -1), 2)
}

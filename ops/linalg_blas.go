package ops

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	native "gonum.org/v1/gonum/blas/gonum"

	"github.com/nabla-go/nabla/internal/kernel/gemm"
)

// gonum's LAPACK (lapackImpl: dpotrf, dgetrf, dgeqrf, dsyev, dgesvd…)
// spends its time in level-3 BLAS: the trailing updates of its blocked
// factorisations. It takes that BLAS from blas64.Implementation(), a
// process-wide setting with no per-call alternative, so at start-up ops
// installs levelThree (when nothing but gonum's own is installed): gonum's
// native BLAS with Dgemm, Dsyrk and Dtrsm computed by nabla's matrix
// product (internal/kernel/gemm), on the calling goroutine. Every other
// routine, every small product and every call with arguments gonum would
// refuse are gonum's own, so a program that calls blas64 itself gets the
// same results to rounding and the same panics; one that installs another
// BLAS with blas64.Use after start-up replaces this one.
func init() {
	if _, ok := blas64.Implementation().(native.Implementation); ok {
		blas64.Use(levelThree{})
	}
}

// levelThree is gonum's native float64 BLAS with its level-3 routines on
// nabla's matrix product.
type levelThree struct{ native.Implementation }

// levelThreeMin is the size m·n·k of a product below which gonum's own
// loops are as fast as packing for nabla's kernels; blockedMin the order
// below which a triangular solve or rank-k update is gonum's own.
const (
	levelThreeMin = 24 * 24 * 24
	blockedMin    = 32
)

// fits reports whether a row-major rows×cols matrix with leading dimension
// ld lies within n elements.
func fits(rows, cols, ld, n int) bool {
	if rows < 0 || cols < 0 || ld < max(1, cols) {
		return false
	}
	return rows == 0 || cols == 0 || n >= (rows-1)*ld+cols
}

func isTrans(t blas.Transpose) (trans, ok bool) {
	switch t {
	case blas.NoTrans:
		return false, true
	case blas.Trans, blas.ConjTrans:
		return true, true
	}
	return false, false
}

// Dgemm computes C = alpha·op(A)·op(B) + beta·C.
func (l levelThree) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	transA, okA := isTrans(tA)
	transB, okB := isTrans(tB)
	ar, ac, br, bc := m, k, k, n
	if transA {
		ar, ac = k, m
	}
	if transB {
		br, bc = n, k
	}
	if !okA || !okB || m*n*k < levelThreeMin || !fits(ar, ac, lda, len(a)) || !fits(br, bc, ldb, len(b)) || !fits(m, n, ldc, len(c)) {
		l.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	scaleMatrix(m, n, beta, c, ldc)
	mulAdd(transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc)
}

// scaleMatrix sets the m×n matrix c to beta·c (to zeros when beta is 0,
// whatever c held, as BLAS does).
func scaleMatrix(m, n int, beta float64, c []float64, ldc int) {
	if beta == 1 {
		return
	}
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

var scratchPool = sync.Pool{New: func() any { return new([]float64) }}

// mulAdd adds alpha·op(A)·op(B) to C (m×n, inner dimension k) with nabla's
// product. An alpha other than 1 scales a copy of the smaller operand.
func mulAdd(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 || k == 0 || alpha == 0 {
		return
	}
	p := gemm.Product{TransA: transA, TransB: transB, Acc: true, M: m, N: n, K: k, Lda: lda, Ldb: ldb, Ldc: ldc}
	if alpha == 1 {
		gemm.Mul(nil, p, a, b, c)
		return
	}
	buf := scratchPool.Get().(*[]float64)
	defer scratchPool.Put(buf)
	if m <= n { // scale op(A), m×k
		rows, cols := m, k
		if transA {
			rows, cols = k, m
		}
		p.Lda = cols
		gemm.Mul(nil, p, scaledCopy(buf, rows, cols, alpha, a, lda), b, c)
		return
	}
	rows, cols := k, n
	if transB {
		rows, cols = n, k
	}
	p.Ldb = cols
	gemm.Mul(nil, p, a, scaledCopy(buf, rows, cols, alpha, b, ldb), c)
}

// scaledCopy writes alpha times the rows×cols matrix x into *buf, packed
// (leading dimension cols), and returns it.
func scaledCopy(buf *[]float64, rows, cols int, alpha float64, x []float64, ldx int) []float64 {
	if cap(*buf) < rows*cols {
		*buf = make([]float64, rows*cols)
	}
	y := (*buf)[:rows*cols]
	for i := range rows {
		yi, xi := y[i*cols:(i+1)*cols], x[i*ldx:i*ldx+cols]
		for j := range yi {
			yi[j] = alpha * xi[j]
		}
	}
	return y
}

// Dsyrk computes the uplo triangle of C = alpha·op(A)·op(A)ᵀ + beta·C,
// op(A) n×k, by halves: the two diagonal blocks recursively and the block
// between them as one product.
func (l levelThree) Dsyrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	trans, ok := isTrans(t)
	ar, ac := n, k
	if trans {
		ar, ac = k, n
	}
	if !ok || (ul != blas.Lower && ul != blas.Upper) || n < blockedMin || n*n*k < levelThreeMin ||
		!fits(ar, ac, lda, len(a)) || !fits(n, n, ldc, len(c)) {
		l.Implementation.Dsyrk(ul, t, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	n1 := n / 2
	n2 := n - n1
	// Rows n1.. of op(A): stored rows n1.., or columns n1.. when trans.
	a2 := a[n1*lda:]
	if trans {
		a2 = a[n1:]
	}
	l.Dsyrk(ul, t, n1, k, alpha, a, lda, beta, c, ldc)
	l.Dsyrk(ul, t, n2, k, alpha, a2, lda, beta, c[n1*ldc+n1:], ldc)
	// C21 = alpha·op(A)₂·op(A)₁ᵀ + beta·C21, or C12 its transpose.
	if ul == blas.Lower {
		c21 := c[n1*ldc:]
		scaleMatrix(n2, n1, beta, c21, ldc)
		mulAdd(trans, !trans, n2, n1, k, alpha, a2, lda, a, lda, c21, ldc)
		return
	}
	c12 := c[n1:]
	scaleMatrix(n1, n2, beta, c12, ldc)
	mulAdd(trans, !trans, n1, n2, k, alpha, a, lda, a2, lda, c12, ldc)
}

// Dtrsm solves op(A)·X = alpha·B (side Left) or X·op(A) = alpha·B (side
// Right) for X in B, A triangular: recursively, by halves of A, the
// update between the halves one product.
func (l levelThree) Dtrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	trans, ok := isTrans(tA)
	order := m
	if s == blas.Right {
		order = n
	}
	if !ok || (s != blas.Left && s != blas.Right) || (ul != blas.Lower && ul != blas.Upper) ||
		(d != blas.Unit && d != blas.NonUnit) || order < blockedMin || m*n*order < levelThreeMin ||
		!fits(order, order, lda, len(a)) || !fits(m, n, ldb, len(b)) {
		l.Implementation.Dtrsm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	scaleMatrix(m, n, alpha, b, ldb)
	l.trsm(s == blas.Left, ul == blas.Lower != trans, triangle{ul, tA, d, trans}, m, n, a, lda, b, ldb)
}

// triangle is what a triangular solve passes down its recursion.
type triangle struct {
	ul    blas.Uplo
	tA    blas.Transpose
	d     blas.Diag
	trans bool
}

// trsm is Dtrsm with alpha 1 and valid arguments; lower says whether
// op(A) is lower triangular. With op(A) = [T₁₁ T₁₂; T₂₁ T₂₂] (one of the
// off-diagonal blocks zero), the half that does not depend on the other
// is solved first, its product subtracted from the other's right-hand
// side, and the other solved.
func (l levelThree) trsm(left, lower bool, t triangle, m, n int, a []float64, lda int, b []float64, ldb int) {
	order := m
	if !left {
		order = n
	}
	if order < blockedMin || m*n*order < levelThreeMin {
		if !left && !lower && t.trans {
			solveRowsLower(t.d == blas.Unit, m, n, a, lda, b, ldb)
			return
		}
		l.Implementation.Dtrsm(side(left), t.ul, t.tA, t.d, m, n, 1, a, lda, b, ldb)
		return
	}
	h1 := order / 2
	h2 := order - h1
	a11, a22 := a, a[h1*lda+h1:]
	// The off-diagonal block of op(A) that is not zero, T₂₁ when lower
	// and T₁₂ when not, is stored as that block of A or, when A is
	// transposed, as the other one.
	below := lower != t.trans // it is A's block below the diagonal
	off := a[h1:]             // A₁₂, h1×h2
	if below {
		off = a[h1*lda:] // A₂₁, h2×h1
	}
	if left { // op(A)·X = B, B in halves of rows
		b1, b2 := b, b[h1*ldb:]
		if lower { // X₁ = T₁₁⁻¹B₁, B₂ −= T₂₁X₁, X₂ = T₂₂⁻¹B₂
			l.trsm(left, lower, t, h1, n, a11, lda, b1, ldb)
			mulAdd(t.trans, false, h2, n, h1, -1, off, lda, b1, ldb, b2, ldb)
			l.trsm(left, lower, t, h2, n, a22, lda, b2, ldb)
			return
		}
		l.trsm(left, lower, t, h2, n, a22, lda, b2, ldb)
		mulAdd(t.trans, false, h1, n, h2, -1, off, lda, b2, ldb, b1, ldb)
		l.trsm(left, lower, t, h1, n, a11, lda, b1, ldb)
		return
	}
	// X·op(A) = B, B in halves of columns.
	b1, b2 := b, b[h1:]
	if lower { // X₂ = B₂T₂₂⁻¹, B₁ −= X₂T₂₁, X₁ = B₁T₁₁⁻¹
		l.trsm(left, lower, t, m, h2, a22, lda, b2, ldb)
		mulAdd(false, t.trans, m, h1, h2, -1, b2, ldb, off, lda, b1, ldb)
		l.trsm(left, lower, t, m, h1, a11, lda, b1, ldb)
		return
	}
	l.trsm(left, lower, t, m, h1, a11, lda, b1, ldb)
	mulAdd(false, t.trans, m, h2, h1, -1, b1, ldb, off, lda, b2, ldb)
	l.trsm(left, lower, t, m, h2, a22, lda, b2, ldb)
}

func side(left bool) blas.Side {
	if left {
		return blas.Left
	}
	return blas.Right
}

// solveRowsLower solves X·Lᵀ = B for X in the m×n matrix b, L the n×n
// lower triangle of a (its diagonal taken as ones when unit): for each row
// x of X, xⱼ = (bⱼ − Σₖ₍ₖ₌ⱼ₎ Lⱼₖ·xₖ)/Lⱼⱼ over k < j, four rows at a time
// so that each element of L is loaded once for four. It is the
// triangular solve of a blocked Cholesky factorisation (dpotrf's), and
// gives what gonum's Dtrsm gives to rounding; gonum's calls an assembly
// dot product for each element, whose call costs more than the short
// sums here.
func solveRowsLower(unit bool, m, n int, a []float64, lda int, b []float64, ldb int) {
	i := 0
	for ; i+4 <= m; i += 4 {
		x0, x1 := b[i*ldb:i*ldb+n], b[(i+1)*ldb:(i+1)*ldb+n]
		x2, x3 := b[(i+2)*ldb:(i+2)*ldb+n], b[(i+3)*ldb:(i+3)*ldb+n]
		for j := range n {
			lj := a[j*lda : j*lda+j]
			s0, s1, s2, s3 := x0[j], x1[j], x2[j], x3[j]
			for k, l := range lj {
				s0 -= l * x0[k]
				s1 -= l * x1[k]
				s2 -= l * x2[k]
				s3 -= l * x3[k]
			}
			if !unit {
				d := a[j*lda+j]
				s0, s1, s2, s3 = s0/d, s1/d, s2/d, s3/d
			}
			x0[j], x1[j], x2[j], x3[j] = s0, s1, s2, s3
		}
	}
	for ; i < m; i++ {
		x := b[i*ldb : i*ldb+n]
		for j := range n {
			s := x[j]
			for k, l := range a[j*lda : j*lda+j] {
				s -= l * x[k]
			}
			if !unit {
				s /= a[j*lda+j]
			}
			x[j] = s
		}
	}
}

// luLeaf is the panel width at which getrf stops halving and factorises
// column by column.
const luLeaf = 16

// getrf factorises the m×n matrix a (leading dimension lda) in place with
// partial pivoting, P·A = L·U, as LAPACK's dgetrf: L unit lower
// triangular below the diagonal, U on and above it, rows i and piv[i]
// swapped at step i (piv holds min(m, n) entries). It is the recursive
// formulation (LAPACK's dgetrf2, Toledo's): the left half of the columns
// is factorised, its swaps applied to the right half, the right half
// updated by a triangular solve and a product, and its lower part
// factorised. gonum's Dgetrf factorises panels 64 columns wide one rank-1
// update at a time, which in row-major storage costs more than the whole
// of the products; here all but the narrowest panels are products.
// A zero pivot leaves its column unscaled and the factorisation goes on.
func (l levelThree) getrf(m, n int, a []float64, lda int, piv []int) {
	k := min(m, n)
	if n <= luLeaf || k < 2 {
		getf2(m, n, a, lda, piv)
		return
	}
	n1 := k / 2
	n2 := n - n1
	l.getrf(m, n1, a, lda, piv[:n1])
	swapRowsAt(a, lda, n1, n, piv[:n1], 0)
	l.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.Unit, n1, n2, 1, a, lda, a[n1:], lda)
	l.Dgemm(blas.NoTrans, blas.NoTrans, m-n1, n2, n1, -1, a[n1*lda:], lda, a[n1:], lda, 1, a[n1*lda+n1:], lda)
	l.getrf(m-n1, n2, a[n1*lda+n1:], lda, piv[n1:k])
	for i := n1; i < k; i++ {
		piv[i] += n1
	}
	swapRowsAt(a, lda, 0, n1, piv[n1:k], n1)
}

// swapRowsAt swaps, for each i, rows first+i and piv[i] of a in columns
// c0 to c1.
func swapRowsAt(a []float64, lda, c0, c1 int, piv []int, first int) {
	for i, p := range piv {
		if r := first + i; p != r {
			swapRows(a[r*lda+c0:r*lda+c1], a[p*lda+c0:p*lda+c1])
		}
	}
}

// getf2 is getrf one column at a time: the largest element of the column
// below the diagonal is swapped up, divides the column below it, and its
// row times the column is subtracted from the rows below.
func getf2(m, n int, a []float64, lda int, piv []int) {
	for j := range min(m, n) {
		p := j
		for i := j + 1; i < m; i++ {
			if abs(a[i*lda+j]) > abs(a[p*lda+j]) {
				p = i
			}
		}
		piv[j] = p
		if p != j {
			swapRows(a[j*lda:j*lda+n], a[p*lda:p*lda+n])
		}
		d := a[j*lda+j]
		if d == 0 {
			continue
		}
		uj := a[j*lda+j+1 : j*lda+n]
		for i := j + 1; i < m; i++ {
			f := a[i*lda+j] / d
			a[i*lda+j] = f
			if f != 0 {
				axpyRow(a[i*lda+j+1:i*lda+n], -f, uj)
			}
		}
	}
}

package ops

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/lapack"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// svdPart is the factor an SVD op returns.
type svdPart uint8

const (
	svdU svdPart = iota
	svdS
	svdVh
)

var svdNames = [...]string{svdU: "SVDLeft", svdS: "SVDValues", svdVh: "SVDRight"}

// svdOp returns one factor of the reduced singular value decomposition
// A = U·diag(S)·Vh of each matrix of its input.
type svdOp struct{ part svdPart }

// SVD returns the reduced singular value decomposition of each matrix of
// a (its last two axes, m×n, k = min(m, n)): U (…, m, k) and Vh (…, k, n)
// with orthonormal columns and rows, and the singular values S (…, k) in
// descending order, A = U·diag(S)·Vh, as torch.linalg.svd(A,
// full_matrices=False). Each right singular vector (row of Vh) is signed
// so that its largest component (the first of equal ones) is positive,
// its left one with it.
//
// The gradient of S is U·diag(S̄)·Vh; those of U and Vh divide by
// differences of squared singular values and by the values themselves,
// so they are infinite where values repeat or (for non-square matrices)
// vanish, as torch's.
func SVD(a *graph.Node) (u, s, vh *graph.Node) {
	return graph.Apply(svdOp{svdU}, a), graph.Apply(svdOp{svdS}, a), graph.Apply(svdOp{svdVh}, a)
}

// Name is "SVDLeft" (U), "SVDValues" (S) or "SVDRight" (Vh).
func (op svdOp) Name() string { return svdNames[op.part] }

// Type is U's (…, m, k), S's (…, k) or Vh's (…, k, n).
func (op svdOp) Type(in []graph.Type) (graph.Type, error) {
	a, err := matrixInput(in)
	if err != nil {
		return graph.Type{}, err
	}
	r := a.Rank()
	m, n := a.Shape[r-2], a.Shape[r-1]
	k := min(m, n)
	shape := append([]int(nil), a.Shape...)
	switch op.part {
	case svdU:
		shape[r-1] = k
	case svdS:
		shape = shape[:r-1]
		shape[r-2] = k
	default:
		shape[r-2] = k
	}
	return a.WithShape(shape...), nil
}

// Cost is about 12·m·n·k flops per matrix.
func (svdOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	batch, m, n := matrices(in[0].Shape)
	c.Flops = 12 * int64(batch) * int64(m) * int64(n) * int64(min(m, n))
	return c
}

// Forward decomposes on the calling goroutine; see ForwardExec.
func (op svdOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec decomposes each matrix in the machine's scratch.
func (op svdOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	return forwardParts(e, op, []*tensor.Dense{out}, in[0])
}

// svdParts decomposes each matrix of a once and writes the factors that
// outs holds (indexed by svdPart; nil for a factor not wanted).
func svdParts(e *graph.Exec, outs [maxParts]*tensor.Dense, a *tensor.Dense) error {
	batched := len(a.Shape()) > 2
	batch, m, n := matrices(a.Shape())
	return forFloat(a.Dtype(),
		func() error { return svdKernel(e, partSlices[float32](outs), batched, batch, m, n, floats[float32](a)) },
		func() error { return svdKernel(e, partSlices[float64](outs), batched, batch, m, n, floats[float64](a)) })
}

// svdScratch is the kernel's working memory (float64 whatever the dtype),
// kept by the machine: the tall matrix being orthogonalised (A, or Aᵀ
// when A is wide) and then its left vectors, the right vectors, the
// values, and LAPACK's U and workspace.
type svdScratch struct {
	w, v, s, u, work []float64
	query            [1]float64 // LAPACK's workspace query: a local would escape
}

type svdKey struct{}

// lapackSVDOrder is the k = min(m, n) from which matrices are decomposed
// by LAPACK's dgesvd (gonum's); smaller ones by one-sided Jacobi
// rotations (Hestenes), which are as accurate and spare the bidiagonal
// reduction.
const lapackSVDOrder = 32

func svdKernel[T float](e *graph.Exec, outs [maxParts][]T, batched bool, batch, m, n int, in []T) error {
	k := min(m, n)
	rows := max(m, n) // of the tall problem
	s := e.State(svdKey{}, func() any { return new(svdScratch) }).(*svdScratch)
	if cap(s.w) < rows*k || cap(s.v) < k*k {
		s.w, s.v, s.s = make([]float64, rows*k), make([]float64, k*k), make([]float64, k)
	}
	s.w, s.v, s.s = s.w[:rows*k], s.v[:k*k], s.s[:k]
	for b := range batch {
		am := in[b*m*n : (b+1)*m*n]
		for i := range m { // the tall problem: A, or Aᵀ
			for j := range n {
				if m >= n {
					s.w[i*n+j] = float64(am[i*n+j])
				} else {
					s.w[j*m+i] = float64(am[i*n+j])
				}
			}
		}
		var ok bool
		if k >= lapackSVDOrder {
			ok = s.lapack(rows, k)
		} else {
			ok = s.jacobi(rows, k)
		}
		if !ok {
			return batchError(batched, b, fmt.Errorf("the singular value algorithm failed to converge (a NaN or infinity in the input?)"))
		}
		s.orient(rows, k, m < n)
		for part, out := range outs {
			if out != nil {
				writeSVD(s, svdPart(part), m, n, out, b)
			}
		}
	}
	return nil
}

// jacobi orthogonalises the columns of the rows×k matrix s.w by rotations
// accumulated in s.v, so that s.w = U·diag(S) and the input = s.w·s.vᵀ;
// then it sorts the values, descending, and normalises U's columns
// (completing those of zero values to an orthonormal set).
func (s *svdScratch) jacobi(rows, k int) bool {
	w, v := s.w, s.v
	clear(v)
	for i := range k {
		v[i*k+i] = 1
	}
	for sweep := 0; ; sweep++ {
		if sweep == maxJacobiSweeps {
			return false
		}
		rotated := false
		for p := range k {
			for q := p + 1; q < k; q++ {
				alpha, beta, gamma := 0.0, 0.0, 0.0
				for i := range rows {
					wp, wq := w[i*k+p], w[i*k+q]
					alpha, beta, gamma = alpha+wp*wp, beta+wq*wq, gamma+wp*wq
				}
				if math.IsNaN(gamma) || math.IsInf(alpha+beta, 0) {
					return false
				}
				if gamma == 0 || math.Abs(gamma) <= 1e-15*math.Sqrt(alpha*beta) {
					continue
				}
				rotated = true
				zeta := (beta - alpha) / (2 * gamma)
				t := 1 / (math.Abs(zeta) + math.Sqrt(1+zeta*zeta))
				if math.IsInf(zeta*zeta, 0) {
					t = 1 / (2 * math.Abs(zeta))
				}
				if zeta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(1+t*t)
				sn := c * t
				rotateColumns(w, rows, k, p, q, c, sn)
				rotateColumns(v, k, k, p, q, c, sn)
			}
		}
		if !rotated {
			break
		}
	}
	for j := range k {
		norm := 0.0
		for i := range rows {
			norm = math.Hypot(norm, w[i*k+j])
		}
		s.s[j] = norm
	}
	// Insertion sort of the triples, descending: k is small here.
	for i := 1; i < k; i++ {
		for j := i; j > 0 && s.s[j] > s.s[j-1]; j-- {
			s.s[j], s.s[j-1] = s.s[j-1], s.s[j]
			swapColumns(w, rows, k, j, j-1)
			swapColumns(v, k, k, j, j-1)
		}
	}
	for j := range k {
		if s.s[j] == 0 {
			completeColumn(w, rows, k, j)
			continue
		}
		for i := range rows {
			w[i*k+j] /= s.s[j]
		}
	}
	return true
}

// rotateColumns replaces columns p and q of the r×k matrix x by
// c·x_p − s·x_q and s·x_p + c·x_q.
func rotateColumns(x []float64, r, k, p, q int, c, s float64) {
	for i := range r {
		xp, xq := x[i*k+p], x[i*k+q]
		x[i*k+p], x[i*k+q] = c*xp-s*xq, s*xp+c*xq
	}
}

func swapColumns(x []float64, r, k, p, q int) {
	for i := range r {
		x[i*k+p], x[i*k+q] = x[i*k+q], x[i*k+p]
	}
}

// completeColumn makes column j of the r×k matrix x, whose other columns
// are orthonormal or zero-valued ones after it, a unit vector orthogonal
// to the columns before it: the first unit vector e_i that keeps most of
// its length after Gram–Schmidt.
func completeColumn(x []float64, r, k, j int) {
	for e := range r {
		for i := range r {
			x[i*k+j] = 0
		}
		x[e*k+j] = 1
		for c := range j {
			dot := x[e*k+c]
			for i := range r {
				x[i*k+j] -= dot * x[i*k+c]
			}
		}
		norm := 0.0
		for i := range r {
			norm = math.Hypot(norm, x[i*k+j])
		}
		if norm > 0.5 {
			for i := range r {
				x[i*k+j] /= norm
			}
			return
		}
	}
}

// orient flips each pair of singular vectors whose right vector's largest
// component (the first of equal ones) is negative: the right vectors are
// s.v's columns, or s.w's when A is wide (its tall problem is Aᵀ).
func (s *svdScratch) orient(rows, k int, wide bool) {
	right, r := s.v, k
	if wide {
		right, r = s.w, rows
	}
	for j := range k {
		big := 0
		for i := 1; i < r; i++ {
			if math.Abs(right[i*k+j]) > math.Abs(right[big*k+j]) {
				big = i
			}
		}
		if right[big*k+j] < 0 {
			for i := range k {
				s.v[i*k+j] = -s.v[i*k+j]
			}
			for i := range rows {
				s.w[i*k+j] = -s.w[i*k+j]
			}
		}
	}
}

// lapack decomposes the tall rows×k s.w with dgesvd: U into s.w (by way
// of s.u: dgesvd cannot overwrite its input), Vᵀ transposed into s.v.
func (s *svdScratch) lapack(rows, k int) bool {
	if cap(s.u) < rows*k {
		s.u = make([]float64, rows*k)
	}
	s.u = s.u[:rows*k]
	lapackImpl.Dgesvd(lapack.SVDStore, lapack.SVDAll, rows, k, s.w, k, s.s, s.u, k, s.v, k, s.query[:], -1)
	if need := max(int(s.query[0]), 5*k+rows); len(s.work) < need {
		s.work = make([]float64, need)
	}
	if !lapackImpl.Dgesvd(lapack.SVDStore, lapack.SVDAll, rows, k, s.w, k, s.s, s.u, k, s.v, k, s.work, len(s.work)) {
		return false
	}
	copy(s.w, s.u)
	for i := range k { // Vᵀ → V
		for j := i + 1; j < k; j++ {
			s.v[i*k+j], s.v[j*k+i] = s.v[j*k+i], s.v[i*k+j]
		}
	}
	return true
}

// writeSVD copies the op's factor of matrix b into out: U and V are the
// tall problem's, or V and U (transposed) when A is wide.
func writeSVD[T float](s *svdScratch, part svdPart, m, n int, out []T, b int) {
	k := min(m, n)
	switch part {
	case svdS:
		for j, v := range s.s {
			out[b*k+j] = T(v)
		}
	case svdU: // m×k: the tall problem's U, or its V when wide
		src := s.w
		if m < n {
			src = s.v
		}
		for i := range m * k {
			out[b*m*k+i] = T(src[i])
		}
	default: // k×n: Vᵀ, or the tall problem's Uᵀ when wide
		src, rows := s.v, n
		if m < n {
			src = s.w
		}
		for i := range k {
			for j := range rows {
				out[b*k*n+i*n+j] = T(src[j*k+i])
			}
		}
	}
}

// svdFactors returns U, S and V (not Vh) of a, from the ops SVD applies
// (the user's own nodes, once merged).
func svdFactors(a *graph.Node) (u, s, v *graph.Node) {
	u, s, vh := SVD(a)
	return u, s, transposeMatrices(vh)
}

// svdInverseGaps is F with F_ij = 1/(s_j² − s_i²) off the diagonal and 0
// on it, for a batch of singular values (…, k).
func svdInverseGaps(s *graph.Node) *graph.Node {
	if p := graph.Poisoned(s); p != nil {
		return p
	}
	k := s.Shape()[s.Type().Rank()-1]
	return Div(Sub(scalarLike(s, 1), Eye(s.Graph(), s.DType(), k)), eigenGaps(Square(s)))
}

// scaleColumns is x·diag(s) and scaleRows diag(s)·x, for a batch of
// matrices x and of vectors s (…, k).
func scaleColumns(x, s *graph.Node) *graph.Node { return Mul(x, asRow(s)) }

func scaleRows(x, s *graph.Node) *graph.Node { return Mul(x, transposeMatrices(asRow(s))) }

// asRow reshapes a batch of vectors (…, k) to one of rows (…, 1, k).
func asRow(s *graph.Node) *graph.Node {
	if p := graph.Poisoned(s); p != nil {
		return p
	}
	shape := s.Shape()
	return Reshape(s, append(append([]int(nil), shape[:len(shape)-1]...), 1, shape[len(shape)-1])...)
}

// outsideSpan is x − q·qᵀ·x, x's part outside the span of q's orthonormal
// columns: nil (zero) when q is square.
func outsideSpan(q, x *graph.Node) *graph.Node {
	if r := q.Type().Rank(); q.Shape()[r-2] == q.Shape()[r-1] {
		return nil
	}
	return Sub(x, batchMatMul(q, batchMatMul(q, x, true, false), false, false))
}

// Backward (Townsend 2016, as torch's): with F the inverse gaps of the
// squared values, J = F ∘ (Uᵀ·Ū) and K = F ∘ (Vᵀ·V̄), Ā is
// U·(diag(S̄) + (J + Jᵀ)·S + S·(K + Kᵀ))·Vᵀ plus, for non-square matrices,
// (I − U·Uᵀ)·Ū·S⁻¹·Vᵀ + U·S⁻¹·V̄ᵀ·(I − V·Vᵀ); each factor's op gives its
// own terms.
func (op svdOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	u, s, v := svdFactors(ctx.Input(0))
	var inner, outside *graph.Node
	switch op.part {
	case svdS:
		inner = DiagEmbed(g)
	case svdU:
		j := Mul(svdInverseGaps(s), batchMatMul(u, g, true, false))
		inner = scaleColumns(Add(j, transposeMatrices(j)), s)
		if p := outsideSpan(u, g); p != nil {
			outside = batchMatMul(Div(p, asRow(s)), v, false, true)
		}
	default:
		gv := transposeMatrices(g)
		k := Mul(svdInverseGaps(s), batchMatMul(v, gv, true, false))
		inner = scaleRows(Add(k, transposeMatrices(k)), s)
		if p := outsideSpan(v, gv); p != nil {
			outside = batchMatMul(Div(u, asRow(s)), p, false, true)
		}
	}
	ga := batchMatMul(batchMatMul(u, inner, false, false), v, false, true)
	return []*graph.Node{addTangents(ga, outside)}
}

// JVP: with dP = Uᵀ·dA·V, dS = diag(dP), dU = U·(F ∘ (dP·S + S·dPᵀ)) +
// (I − U·Uᵀ)·dA·V·S⁻¹ and dV = V·(F ∘ (S·dP + dPᵀ·S)) + (I −
// V·Vᵀ)·dAᵀ·U·S⁻¹.
func (op svdOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil {
		return nil
	}
	u, s, v := svdFactors(c.Input(0))
	u, s, v = batchedPrimal(c, u), batchedPrimal(c, s), batchedPrimal(c, v)
	dp := batchMatMul(batchMatMul(u, t, true, false), v, false, false)
	if op.part == svdS {
		return Diagonal(dp)
	}
	f, dpT := svdInverseGaps(s), transposeMatrices(dp)
	if op.part == svdU {
		du := batchMatMul(u, Mul(f, Add(scaleColumns(dp, s), scaleRows(dpT, s))), false, false)
		return addTangents(du, outsideSpan(u, Div(batchMatMul(t, v, false, false), asRow(s))))
	}
	dv := batchMatMul(v, Mul(f, Add(scaleRows(dp, s), scaleColumns(dpT, s))), false, false)
	return transposeMatrices(addTangents(dv, outsideSpan(v, Div(batchMatMul(t, u, true, false), asRow(s)))))
}

// Batch decomposes each example: the batch is one more leading axis.
func (op svdOp) Batch(c *graph.BatchContext) *graph.Node { return leadingBatch(c, op) }

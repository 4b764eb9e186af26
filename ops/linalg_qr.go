package ops

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// qrPart is the factor a QR op returns.
type qrPart uint8

const (
	qrQ qrPart = iota
	qrR
)

// qrOp returns one factor of the reduced QR factorisation A = Q·R of each
// matrix of its input: Q (…, m, n) with orthonormal columns, R (…, n, n)
// upper triangular, by Householder reflections with LAPACK's signs
// (geqrf: R's diagonal is −sign(the pivot column's head)·its norm).
type qrOp struct{ part qrPart }

// QR returns the reduced QR factorisation of each matrix of a (its last
// two axes, m ≥ n): Q (…, m, n) with orthonormal columns and R (…, n, n)
// upper triangular with A = Q·R, as torch.linalg.qr(A) (mode "reduced")
// computes them, signs included (LAPACK's geqrf). The gradient
// (Walter and Lehmann 2018) solves with R, so a matrix whose columns are
// dependent has none: differentiating there is TriangularSolve's run-time
// error.
func QR(a *graph.Node) (q, r *graph.Node) {
	return graph.Apply(qrOp{qrQ}, a), graph.Apply(qrOp{qrR}, a)
}

// Name is "QROrthogonal" for Q or "QRTriangular" for R.
func (op qrOp) Name() string {
	if op.part == qrQ {
		return "QROrthogonal"
	}
	return "QRTriangular"
}

// Type is Q's (…, m, n) or R's (…, n, n) for a batch of m×n matrices with
// m ≥ n.
func (op qrOp) Type(in []graph.Type) (graph.Type, error) {
	a, err := matrixInput(in)
	if err != nil {
		return graph.Type{}, err
	}
	r := a.Rank()
	m, n := a.Shape[r-2], a.Shape[r-1]
	if m < n {
		return graph.Type{}, fmt.Errorf("shape %s: the matrices are wide (%d < %d columns): the reduced QR of a wide matrix is not supported yet",
			graph.ShapeString(a.Shape), m, n)
	}
	if op.part == qrQ {
		return a, nil
	}
	shape := append([]int(nil), a.Shape...)
	shape[r-2] = n
	return a.WithShape(shape...), nil
}

// Cost is 2mn² − 2n³/3 flops per matrix for R, twice that with Q.
func (op qrOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	batch, m, n := matrices(in[0].Shape)
	c.Flops = int64(batch) * (2*int64(m)*int64(n)*int64(n) - 2*int64(n)*int64(n)*int64(n)/3)
	if op.part == qrQ {
		c.Flops *= 2
	}
	return c
}

// Forward factorises on the calling goroutine; see ForwardExec.
func (op qrOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec factorises each matrix in the machine's scratch and writes
// the op's factor.
func (op qrOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	return forwardParts(e, op, []*tensor.Dense{out}, in[0])
}

// qrParts factorises each matrix of a once and writes the factors that
// outs holds (indexed by qrPart; nil for a factor not wanted).
func qrParts(e *graph.Exec, outs [maxParts]*tensor.Dense, a *tensor.Dense) error {
	batch, m, n := matrices(a.Shape())
	return forFloat(a.Dtype(),
		func() error {
			qrKernel(e, partSlices[float32](outs), batch, m, n, floats[float32](a))
			return nil
		},
		func() error {
			qrKernel(e, partSlices[float64](outs), batch, m, n, floats[float64](a))
			return nil
		})
}

// qrScratch is the kernel's working memory, kept by the machine: the
// reflections (below the diagonal) and R (on and above it) of one matrix,
// their scalars τ, and LAPACK's workspace.
type qrScratch[T float] struct {
	w, tau []T
	work   []float64
	query  [2]float64 // LAPACK's workspace queries: locals would escape
}

type qrKey[T float] struct{}

// lapackQROrder is the number of columns from which float64 matrices are
// factorised by LAPACK's blocked dgeqrf and dorgqr (gonum's); narrower
// ones, and float32 ones, by the direct loops.
const lapackQROrder = 32

func qrKernel[T float](e *graph.Exec, outs [maxParts][]T, batch, m, n int, a []T) {
	s := e.State(qrKey[T]{}, func() any { return new(qrScratch[T]) }).(*qrScratch[T])
	if cap(s.w) < m*n || cap(s.tau) < n {
		s.w, s.tau = make([]T, m*n), make([]T, n)
	}
	s.w, s.tau = s.w[:m*n], s.tau[:n]
	for b := range batch {
		var q, r []T
		if outs[qrQ] != nil {
			q = outs[qrQ][b*m*n : (b+1)*m*n]
		}
		if outs[qrR] != nil {
			r = outs[qrR][b*n*n : (b+1)*n*n]
		}
		copy(s.w, a[b*m*n:(b+1)*m*n])
		if w64, ok := any(s.w).([]float64); ok && n >= lapackQROrder {
			s.lapack(w64, any(q).([]float64), any(r).([]float64), m, n)
			continue
		}
		s.householder(m, n)
		if r != nil {
			upper(r, s.w, n)
		}
		if q != nil {
			s.formQ(q, m, n)
		}
	}
}

// upper writes the upper triangle of w's first n rows (m×n, row-major)
// into r (n×n), zeros below it.
func upper[T float](r, w []T, n int) {
	for i := range n {
		clear(r[i*n : i*n+i])
		copy(r[i*n+i:(i+1)*n], w[i*n+i:(i+1)*n])
	}
}

// householder factorises w (m×n) in place as LAPACK's dgeqr2 does:
// column j's reflection H = I − τ·v·vᵀ, v = (1, w[j+1:, j]), maps the
// column from its head down onto β·e₁, β = −sign(head)·norm; a column
// with nothing below its head is left as it is (τ = 0).
func (s *qrScratch[T]) householder(m, n int) {
	w := s.w
	for j := range n {
		below := 0.0
		for i := j + 1; i < m; i++ {
			below = math.Hypot(below, float64(w[i*n+j]))
		}
		s.tau[j] = 0
		if below == 0 {
			continue
		}
		head := float64(w[j*n+j])
		beta := -math.Copysign(math.Hypot(head, below), head)
		s.tau[j] = T((beta - head) / beta)
		scale := T(1 / (head - beta))
		for i := j + 1; i < m; i++ {
			w[i*n+j] *= scale
		}
		w[j*n+j] = T(beta)
		s.reflect(w, m, n, j, j+1)
	}
}

// reflect applies reflection j to columns [from, n) of the m×n matrix x
// (x ← H·x), v read from s.w's column j.
func (s *qrScratch[T]) reflect(x []T, m, n, j, from int) {
	tau, w := s.tau[j], s.w
	if tau == 0 {
		return
	}
	for c := from; c < n; c++ {
		dot := x[j*n+c]
		for i := j + 1; i < m; i++ {
			dot += w[i*n+j] * x[i*n+c]
		}
		dot *= tau
		x[j*n+c] -= dot
		for i := j + 1; i < m; i++ {
			x[i*n+c] -= dot * w[i*n+j]
		}
	}
}

// formQ writes the first n columns of H₀·H₁·…·Hₙ₋₁ into q (m×n), applying
// the reflections to those of the identity, last first.
func (s *qrScratch[T]) formQ(q []T, m, n int) {
	clear(q)
	for i := range n {
		q[i*n+i] = 1
	}
	for j := n - 1; j >= 0; j-- {
		s.reflect(q, m, n, j, j)
	}
}

// lapack factorises w with dgeqrf and writes R into r and Q, by dorgqr,
// into q, each where it is not nil.
func (s *qrScratch[T]) lapack(w, q, r []float64, m, n int) {
	tau := any(s.tau).([]float64)
	lapackImpl.Dgeqrf(m, n, w, n, tau, s.query[:1], -1)
	lapackImpl.Dorgqr(m, n, n, w, n, tau, s.query[1:], -1)
	if need := max(int(s.query[0]), int(s.query[1]), n); len(s.work) < need {
		s.work = make([]float64, need)
	}
	lapackImpl.Dgeqrf(m, n, w, n, tau, s.work, len(s.work))
	if r != nil {
		upper(r, w, n)
	}
	if q != nil {
		lapackImpl.Dorgqr(m, n, n, w, n, tau, s.work, len(s.work))
		copy(q, w)
	}
}

// Backward is Walter and Lehmann's rule (2018) for the reduced QR,
// Ā = (Q̄ + Q·copyltu(M))·R⁻ᵀ with M = R·R̄ᵀ − Q̄ᵀ·Q and copyltu(M) M's
// lower triangle mirrored onto its upper one; each factor's op gives its
// own term, the other gradient taken as zero.
func (op qrOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	a := ctx.Input(0)
	q, r := graph.Apply(qrOp{qrQ}, a), graph.Apply(qrOp{qrR}, a)
	var m, ga *graph.Node
	if op.part == qrQ {
		m = Neg(batchMatMul(g, q, true, false))
	} else {
		m = batchMatMul(r, g, false, true)
	}
	ga = batchMatMul(q, Add(Tril(m, 0), transposeMatrices(Tril(m, -1))), false, false)
	if op.part == qrQ {
		ga = Add(g, ga)
	}
	return []*graph.Node{TriangularSolve(r, ga, TriangularOptions{Upper: true, Right: true, Transpose: true})}
}

// JVP: with X = Qᵀ·dA·R⁻¹, split into the skew-symmetric Ω = QᵀdQ
// (from X's strict lower triangle) and the upper-triangular U = dR·R⁻¹ =
// X − Ω, dR = U·R and dQ = dA·R⁻¹ − Q·U.
func (op qrOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil {
		return nil
	}
	a := c.Input(0)
	q, r := batchedPrimal(c, graph.Apply(qrOp{qrQ}, a)), batchedPrimal(c, graph.Apply(qrOp{qrR}, a))
	y := TriangularSolve(r, t, TriangularOptions{Upper: true, Right: true})
	x := batchMatMul(q, y, true, false)
	lower := Tril(x, -1)
	u := Sub(x, Sub(lower, transposeMatrices(lower)))
	if op.part == qrR {
		return batchMatMul(u, r, false, false)
	}
	return Sub(y, batchMatMul(q, u, false, false))
}

// Batch factorises each example: the batch is one more leading axis.
func (op qrOp) Batch(c *graph.BatchContext) *graph.Node { return leadingBatch(c, op) }

package ops

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// eighPart is what an Eigh op returns: the eigenvalues or the
// eigenvectors.
type eighPart uint8

const (
	eighValues eighPart = iota
	eighVectors
)

// eighOp returns one part of the eigendecomposition A = V·diag(λ)·Vᵀ of
// each symmetric matrix of its input, of which it reads the lower
// triangle.
type eighOp struct{ part eighPart }

// Eigh returns the eigenvalues, in ascending order, and the eigenvectors
// (the columns of an orthogonal matrix) of each symmetric matrix of a
// (its last two axes, of which the lower triangle is read), as
// torch.linalg.eigh(A): values (…, n) and vectors (…, n, n) with
// A = V·diag(λ)·Vᵀ. Each eigenvector's sign is chosen so that its
// largest component (the first of equal ones) is positive.
//
// The gradients are symmetric, as torch's, and the eigenvectors' divides
// by differences of eigenvalues: at repeated eigenvalues only functions
// that do not depend on the choice of vectors within the repeated
// eigenspace have finite derivatives, and those of the vectors themselves
// are infinite.
func Eigh(a *graph.Node) (values, vectors *graph.Node) {
	return graph.Apply(eighOp{eighValues}, a), graph.Apply(eighOp{eighVectors}, a)
}

// Name is "EighValues" or "EighVectors".
func (op eighOp) Name() string {
	if op.part == eighValues {
		return "EighValues"
	}
	return "EighVectors"
}

// Type is (…, n) for the values and (…, n, n) for the vectors of a batch
// of square matrices.
func (op eighOp) Type(in []graph.Type) (graph.Type, error) {
	a, err := squareMatrices(in)
	if err != nil || op.part == eighVectors {
		return a, err
	}
	return a.WithShape(a.Shape[:a.Rank()-1]...), nil
}

// Cost is about 9n³ flops per matrix.
func (eighOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	batch, n, _ := matrices(in[0].Shape)
	c.Flops = 9 * int64(batch) * int64(n) * int64(n) * int64(n)
	return c
}

// Forward decomposes on the calling goroutine; see ForwardExec.
func (op eighOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec decomposes each matrix in the machine's scratch.
func (op eighOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	return forwardParts(e, op, []*tensor.Dense{out}, in[0])
}

// eighParts decomposes each matrix of a once and writes the parts that
// outs holds (indexed by eighPart; nil for a part not wanted).
func eighParts(e *graph.Exec, outs [maxParts]*tensor.Dense, a *tensor.Dense) error {
	batched := len(a.Shape()) > 2
	batch, n, _ := matrices(a.Shape())
	return forFloat(a.Dtype(),
		func() error { return eighKernel(e, partSlices[float32](outs), batched, batch, n, floats[float32](a)) },
		func() error { return eighKernel(e, partSlices[float64](outs), batched, batch, n, floats[float64](a)) })
}

// eighScratch is the kernel's working memory, kept by the machine: one
// matrix being diagonalised, its eigenvectors and eigenvalues (in float64
// whatever the dtype), and LAPACK's workspace.
type eighScratch struct {
	a, v, w, work []float64
	query         [1]float64 // LAPACK's workspace query: a local would escape
}

type eighKey struct{}

// lapackEighOrder is the order from which matrices are decomposed by
// LAPACK's dsyev (gonum's); smaller ones by cyclic Jacobi rotations, which
// are as accurate and spare dsyev's tridiagonal reduction.
const lapackEighOrder = 32

// maxJacobiSweeps bounds the Jacobi sweeps; they converge quadratically,
// in well under 20 for any matrix of float64s.
const maxJacobiSweeps = 60

func eighKernel[T float](e *graph.Exec, outs [maxParts][]T, batched bool, batch, n int, in []T) error {
	s := e.State(eighKey{}, func() any { return new(eighScratch) }).(*eighScratch)
	if cap(s.a) < n*n {
		s.a, s.v, s.w = make([]float64, n*n), make([]float64, n*n), make([]float64, n)
	}
	s.a, s.v, s.w = s.a[:n*n], s.v[:n*n], s.w[:n]
	for m := range batch {
		am := in[m*n*n : (m+1)*n*n]
		for i := range n { // the lower triangle, mirrored
			for j := 0; j <= i; j++ {
				s.a[i*n+j], s.a[j*n+i] = float64(am[i*n+j]), float64(am[i*n+j])
			}
		}
		var ok bool
		if n >= lapackEighOrder {
			ok = s.lapack(n)
		} else {
			ok = s.jacobi(n)
		}
		if !ok {
			return batchError(batched, m, fmt.Errorf("the eigenvalue algorithm failed to converge (a NaN or infinity in the input?)"))
		}
		s.orient(n)
		if out := outs[eighValues]; out != nil {
			for i, w := range s.w {
				out[m*n+i] = T(w)
			}
		}
		if out := outs[eighVectors]; out != nil {
			for i, v := range s.v {
				out[m*n*n+i] = T(v)
			}
		}
	}
	return nil
}

// jacobi diagonalises s.a by cyclic Jacobi rotations, accumulating them in
// s.v, and sorts the eigenvalues into s.w, ascending, with their vectors.
func (s *eighScratch) jacobi(n int) bool {
	a, v := s.a, s.v
	clear(v)
	for i := range n {
		v[i*n+i] = 1
	}
	for sweep := 0; ; sweep++ {
		off, diag := 0.0, 0.0
		for p := range n {
			diag += a[p*n+p] * a[p*n+p]
			for q := p + 1; q < n; q++ {
				off += a[p*n+q] * a[p*n+q]
			}
		}
		if math.IsNaN(off) || math.IsInf(off+diag, 0) || sweep == maxJacobiSweeps {
			return false
		}
		if off <= 1e-32*diag || off == 0 {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				if a[p*n+q] != 0 {
					jacobiRotate(a, v, n, p, q)
				}
			}
		}
	}
	for i := range n {
		s.w[i] = a[i*n+i]
	}
	// Insertion sort of the pairs: n is small here.
	for i := 1; i < n; i++ {
		for j := i; j > 0 && s.w[j] < s.w[j-1]; j-- {
			s.w[j], s.w[j-1] = s.w[j-1], s.w[j]
			for k := range n {
				v[k*n+j], v[k*n+j-1] = v[k*n+j-1], v[k*n+j]
			}
		}
	}
	return true
}

// jacobiRotate zeroes a[p][q] (and a[q][p]) by the rotation J in the
// (p, q) plane, a ← Jᵀ·a·J and v ← v·J, with t = tan of its angle the
// smaller root of t² + 2θt − 1 = 0, θ = (a_qq − a_pp)/(2a_pq).
func jacobiRotate(a, v []float64, n, p, q int) {
	theta := (a[q*n+q] - a[p*n+p]) / (2 * a[p*n+q])
	t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
	if math.IsInf(theta*theta, 0) {
		t = 1 / (2 * math.Abs(theta))
	}
	if theta < 0 {
		t = -t
	}
	c := 1 / math.Sqrt(t*t+1)
	s := t * c
	for k := range n { // columns p and q
		kp, kq := a[k*n+p], a[k*n+q]
		a[k*n+p], a[k*n+q] = c*kp-s*kq, s*kp+c*kq
	}
	for k := range n { // rows p and q
		pk, qk := a[p*n+k], a[q*n+k]
		a[p*n+k], a[q*n+k] = c*pk-s*qk, s*pk+c*qk
	}
	a[p*n+q], a[q*n+p] = 0, 0
	for k := range n {
		kp, kq := v[k*n+p], v[k*n+q]
		v[k*n+p], v[k*n+q] = c*kp-s*kq, s*kp+c*kq
	}
}

// lapack decomposes s.a with dsyev, the eigenvectors (columns) into s.v.
func (s *eighScratch) lapack(n int) bool {
	lapackImpl.Dsyev(lapack.EVCompute, blas.Lower, n, s.a, n, s.w, s.query[:], -1)
	if need := max(int(s.query[0]), 3*n-1); len(s.work) < need {
		s.work = make([]float64, need)
	}
	if !lapackImpl.Dsyev(lapack.EVCompute, blas.Lower, n, s.a, n, s.w, s.work, len(s.work)) {
		return false
	}
	copy(s.v, s.a)
	return true
}

// orient flips each eigenvector whose largest component (the first of
// equal ones) is negative, so that both algorithms give the same vectors.
func (s *eighScratch) orient(n int) {
	v := s.v
	for j := range n {
		big := 0
		for i := 1; i < n; i++ {
			if math.Abs(v[i*n+j]) > math.Abs(v[big*n+j]) {
				big = i
			}
		}
		if v[big*n+j] < 0 {
			for i := range n {
				v[i*n+j] = -v[i*n+j]
			}
		}
	}
}

// Backward: the eigenvalues' gradient is V·diag(λ̄)·Vᵀ, the
// eigenvectors' V·(skew(Vᵀ·V̄) ⊘ E)·Vᵀ with E_ij = λⱼ − λᵢ and
// skew(X) = ½(X − Xᵀ), whose zero diagonal E's is never divided into
// (E + I there); both symmetric.
func (op eighOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	a := ctx.Input(0)
	values, vectors := Eigh(a)
	var inner *graph.Node
	if op.part == eighValues {
		inner = DiagEmbed(g)
	} else {
		x := batchMatMul(vectors, g, true, false)
		inner = Div(Scale(Sub(x, transposeMatrices(x)), 0.5), eigenGaps(values))
	}
	return []*graph.Node{batchMatMul(batchMatMul(vectors, inner, false, false), vectors, false, true)}
}

// eigenGaps is E + I with E_ij = λⱼ − λᵢ, for a batch of eigenvalues (…, n).
func eigenGaps(values *graph.Node) *graph.Node {
	if p := graph.Poisoned(values); p != nil {
		return p
	}
	shape := values.Shape()
	r, n := len(shape), shape[len(shape)-1]
	row := Reshape(values, append(append([]int(nil), shape[:r-1]...), 1, n)...)
	col := Reshape(values, append(append([]int(nil), shape[:r-1]...), n, 1)...)
	return Add(Sub(row, col), Eye(values.Graph(), values.DType(), n))
}

// JVP: with S = Vᵀ·½(dA + dAᵀ)·V, dλ = diag(S) and dV = V·(S ⊘ E) with
// the diagonal of S ⊘ E zero.
func (op eighOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil {
		return nil
	}
	values, vectors := Eigh(c.Input(0))
	v := batchedPrimal(c, vectors)
	s := batchMatMul(batchMatMul(v, Scale(Add(t, transposeMatrices(t)), 0.5), true, false), v, false, false)
	if op.part == eighValues {
		return Diagonal(s)
	}
	n := values.Shape()[values.Type().Rank()-1]
	offDiagonal := Sub(s, Mul(s, Eye(s.Graph(), s.DType(), n)))
	return batchMatMul(v, Div(offDiagonal, batchedPrimal(c, eigenGaps(values))), false, false)
}

// Batch decomposes each example: the batch is one more leading axis.
func (op eighOp) Batch(c *graph.BatchContext) *graph.Node { return leadingBatch(c, op) }

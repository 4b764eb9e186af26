package ops

import (
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

type matrixExpOp struct{}

// MatrixExp returns the exponential of each square matrix of a (its last
// two axes), Σ Aᵏ/k!: torch.linalg.matrix_exp. The kernel is Higham's
// (2005) scaling and squaring with a [13/13] Padé approximant; the
// derivative is the exponential of a block matrix twice the size (Mathias
// 1996), exp([[A, E], [0, A]]) holding A's Fréchet derivative along E in
// its upper-right block, so that every order is MatrixExp again.
func MatrixExp(a *graph.Node) *graph.Node { return graph.Apply(matrixExpOp{}, a) }

// Name is "MatrixExp".
func (matrixExpOp) Name() string { return "MatrixExp" }

// Type checks that a is a batch of square matrices and returns its type.
func (matrixExpOp) Type(in []graph.Type) (graph.Type, error) { return squareMatrices(in) }

// Cost is about 8 products and a solve per matrix, n³ flops each, before
// squaring.
func (matrixExpOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	batch, n, _ := matrices(in[0].Shape)
	c.Flops = 20 * int64(batch) * int64(n) * int64(n) * int64(n)
	return c
}

// Forward computes on the calling goroutine; see ForwardExec.
func (op matrixExpOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec computes each matrix's exponential in the machine's
// scratch.
func (matrixExpOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	batch, n, _ := matrices(in[0].Shape())
	return forFloat(out.Dtype(),
		func() error { matrixExpKernel(e, batch, n, floats[float32](out), floats[float32](in[0])); return nil },
		func() error { matrixExpKernel(e, batch, n, floats[float64](out), floats[float64](in[0])); return nil })
}

// padé13 are the coefficients of the [13/13] Padé approximant of exp, and
// theta13 the 1-norm up to which it is exact in double precision (Higham
// 2005, table 2.3).
var padé13 = [14]float64{64764752532480000, 32382376266240000, 7771770303897600, 1187353796428800,
	129060195264000, 10559470521600, 670442572800, 33522128640, 1323241920, 40840800, 960960, 16380, 182, 1}

const theta13 = 5.371920351148152

// expScratch is the kernel's working memory, kept by the machine.
type expScratch[T float] struct {
	a, a2, a4, a6, u, v, t []T
	lu                     *luScratch[T]
}

type expKey[T float] struct{}

func matrixExpKernel[T float](e *graph.Exec, batch, n int, out, in []T) {
	s := e.State(expKey[T]{}, func() any { return new(expScratch[T]) }).(*expScratch[T])
	if cap(s.a) < n*n {
		for _, p := range []*[]T{&s.a, &s.a2, &s.a4, &s.a6, &s.u, &s.v, &s.t} {
			*p = make([]T, n*n)
		}
	}
	for _, p := range []*[]T{&s.a, &s.a2, &s.a4, &s.a6, &s.u, &s.v, &s.t} {
		*p = (*p)[:n*n]
	}
	s.lu = luScratchFor[T](e, n)
	for m := range batch {
		s.exp(out[m*n*n:(m+1)*n*n], in[m*n*n:(m+1)*n*n], n)
	}
}

// exp writes exp(x) into y: x scaled by 2⁻ˢ to a 1-norm of at most
// theta13, r = (V − U)⁻¹·(V + U) from the approximant's odd and even
// parts, and r squared s times.
func (s *expScratch[T]) exp(y, x []T, n int) {
	norm := 0.0
	for j := range n {
		col := 0.0
		for i := range n {
			col += math.Abs(float64(x[i*n+j]))
		}
		norm = max(norm, col)
	}
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		for i := range y {
			y[i] = T(math.NaN())
		}
		return
	}
	squarings := 0
	if norm > theta13 {
		squarings = int(math.Ceil(math.Log2(norm / theta13)))
	}
	scale := T(math.Ldexp(1, -squarings))
	for i := range x {
		s.a[i] = x[i] * scale
	}
	a, a2, a4, a6, u, v, t := s.a, s.a2, s.a4, s.a6, s.u, s.v, s.t
	matMulSmall(a2, a, a, n)
	matMulSmall(a4, a2, a2, n)
	matMulSmall(a6, a4, a2, n)
	b := func(k int) T { return T(padé13[k]) }
	// U = A·(A6·(b13·A6 + b11·A4 + b9·A2) + b7·A6 + b5·A4 + b3·A2 + b1·I),
	// V = A6·(b12·A6 + b10·A4 + b8·A2) + b6·A6 + b4·A4 + b2·A2 + b0·I.
	for i := range t {
		t[i] = b(13)*a6[i] + b(11)*a4[i] + b(9)*a2[i]
	}
	matMulSmall(u, a6, t, n)
	for i := range u {
		u[i] += b(7)*a6[i] + b(5)*a4[i] + b(3)*a2[i]
	}
	for i := range n {
		u[i*n+i] += b(1)
	}
	copy(t, u)
	matMulSmall(u, a, t, n)
	for i := range t {
		t[i] = b(12)*a6[i] + b(10)*a4[i] + b(8)*a2[i]
	}
	matMulSmall(v, a6, t, n)
	for i := range v {
		v[i] += b(6)*a6[i] + b(4)*a4[i] + b(2)*a2[i]
	}
	for i := range n {
		v[i*n+i] += b(0)
	}
	// (V − U)·R = V + U: V − U is the approximant's denominator, which
	// the scaling keeps well conditioned, so it has no zero pivot.
	for i := range t {
		t[i], y[i] = v[i]-u[i], v[i]+u[i]
	}
	s.lu.factor(t, n)
	s.lu.solve(y, n, n, false)
	for range squarings {
		copy(t, y)
		matMulSmall(y, t, t, n)
	}
}

// matMulSmall is c = a·b for n×n matrices, by the product kernel from
// the order where its blocking pays, by a direct loop below it.
func matMulSmall[T float](c, a, b []T, n int) {
	if n >= 32 {
		p := product[T]{m: n, n: n, k: n, a: a, b: b, c: c}
		p.run(nil)
		return
	}
	clear(c)
	for i := range n {
		ci := c[i*n : (i+1)*n]
		for k := range n {
			axpyRow(ci, a[i*n+k], b[k*n:(k+1)*n])
		}
	}
}

// Backward is A's gradient as the adjoint of the Fréchet derivative:
// the upper-right block of exp([[Aᵀ, G], [0, Aᵀ]]).
func (matrixExpOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{frechetExp(transposeMatrices(ctx.Input(0)), g)}
}

// JVP is the Fréchet derivative along the tangent: the upper-right block
// of exp([[A, dA], [0, A]]).
func (matrixExpOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil {
		return nil
	}
	return frechetExp(batchedPrimal(c, c.Input(0)), t)
}

// Batch exponentiates each example: the batch is one more leading axis.
func (op matrixExpOp) Batch(c *graph.BatchContext) *graph.Node { return leadingBatch(c, op) }

// frechetExp is the upper-right block of exp([[A, E], [0, A]]), the
// derivative of exp at A along E (batches of n×n matrices of one shape).
func frechetExp(a, e *graph.Node) *graph.Node {
	if p := graph.Poisoned(a, e); p != nil {
		return p
	}
	n := a.Shape()[a.Type().Rank()-1]
	zero := BroadcastTo(scalarLike(a, 0), a.Shape()...)
	block := Concat(-2, Concat(-1, a, e), Concat(-1, zero, a))
	return Slice(Slice(MatrixExp(block), -2, 0, n), -1, n, 2*n)
}

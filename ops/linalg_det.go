package ops

import (
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// detPart is what a determinant op returns of the LU factors: the
// determinant, its sign, or the log of its absolute value.
type detPart uint8

const (
	detValue detPart = iota
	detSign
	detLogAbs
)

var detNames = [...]string{detValue: "Det", detSign: "SlogDetSign", detLogAbs: "SlogDetLogAbs"}

// detOp computes one part of the determinant of each square matrix of its
// input from its LU factors (sign of the permutation times the product of
// U's diagonal), batched over the leading axes: (…, n, n) → (…).
type detOp struct {
	part     detPart
	factored bool // the input is the matrices' LUFactors
}

// Det returns the determinant of each square matrix of a (its last two
// axes), (…, n, n) → (…), by LU factorisation with partial pivoting:
// torch.linalg.det. A singular matrix has determinant 0; the gradient,
// det(A)·A⁻ᵀ, is built with Inverse, so at a singular matrix it is
// Inverse's run-time error rather than a value.
func Det(a *graph.Node) *graph.Node { return graph.Apply(detOp{part: detValue}, a) }

// SlogDet returns the sign (−1, 0 or 1) and the log of the absolute value
// of the determinant of each square matrix of a: torch.linalg.slogdet,
// which stays finite where the determinant overflows or underflows. A
// singular matrix has sign 0 and log |det| = −∞; the gradient of
// log |det A| is A⁻ᵀ, built with Inverse (so an error at a singular
// matrix), and the sign has none.
func SlogDet(a *graph.Node) (sign, logAbsDet *graph.Node) {
	return graph.Apply(detOp{part: detSign}, a), graph.Apply(detOp{part: detLogAbs}, a)
}

// Name is "Det", "SlogDetSign" or "SlogDetLogAbs".
func (op detOp) Name() string { return detNames[op.part] }

// Type drops the matrix axes of a batch of square matrices.
func (op detOp) Type(in []graph.Type) (graph.Type, error) {
	if _, err := graph.CheckInputs(in, 1); err != nil {
		return graph.Type{}, err
	}
	a, err := factoredInput(in[0], op.factored)
	if err != nil {
		return graph.Type{}, err
	}
	a, err = squareMatrices([]graph.Type{a})
	if err != nil {
		return graph.Type{}, err
	}
	return a.WithShape(a.Shape[:a.Rank()-2]...), nil
}

// Cost is 2n³/3 flops per matrix, n when factored.
func (op detOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	batch, n, _ := matrices(in[0].Shape)
	c.Flops = int64(batch) * int64(n)
	if !op.factored {
		c.Flops = 2 * int64(batch) * int64(n) * int64(n) * int64(n) / 3
	}
	return c
}

// Forward computes on the calling goroutine; see ForwardExec.
func (op detOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec factorises each matrix into the machine's scratch.
func (op detOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	batch, n, _ := matrices(in[0].Shape())
	return forFloat(out.Dtype(),
		func() error {
			detKernel(e, op, batch, n, floats[float32](out), floats[float32](in[0]))
			return nil
		},
		func() error {
			detKernel(e, op, batch, n, floats[float64](out), floats[float64](in[0]))
			return nil
		})
}

func detKernel[T float](e *graph.Exec, op detOp, batch, n int, out, a []T) {
	lu := luScratchFor[T](e, n)
	for m := range batch {
		sign, logAbs, det := 1.0, 0.0, 1.0
		if lu.prepare(a, m, n, op.factored) > 0 {
			sign, logAbs, det = 0, math.Inf(-1), 0
		} else {
			for i := range n {
				u := float64(lu.lu[i*n+i])
				if lu.piv[i] != i {
					sign, det = -sign, -det
				}
				if u < 0 {
					sign = -sign
				}
				logAbs += math.Log(math.Abs(u))
				det *= u
			}
		}
		switch op.part {
		case detValue:
			out[m] = T(det)
		case detSign:
			out[m] = T(sign)
		default:
			out[m] = T(logAbs)
		}
	}
}

// Backward: det's gradient is Ḡ·det(A)·A⁻ᵀ, log |det|'s is Ḡ·A⁻ᵀ
// (Giles 2008), each matrix scaled by its output's gradient; the sign is
// piecewise constant and has none.
func (op detOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	if op.part == detSign || op.factored { // a factored one is never differentiated
		return []*graph.Node{nil}
	}
	a := ctx.Input(0)
	scale := g
	if op.part == detValue {
		scale = Mul(g, ctx.Output())
	}
	return []*graph.Node{Mul(perMatrix(scale), transposeMatrices(Inverse(a)))}
}

// JVP is det(A)·tr(A⁻¹·dA) for det and tr(A⁻¹·dA) for log |det|;
// the sign's tangent is zero.
func (op detOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil || op.part == detSign || op.factored {
		return nil
	}
	r := t.Type().Rank()
	inv := batchedPrimal(c, transposeMatrices(Inverse(c.Input(0))))
	dt := Sum(Mul(inv, t), r-2, r-1) // tr(A⁻¹·dA) = Σ A⁻ᵀ ⊙ dA
	if op.part == detLogAbs {
		return dt
	}
	return Mul(dt, batchedPrimal(c, c.Output()))
}

// Batch takes each example's determinant: the batch is one more leading axis.
func (op detOp) Batch(c *graph.BatchContext) *graph.Node { return leadingBatch(c, op) }

// perMatrix reshapes a batch of scalars (…) to (…, 1, 1), to scale a batch
// of matrices by broadcasting.
func perMatrix(s *graph.Node) *graph.Node {
	if p := graph.Poisoned(s); p != nil {
		return p
	}
	return Reshape(s, append(append([]int(nil), s.Shape()...), 1, 1)...)
}

package ops

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// One LU factorisation shared by the solves, inverses and determinants of
// the same matrix: compiler passes replace each by its factored variant
// reading one LUFactors value (FactoredLU). The factored ops compute the
// very bits the plain ones do (the same factorisation, loaded instead of
// recomputed), fail as they fail at a singular matrix, and exist only in
// compiled programs: they are never differentiated.

type luFactorsOp struct{}

// LUFactorsOp returns the op that factorises each square matrix A of its
// input (…, n, n) with partial pivoting, P·A = L·U, into (…, n, n+1): in
// the first n columns L below the diagonal (its unit diagonal implied)
// and U on and above it, as LAPACK's getrf leaves them, and in the last
// column the pivots (row i swapped with row piv[i] at step i) as numbers.
// A singular matrix is no error here: the ops that read the factors
// report it, as the ops they replace do.
func LUFactorsOp() graph.Op { return luFactorsOp{} }

// Name is "LUFactors".
func (luFactorsOp) Name() string { return "LUFactors" }

// Type is (…, n, n+1) for a batch of square matrices (…, n, n).
func (luFactorsOp) Type(in []graph.Type) (graph.Type, error) {
	a, err := squareMatrices(in)
	if err != nil {
		return graph.Type{}, err
	}
	r := a.Rank()
	shape := append([]int(nil), a.Shape...)
	shape[r-1]++
	return a.WithShape(shape...), nil
}

// Cost is 2n³/3 flops per matrix.
func (luFactorsOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	batch, n, _ := matrices(in[0].Shape)
	c.Flops = 2 * int64(batch) * int64(n) * int64(n) * int64(n) / 3
	return c
}

// Forward factorises on the calling goroutine; see ForwardExec.
func (op luFactorsOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec factorises each matrix in the machine's scratch, as Solve,
// Inverse and Det do, and packs the factors and pivots into the output.
func (luFactorsOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	batch, n, _ := matrices(in[0].Shape())
	return forFloat(out.Dtype(),
		func() error { luFactorsKernel(e, batch, n, floats[float32](out), floats[float32](in[0])); return nil },
		func() error { luFactorsKernel(e, batch, n, floats[float64](out), floats[float64](in[0])); return nil })
}

func luFactorsKernel[T float](e *graph.Exec, batch, n int, out, a []T) {
	lu := luScratchFor[T](e, n)
	for m := range batch {
		lu.factor(a[m*n*n:(m+1)*n*n], n)
		f := out[m*n*(n+1) : (m+1)*n*(n+1)]
		for i := range n {
			copy(f[i*(n+1):i*(n+1)+n], lu.lu[i*n:(i+1)*n])
			f[i*(n+1)+n] = T(lu.piv[i])
		}
	}
}

// factoredInput is the type of the matrices whose factors an input of
// type t holds when factored, (…, n, n) for (…, n, n+1); otherwise t.
func factoredInput(t graph.Type, factored bool) (graph.Type, error) {
	if !factored {
		return t, nil
	}
	r := t.Rank()
	if r < 2 || t.Shape[r-1] != t.Shape[r-2]+1 {
		return graph.Type{}, fmt.Errorf("factors of shape %s: want (…, n, n+1)", graph.ShapeString(t.Shape))
	}
	shape := append([]int(nil), t.Shape...)
	shape[r-1]--
	return t.WithShape(shape...), nil
}

// FactoredLU returns, for the op of a Solve, an Inverse, a Det or either
// part of a SlogDet, the op that computes the same from its first input's
// LUFactors (the other inputs as they are), and true; for any other op,
// false.
func FactoredLU(op graph.Op) (graph.Op, bool) {
	switch o := op.(type) {
	case solveOp:
		if !o.factored {
			o.factored = true
			return o, true
		}
	case inverseOp:
		if !o.factored {
			return inverseOp{factored: true}, true
		}
	case detOp:
		if !o.factored {
			o.factored = true
			return o, true
		}
	}
	return nil, false
}

package ops_test

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// geluDeriv, the op of GELU's derivative, has derivatives that match
// finite differences to third order and a forward rule that gives its
// Jacobian (CheckOp), at points either side of 0 and in the tails.
func TestGELUDerivDerivatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	random := func(shape ...int) *tensor.Dense {
		return ops.UniformDense(rng, -4, 4, graph.Float64, shape...)
	}
	for _, shape := range [][]int{{7}, {2, 3}} {
		in := []*tensor.Dense{random(shape...)}
		g := graph.New()
		y := ops.GELUDeriv(g.Input("x", graph.Float64, shape...))
		if err := gradcheck.CheckOp(y.Op(), in, gradcheck.Options{}); err != nil {
			t.Fatalf("%v: %v", shape, err)
		}
		w, c := random(shape...), random(shape...)
		third := func(x []*graph.Node) *graph.Node { // second derivatives of ⟨c, ∇⟨w, f⟩⟩
			f := ops.GELUDeriv(x[0])
			grads, err := compile.Grad(ops.Sum(ops.Mul(f, f.Graph().Const(w))), x[0])
			if err != nil {
				return f.Graph().Fail(err)
			}
			return ops.Sum(ops.Mul(grads[0], f.Graph().Const(c)))
		}
		if err := gradcheck.GradGradCheck(third, in, gradcheck.Options{}); err != nil {
			t.Fatalf("%v: third order: %v", shape, err)
		}
	}
}

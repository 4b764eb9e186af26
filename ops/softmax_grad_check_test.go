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

// softmaxGrad, the op of softmax's gradient along the last axis, has
// derivatives in both its inputs (y, g) that match finite differences to
// third order, and a forward rule that gives its Jacobian (CheckOp).
func TestSoftmaxGradDerivatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	random := func(shape ...int) *tensor.Dense {
		return ops.UniformDense(rng, -1, 1, graph.Float64, shape...)
	}
	for _, shape := range [][]int{{5}, {2, 3}, {2, 1, 4}} {
		in := []*tensor.Dense{random(shape...), random(shape...)}
		g := graph.New()
		y := ops.SoftmaxGrad(g.Input("y", graph.Float64, shape...), g.Input("g", graph.Float64, shape...))
		if err := gradcheck.CheckOp(y.Op(), in, gradcheck.Options{}); err != nil {
			t.Fatalf("%v: %v", shape, err)
		}
		// Third order: second derivatives of ⟨c, ∇⟨w, f⟩⟩.
		w, c := random(shape...), random(shape...)
		third := func(x []*graph.Node) *graph.Node {
			f := ops.SoftmaxGrad(x[0], x[1])
			grads, err := compile.Grad(ops.Sum(ops.Mul(f, f.Graph().Const(w))), x...)
			if err != nil {
				return f.Graph().Fail(err)
			}
			cn := f.Graph().Const(c)
			return ops.Add(ops.Sum(ops.Mul(grads[0], cn)), ops.Sum(ops.Mul(grads[1], cn)))
		}
		if err := gradcheck.GradGradCheck(third, in, gradcheck.Options{}); err != nil {
			t.Fatalf("%v: third order: %v", shape, err)
		}
	}
}

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
	checkToThirdOrder(t, rng, -1, 1, [][]int{{5}, {2, 3}, {2, 1, 4}}, []string{"y", "g"},
		func(x []*graph.Node) *graph.Node { return ops.SoftmaxGrad(x[0], x[1]) })
}

// checkToThirdOrder checks, for each shape, the op that build makes of
// inputs of that shape (named names, float64, uniform in [lo, hi)): its
// forward rule against its Jacobian (CheckOp), and its derivatives to
// third order against finite differences, through the second derivatives
// of ⟨c, ∇⟨w, f⟩⟩ for random w and c.
func checkToThirdOrder(t *testing.T, rng *rand.Rand, lo, hi float64, shapes [][]int, names []string, build func([]*graph.Node) *graph.Node) {
	t.Helper()
	random := func(shape ...int) *tensor.Dense {
		return ops.UniformDense(rng, lo, hi, graph.Float64, shape...)
	}
	for _, shape := range shapes {
		in := make([]*tensor.Dense, len(names))
		for i := range in {
			in[i] = random(shape...)
		}
		g := graph.New()
		x := make([]*graph.Node, len(names))
		for i, name := range names {
			x[i] = g.Input(name, graph.Float64, shape...)
		}
		if err := gradcheck.CheckOp(build(x).Op(), in, gradcheck.Options{}); err != nil {
			t.Fatalf("%v: %v", shape, err)
		}
		w, c := random(shape...), random(shape...)
		third := func(x []*graph.Node) *graph.Node {
			f := build(x)
			grads, err := compile.Grad(ops.Sum(ops.Mul(f, f.Graph().Const(w))), x...)
			if err != nil {
				return f.Graph().Fail(err)
			}
			cn := f.Graph().Const(c)
			sum := ops.Sum(ops.Mul(grads[0], cn))
			for _, gr := range grads[1:] {
				sum = ops.Add(sum, ops.Sum(ops.Mul(gr, cn)))
			}
			return sum
		}
		if err := gradcheck.GradGradCheck(third, in, gradcheck.Options{}); err != nil {
			t.Fatalf("%v: third order: %v", shape, err)
		}
	}
}

package gradcheck_test

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// scanRows are loops through ops.Scan, checked like the built-in ops'
// rows: first and second derivatives (Check, GradGradCheck) and third
// (GradGradCheck of the gradient), every input differentiated.
func scanRows() []opCase {
	v := newValues(11)
	nodes := func(xs ...*graph.Node) []*graph.Node { return xs }
	return []opCase{
		{Builder: "Scan", Variant: "tanh RNN with matrix products", Inputs: []*tensor.Dense{
			v.Signed(2, 3), v.Uniform(-0.6, 0.6, 3, 3), v.Uniform(-0.6, 0.6, 2, 3), v.Signed(4, 2, 2)},
			Build: func(in []*graph.Node) *graph.Node {
				W, U := in[1], in[2]
				_, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					h := ops.Tanh(ops.Add(ops.MatMul(c[0], W), ops.MatMul(x[0], U)))
					return nodes(h), nodes(h)
				}, nodes(in[0]), nodes(in[3]))
				return ys[0]
			}},
		{Builder: "Scan", Variant: "carried tuple with gates", Inputs: []*tensor.Dense{
			v.Signed(3), v.Signed(3), v.Signed(5, 3), v.Signed(3)},
			Build: func(in []*graph.Node) *graph.Node {
				w := in[3]
				final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					cell := ops.Add(ops.Mul(ops.Sigmoid(x[0]), c[1]), ops.Mul(ops.Sigmoid(ops.Mul(c[0], w)), ops.Tanh(x[0])))
					h := ops.Mul(ops.Sigmoid(ops.Add(x[0], c[0])), ops.Tanh(cell))
					return nodes(h, cell), nil
				}, nodes(in[0], in[1]), nodes(in[2]))
				return ops.Concat(0, final[0], final[1])
			}},
		{Builder: "Scan", Variant: "reverse, two sequences", Inputs: []*tensor.Dense{
			v.Signed(2), v.Signed(4, 2), v.Signed(4, 2)},
			Build: func(in []*graph.Node) *graph.Node {
				_, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					s := ops.Add(ops.Mul(c[0], x[0]), ops.Sin(x[1]))
					return nodes(s), nodes(ops.Mul(s, x[1]))
				}, nodes(in[0]), nodes(in[1], in[2]), ops.Reverse())
				return ys[0]
			}},
		{Builder: "Scan", Variant: "no carry (a map) reading a captured value", Inputs: []*tensor.Dense{
			v.Signed(3, 2), v.Signed(2)},
			Build: func(in []*graph.Node) *graph.Node {
				_, ys := ops.Scan(func(_, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					return nil, nodes(ops.Mul(ops.Mul(x[0], x[0]), ops.Exp(ops.Scale(in[1], 0.5))))
				}, nil, nodes(in[0]))
				return ys[0]
			}},
		{Builder: "Scan", Variant: "Steps without sequences (an integrator)", Inputs: []*tensor.Dense{
			v.Signed(2), v.Uniform(0.5, 1.5)},
			Build: func(in []*graph.Node) *graph.Node {
				k := in[1]
				final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
					x, vel := ops.Slice(c[0], 0, 0, 1), ops.Slice(c[0], 0, 1, 2)
					acc := ops.Neg(ops.Mul(k, ops.Sin(x)))
					return nodes(ops.Concat(0, ops.Add(x, ops.Scale(vel, 0.1)), ops.Add(vel, ops.Scale(acc, 0.1)))), nil
				}, nodes(in[0]), nil, ops.Steps(6))
				return final[0]
			}},
		{Builder: "Scan", Variant: "nested Scan", Inputs: []*tensor.Dense{
			v.Signed(2), v.Signed(3, 2), v.Signed(2, 2)},
			Build: func(in []*graph.Node) *graph.Node {
				inner := in[2]
				final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					f, _ := ops.Scan(func(ci, xi []*graph.Node) ([]*graph.Node, []*graph.Node) {
						return nodes(ops.Tanh(ops.Add(ops.Mul(ci[0], xi[0]), x[0]))), nil
					}, nodes(c[0]), nodes(inner))
					return nodes(f[0]), nil
				}, nodes(in[0]), nodes(in[1]))
				return final[0]
			}},
	}
}

func TestScanRows(t *testing.T) {
	for _, c := range scanRows() {
		t.Run(c.Variant, func(t *testing.T) {
			if err := gradcheck.Check(c.Build, c.Inputs, gradcheck.Options{}); err != nil {
				t.Fatalf("first order: %v", err)
			}
			if err := gradcheck.GradGradCheck(c.Build, c.Inputs, gradcheck.Options{}); err != nil {
				t.Fatalf("second order: %v", err)
			}
			if err := gradcheck.GradGradCheck(thirdOrder(c), c.Inputs, gradcheck.Options{}); err != nil {
				t.Fatalf("third order: %v", err)
			}
		})
	}
}

package gradcheck_test

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Check a function of two inputs built from built-in ops, to first and
// second order.
func Example() {
	x, _ := graph.FromFloat64s(graph.Float64, []float64{0.5, -1, 2, 0.25, 1.5, -0.75}, 2, 3)
	w, _ := graph.FromFloat64s(graph.Float64, []float64{1, -2, 0.5}, 3)
	fn := func(in []*graph.Node) *graph.Node {
		// A softmax over a weighted tanh, summed per row: a (2) output.
		return ops.Sum(ops.Mul(ops.Softmax(ops.Tanh(ops.Mul(in[0], in[1])), 1), in[0]), 1)
	}
	inputs := []*tensor.Dense{x, w}
	fmt.Println("first order:", gradcheck.Check(fn, inputs, gradcheck.Options{}))
	fmt.Println("second order:", gradcheck.GradGradCheck(fn, inputs, gradcheck.Options{}))
	// Output:
	// first order: <nil>
	// second order: <nil>
}

// cubeOp is a custom op: x³ elementwise. Its Backward is written with graph
// ops, so it can be differentiated again.
type cubeOp struct{}

func (cubeOp) Name() string { return "Cube" }

func (cubeOp) Type(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 1); err != nil {
		return graph.Type{}, err
	}
	return in[0], nil
}

func (cubeOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	o := out.Float64s()
	for i, v := range in[0].Float64s() {
		o[i] = v * v * v
	}
	return nil
}

// Backward: d(x³)/dx = 3x².
func (cubeOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{ops.Mul(g, ops.Scale(ops.Square(ctx.Input(0)), 3))}
}

// wrongCubeOp's Backward forgets the factor 3.
type wrongCubeOp struct{ cubeOp }

func (wrongCubeOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{ops.Mul(g, ops.Square(ctx.Input(0)))}
}

// Check a custom op: its kernel, its Backward's result and its first and
// second derivatives.
func ExampleCheckOp() {
	x, _ := graph.FromFloat64s(graph.Float64, []float64{0.5, -1, 2}, 3)
	fmt.Println(gradcheck.CheckOp(cubeOp{}, []*tensor.Dense{x}, gradcheck.Options{}))
	fmt.Println(gradcheck.CheckOp(wrongCubeOp{}, []*tensor.Dense{x}, gradcheck.Options{}))
	// Output:
	// <nil>
	// gradcheck: CheckOp(Cube): first derivative: d out / d in0 differs from finite differences at 3 of 9 entries (eps 1e-06, atol 1e-05, rtol 0.001)
	// 	d out[2] / d in0[2]: analytic 4, numeric 12
	// 	d out[1] / d in0[1]: analytic 1, numeric 3
	// 	d out[0] / d in0[0]: analytic 0.25, numeric 0.75
}

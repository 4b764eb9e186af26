package ops

import (
	"fmt"
	"math"

	"github.com/nabla-go/nabla/graph"
)

// Activations of convolutional and transformer networks, as PyTorch
// defines them. Erf, GELU and SiLU are rows of the unary table rather
// than compositions of other ops: one pass over memory into one buffer
// (GELU composed is six ops, each writing a tensor, and SiLU two), and
// in place when the input dies there. Their derivatives are built from
// ops, so they differentiate to any order.

const (
	sqrtHalf   = 0.70710678118654752440 // 1/√2
	invSqrt2Pi = 0.39894228040143267794 // 1/√(2π)
	twoSqrtPi  = 1.12837916709551257390 // 2/√π
	geluBeta   = 0.79788456080286535588 // √(2/π)
	geluKappa  = 0.044715
)

// Erf returns the error function of x elementwise.
func Erf(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: erfKind}, x) }

// GELU returns x·Φ(x) elementwise, Φ the standard normal distribution
// function: 0.5·x·(1+erf(x/√2)). With tanhApprox it returns PyTorch's
// approximate="tanh" form, 0.5·x·(1+tanh(√(2/π)·(x+0.044715·x³))).
func GELU(x *graph.Node, tanhApprox bool) *graph.Node {
	if tanhApprox {
		return graph.Apply(unary{kind: geluTanhKind}, x)
	}
	return graph.Apply(unary{kind: geluKind}, x)
}

// SiLU returns x·sigmoid(x) elementwise (also called swish).
func SiLU(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: siluKind}, x) }

// Flatten returns x with its axes from startDim (negative: counted from
// the end) merged into one, as PyTorch's flatten(x, start_dim); nn.Flatten
// uses startDim 1, keeping the batch axis.
func Flatten(x *graph.Node, startDim int) *graph.Node {
	if p := poisoned("Flatten", x); p != nil {
		return p
	}
	shape := x.Shape()
	axis, err := graph.NormalizeAxis(startDim, max(len(shape), 1))
	if err != nil {
		return graph.Apply(shapeError{name: "Flatten", want: fmt.Sprintf("a start axis in [%d, %d)", -max(len(shape), 1), max(len(shape), 1))}, x)
	}
	out := append([]int(nil), shape[:min(axis, len(shape))]...)
	out = append(out, graph.ShapeSize(shape[min(axis, len(shape)):]))
	if len(out) > 1 && graph.ShapeSize(out[1:]) > 0 {
		out[0] = -1 // the batch: so that the graph runs at any batch size (vm.Runner)
	}
	return Reshape(x, out...)
}

func erfGrad(x, _, g *graph.Node, _ float64) *graph.Node {
	return Mul(g, Scale(Exp(Neg(Square(x))), twoSqrtPi)) // 2/√π·e^-x²
}

func gelu(x, _ float64) float64 { return x * 0.5 * (1 + math.Erf(x*sqrtHalf)) }

// geluGrad is g·(Φ(x) + x·φ(x)), φ the normal density: the derivative is
// one op, geluDeriv.
func geluGrad(x, _, g *graph.Node, _ float64) *graph.Node { return Mul(g, geluDeriv(x)) }

func geluTanh(x, _ float64) float64 {
	return 0.5 * x * (1 + math.Tanh(geluBeta*(x+geluKappa*x*x*x)))
}

// geluTanhGrad is 0.5·(1+t) + 0.5·x·(1-t²)·β·(1+3κx²), with t =
// tanh(β·(x+κx³)).
func geluTanhGrad(x, _, g *graph.Node, _ float64) *graph.Node {
	one := scalarLike(x, 1)
	x2 := Square(x)
	t := Tanh(Scale(Mul(x, Add(one, Scale(x2, geluKappa))), geluBeta))
	du := Scale(Add(one, Scale(x2, 3*geluKappa)), geluBeta)
	d := Add(Add(one, t), Mul(Mul(x, Sub(one, Square(t))), du))
	return Mul(g, Scale(d, 0.5))
}

func silu(x, _ float64) float64 { return x * sigmoid(x, 0) }

// siluGrad is σ + y·(1-σ), with y = x·σ the output.
func siluGrad(x, y, g *graph.Node, _ float64) *graph.Node {
	s := Sigmoid(x)
	return Mul(g, Add(s, Mul(y, Sub(scalarLike(x, 1), s))))
}

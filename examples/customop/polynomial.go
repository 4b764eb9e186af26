package main

import (
	"math"
	"strconv"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// PolynomialOp is the elementwise op y = c₀ + c₁x + c₂x² + … . Its
// coefficients are a slice, so the type is not comparable: Key encodes
// them, and polynomials with equal coefficients merge while others never
// do.
type PolynomialOp struct {
	Coeffs []float64
}

// Polynomial returns c₀ + c₁x + c₂x² + … elementwise (0 with no
// coefficients).
func Polynomial(x *graph.Node, coeffs ...float64) *graph.Node {
	return graph.Apply(PolynomialOp{Coeffs: coeffs}, x)
}

// Key encodes every coefficient exactly (its bits, in hex).
func (p PolynomialOp) Key() string {
	var b strings.Builder
	for _, c := range p.Coeffs {
		b.WriteString(strconv.FormatUint(math.Float64bits(c), 16))
		b.WriteByte(',')
	}
	return b.String()
}

// Name is "Polynomial".
func (PolynomialOp) Name() string { return "Polynomial" }

// Type: one float input; the output has its type.
func (PolynomialOp) Type(in []graph.Type) (graph.Type, error) {
	return elementwiseType(in)
}

// Forward evaluates the polynomial by Horner's rule.
func (p PolynomialOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	if out.Dtype() == graph.Float32 {
		horner(out.Float32s(), in[0].Float32s(), p.Coeffs)
	} else {
		horner(out.Float64s(), in[0].Float64s(), p.Coeffs)
	}
	return nil
}

func horner[T float32 | float64](y, x []T, coeffs []float64) {
	for i, v := range x {
		var s T
		for k := len(coeffs) - 1; k >= 0; k-- {
			s = s*v + T(coeffs[k])
		}
		y[i] = s
	}
}

// Backward: dy/dx is the derivative polynomial, c₁ + 2c₂x + … , itself a
// PolynomialOp: each derivative is built from a custom op whose Backward
// builds the next, to any order.
func (p PolynomialOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	var d []float64
	for k := 1; k < len(p.Coeffs); k++ {
		d = append(d, float64(k)*p.Coeffs[k])
	}
	return []*graph.Node{ops.Mul(g, Polynomial(ctx.Input(0), d...))}
}

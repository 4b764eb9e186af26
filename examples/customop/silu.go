package main

import (
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// SiLUOp is the activation y = x·σ(x) with a fused numeric backward
// kernel, dy/dx = σ(x)·(1 + x·(1 − σ(x))), in place of a symbolic
// Backward: it is once-differentiable. Its first derivative works like any
// op's; asking for a second is an error naming it.
type SiLUOp struct{}

// SiLU returns x·σ(x) elementwise.
func SiLU(x *graph.Node) *graph.Node { return graph.Apply(SiLUOp{}, x) }

// Name is "SiLU".
func (SiLUOp) Name() string { return "SiLU" }

// Type: one float input; the output has its type.
func (SiLUOp) Type(in []graph.Type) (graph.Type, error) { return elementwiseType(in) }

// Forward computes x·σ(x).
func (SiLUOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	if out.Dtype() == graph.Float32 {
		silu(out.Float32s(), in[0].Float32s())
	} else {
		silu(out.Float64s(), in[0].Float64s())
	}
	return nil
}

func silu[T float32 | float64](y, x []T) {
	for i, v := range x {
		y[i] = v * T(sigmoid(float64(v)))
	}
}

// Gradient is the backward kernel: grads[0] = gradOut·σ(x)·(1 + x·(1 − σ(x))).
// grads[0] is nil when x needs no gradient.
func (SiLUOp) Gradient(grads []*tensor.Dense, gradOut *tensor.Dense, in []*tensor.Dense, _ *tensor.Dense) error {
	if grads[0] == nil {
		return nil
	}
	if gradOut.Dtype() == graph.Float32 {
		siluGradient(grads[0].Float32s(), gradOut.Float32s(), in[0].Float32s())
	} else {
		siluGradient(grads[0].Float64s(), gradOut.Float64s(), in[0].Float64s())
	}
	return nil
}

func siluGradient[T float32 | float64](dx, g, x []T) {
	for i, v := range x {
		s := T(sigmoid(float64(v)))
		dx[i] = g[i] * s * (1 + v*(1-s))
	}
}

// sigmoid is 1/(1+e⁻ˣ), without overflow for large |x|.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

package main

import (
	"fmt"
	"math"
	"strconv"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// MulConstant is the op y = x·c. The constant c is a non-tensor parameter:
// a field of the op, part of its identity (MulConstant{2} and
// MulConstant{3} never merge), and it gets no gradient.
type MulConstant struct {
	C float64
}

// MulConst returns x·c.
func MulConst(x *graph.Node, c float64) *graph.Node {
	return graph.Apply(MulConstant{C: c}, x)
}

// Name is "MulConstant".
func (MulConstant) Name() string { return "MulConstant" }

// Type: one float input; the output has its type.
func (MulConstant) Type(in []graph.Type) (graph.Type, error) { return elementwiseType(in) }

// elementwiseType is the type inference of the example's elementwise ops:
// one float input, whose type the output has.
func elementwiseType(in []graph.Type) (graph.Type, error) {
	if _, err := graph.CheckInputs(in, 1); err != nil {
		return graph.Type{}, err
	}
	return in[0], nil
}

// Forward writes x·c into out, in the dtype of the run.
func (op MulConstant) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	if out.Dtype() == graph.Float32 {
		scale(out.Float32s(), in[0].Float32s(), float32(op.C))
	} else {
		scale(out.Float64s(), in[0].Float64s(), op.C)
	}
	return nil
}

func scale[T float32 | float64](y, x []T, c T) {
	for i, v := range x {
		y[i] = v * c
	}
}

// JVP is the forward-mode rule (PyTorch's Function.jvp): the tangent
// times c. Scaling is elementwise, so it holds for batched tangents too.
func (op MulConstant) JVP(ctx *graph.JVPContext) *graph.Node {
	if t := ctx.Tangent(0); t != nil {
		return MulConst(t, op.C)
	}
	return nil
}

// CUDA is the GPU kernel (graph.CUDAKernel): one work item per element,
// the constant written into the source as a literal, rounded to the dtype
// as Forward rounds it.
func (op MulConstant) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if math.IsInf(op.C, 0) || math.IsNaN(op.C) {
		return nil, fmt.Errorf("no C literal for %v", op.C) // runs on the host
	}
	c := strconv.FormatFloat(op.C, 'e', -1, 64)
	return []graph.CUDASource{{N: int64(out[0].Size()), Body: "out0[i] = in0[i] * (T)" + c + ";"}}, nil
}

// InPlace lets the compiler write y over x when nothing reads x later:
// scale reads each element before writing it.
func (MulConstant) InPlace() int { return 0 }

// DotLabel shows the constant in DOT drawings, e.g. "MulConstant ×2.5".
func (op MulConstant) DotLabel() string { return fmt.Sprintf("MulConstant ×%g", op.C) }

// Backward: dL/dx = g·c. It is built with MulConstant itself, so the
// gradient can be differentiated again.
func (op MulConstant) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{MulConst(g, op.C)}
}

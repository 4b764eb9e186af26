package nn

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
	"github.com/nabla-go/nabla/ops"
)

// LinearFunction is the op y = x·Wᵀ + b of a fully connected layer: x is a
// batch of rows (batch, in), W the weights (out, in) and b an optional bias
// (out). It takes two inputs (x, W) or three (x, W, b), PyTorch's
// bias=None. It is the worked example of docs/extending.md: a custom op
// with a forward kernel and a symbolic Backward built from other ops, so
// it can be differentiated to any order.
type LinearFunction struct{}

// LinearFunc returns x·Wᵀ + b for x (batch, in), w (out, in) and b (out);
// b may be nil for a layer without bias.
func LinearFunc(x, w, b *graph.Node) *graph.Node {
	if b == nil {
		return graph.Apply(LinearFunction{}, x, w)
	}
	return graph.Apply(LinearFunction{}, x, w, b)
}

// Name is "LinearFunction".
func (LinearFunction) Name() string { return "LinearFunction" }

// Type checks x (batch, in), W (out, in) and the optional b (out), all of
// one dtype, and infers y (batch, out).
func (LinearFunction) Type(in []graph.Type) (graph.Type, error) {
	if len(in) != 2 && len(in) != 3 {
		return graph.Type{}, fmt.Errorf("takes 2 inputs (x, W) or 3 (x, W, b), got %d", len(in))
	}
	dtype, err := graph.SameDType(in)
	if err != nil {
		return graph.Type{}, err
	}
	x, w := in[0], in[1]
	if x.Rank() != 2 || w.Rank() != 2 {
		return graph.Type{}, fmt.Errorf("x %s and W %s must be matrices (batch, in) and (out, in)",
			graph.ShapeString(x.Shape), graph.ShapeString(w.Shape))
	}
	if x.Shape[1] != w.Shape[1] {
		return graph.Type{}, fmt.Errorf("x has %d features but W %s expects %d",
			x.Shape[1], graph.ShapeString(w.Shape), w.Shape[1])
	}
	if len(in) == 3 && (in[2].Rank() != 1 || in[2].Shape[0] != w.Shape[0]) {
		return graph.Type{}, fmt.Errorf("bias %s does not match W %s: want (%d)",
			graph.ShapeString(in[2].Shape), graph.ShapeString(w.Shape), w.Shape[0])
	}
	return graph.TypeOf(dtype, x.Shape[0], w.Shape[0]), nil
}

// Cost is the product's 2·batch·out·in flops, plus one add per output
// element for the bias.
func (LinearFunction) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	c.Flops = 2 * int64(out.Size()) * int64(in[0].Shape[1])
	if len(in) == 3 {
		c.Flops += int64(out.Size())
	}
	return c
}

// Forward computes x·Wᵀ + b on the calling goroutine; see ForwardExec.
func (f LinearFunction) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return f.ForwardExec(nil, out, in)
}

// ForwardExec computes x·Wᵀ with MatMul's kernel (W transposed in place,
// not copied), on e's threads, and adds the bias to every row.
func (LinearFunction) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	if err := (ops.MatMulOp{TransB: true}).ForwardExec(e, out, in[:2]); err != nil {
		return err
	}
	if len(in) == 3 {
		if out.Dtype() == graph.Float32 {
			addRows(out.Float32s(), in[2].Float32s())
		} else {
			addRows(out.Float64s(), in[2].Float64s())
		}
	}
	return nil
}

// addRows adds b to each consecutive row of y, a row at a time in vek's
// vector loop (y[j] + b[j], the scalar loop's sums).
func addRows[T float32 | float64](y, b []T) {
	if len(b) == 0 {
		return
	}
	for r := 0; r+len(b) <= len(y); r += len(b) {
		row := y[r : r+len(b)]
		vek.VV(vek.Add, row, row, b)
	}
}

// Backward gives, for y = x·Wᵀ + b and g = dL/dy: dL/dx = g·W,
// dL/dW = gᵀ·x and dL/db = the sum of g over the batch. It builds only the
// gradients asked for, with graph ops, so they can be differentiated again.
func (LinearFunction) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	grads := make([]*graph.Node, len(ctx.Inputs()))
	x, w := ctx.Input(0), ctx.Input(1)
	if ctx.NeedsGrad(0) {
		grads[0] = ops.MatMul(g, w)
	}
	if ctx.NeedsGrad(1) {
		grads[1] = ops.MatMulT(g, x, true, false)
	}
	if ctx.NeedsGrad(2) {
		grads[2] = ops.Sum(g, 0)
	}
	return grads
}

// Decompose is x·Wᵀ + b in built-in ops (graph.Decomposer): one matrix
// product, the bias added by the product itself, which is how a GPU
// machine runs the layer (cuBLAS's product, no kernel of its own).
func (LinearFunction) Decompose(in []*graph.Node) ([]*graph.Node, error) {
	if len(in) == 3 {
		return []*graph.Node{ops.MatMulAdd(in[0], in[1], in[2], false, true)}, nil
	}
	return []*graph.Node{ops.MatMulT(in[0], in[1], false, true)}, nil
}

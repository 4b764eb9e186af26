package gradcheck_test

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// sinCosNoBackward computes sin(x) and cos(x) in one kernel.
type sinCosNoBackward struct{}

func (sinCosNoBackward) Name() string { return "SinCos" }

func (sinCosNoBackward) Types(in []graph.Type) ([]graph.Type, error) {
	return []graph.Type{in[0], in[0]}, nil
}

func (sinCosNoBackward) Forward(out []*tensor.Dense, in []*tensor.Dense) error {
	for i, v := range in[0].Float64s() {
		out[0].Float64s()[i], out[1].Float64s()[i] = math.Sincos(v)
	}
	return nil
}

// sinCos adds a Backward; with cosSign -1 it is right, with +1 the
// gradient through the cos output has the wrong sign.
type sinCos struct {
	sinCosNoBackward
	cosSign float64
}

func (op sinCos) Backward(ctx *graph.GradContext, gradOuts []*graph.Node) []*graph.Node {
	x := ctx.Input(0)
	var grad *graph.Node
	add := func(term *graph.Node) {
		if grad == nil {
			grad = term
		} else {
			grad = ops.Add(grad, term)
		}
	}
	if gradOuts[0] != nil {
		add(ops.Mul(gradOuts[0], ops.Cos(x)))
	}
	if gradOuts[1] != nil {
		add(ops.Scale(ops.Mul(gradOuts[1], ops.Sin(x)), op.cosSign))
	}
	return []*graph.Node{grad}
}

func TestCheckMultiOp(t *testing.T) {
	x := newValues(10).Signed(2, 3)
	if err := gradcheck.CheckMultiOp(sinCos{cosSign: -1}, []*tensor.Dense{x}, gradcheck.Options{}); err != nil {
		t.Fatalf("right op: got %v, want no error", err)
	}
	err := gradcheck.CheckMultiOp(sinCos{cosSign: 1}, []*tensor.Dense{x}, gradcheck.Options{})
	e := asCheckError(t, err)
	if e.Func != "CheckMultiOp" || e.Problem != gradcheck.FirstDerivative || e.Input != 0 || e.Output != 1 ||
		!strings.Contains(err.Error(), "d out1 / d in0 differs") || !strings.Contains(err.Error(), "d out1[") {
		t.Fatalf("wrong op: got %v, want a first-derivative mismatch of output 1", err)
	}
	if err := gradcheck.CheckMultiOp(sinCosNoBackward{}, []*tensor.Dense{x}, gradcheck.Options{Inputs: []int{}}); err != nil {
		t.Fatalf("kernel alone: got %v, want no error", err)
	}
}

// TestMultiOpInFunction: a function that uses one output of a multi-output
// op blames the op when its Backward is wrong.
func TestMultiOpInFunction(t *testing.T) {
	x := newValues(11).Signed(3)
	fn := func(in []*graph.Node) *graph.Node {
		outs := graph.ApplyMulti(sinCos{cosSign: 1}, ops.Scale(in[0], 2))
		return ops.Mul(outs[1], outs[1])
	}
	e := asCheckError(t, gradcheck.Check(fn, []*tensor.Dense{x}, gradcheck.Options{}))
	if e.Culprit == nil || e.Culprit.Op != "SinCos" || e.Culprit.Err.Output != 1 {
		t.Fatalf("got %v, want SinCos blamed for its output 1", e)
	}
}

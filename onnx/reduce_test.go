package onnx_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"gorgonia.org/tensor"
)

// noReduction are the Reduce ops with what each computes where it reduces
// nothing: ONNX's reference implementation (onnx.reference) and ONNX
// Runtime apply the elementwise steps around the sum (ReduceSumSquare's
// square, ReduceL2's square and square root, ReduceLogSum's logarithm),
// not the identity that noop_with_empty_axes's description suggests.
var noReduction = map[string]func(float64) float64{
	"ReduceSumSquare": func(x float64) float64 { return x * x },
	"ReduceL1":        math.Abs,
	"ReduceL2":        func(x float64) float64 { return math.Sqrt(x * x) },
	"ReduceLogSum":    math.Log,
	"ReduceLogSumExp": func(x float64) float64 { return x },
	"ReduceSum":       func(x float64) float64 { return x },
	"ReduceMean":      func(x float64) float64 { return x },
	"ReduceMax":       func(x float64) float64 { return x },
	"ReduceMin":       func(x float64) float64 { return x },
}

// TestReduceNothing reduces over no axis, with noop_with_empty_axes 1 and
// no axes (opset 18), and reduces a scalar (opset 13), and compares with
// the values derived by hand from the reference implementation's formulas
// (x², |x|, √x², log x, …) and, when it is installed, with ONNX Runtime.
// Import returned x itself for empty axes, and for a scalar the square
// alone of ReduceL2 (4 for -2) and x of ReduceLogSum (-2, not NaN).
func TestReduceNothing(t *testing.T) {
	vals := []float64{-2, 0.5, 3, 1e200, -0.25, math.Inf(-1)}
	x, _ := graph.FromFloat64s(graph.Float64, vals, 2, 3)
	s := graph.NewDense(graph.Float64)
	s.Set(0, -2.0)
	ort, haveORT := onnxRuntimeIfPresent()
	for op, f := range noReduction {
		for _, c := range []struct {
			name  string
			opset int64
			attrs []*onnxpb.AttributeProto
			in    *tensor.Dense
		}{
			{"empty axes", 18, []*onnxpb.AttributeProto{attrI("noop_with_empty_axes", 1)}, x},
			{"scalar", 13, nil, s},
		} {
			data := oneNodeModel(op, c.opset, c.attrs, []operand{{shape: c.in.Shape()}})
			m, err := onnx.Import(data, onnx.Options{})
			if err != nil {
				t.Fatalf("%s, %s: %v", op, c.name, err)
			}
			got, err := runModel(m, []*tensor.Dense{c.in})
			if err != nil {
				t.Fatalf("%s, %s: %v", op, c.name, err)
			}
			in := graph.Float64s(c.in)
			want := make([]float64, len(in))
			for i, v := range in {
				want[i] = f(v)
			}
			wantT, _ := graph.FromFloat64s(graph.Float64, want, c.in.Shape()...)
			if err := closeTo(got[0], wantT, 1e-15, 0); err != nil {
				t.Errorf("%s, %s: %v", op, c.name, err)
			}
			if !haveORT {
				continue
			}
			path := filepath.Join(t.TempDir(), "model.onnx")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			byORT := runORT(t, ort, path, graph.Float64, map[string]ortInput{"x0": {"float64", c.in.Shape(), ortFloats(in)}})
			if err := closeTo(byORT["y"], wantT, 1e-15, 0); err != nil {
				t.Errorf("%s, %s: ONNX Runtime: %v", op, c.name, err)
			}
		}
	}
	if !haveORT {
		t.Log("onnxruntime-node not found: compared with the hand-derived values only")
	}
}

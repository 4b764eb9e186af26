package onnx_test

import (
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
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

// reductions is a model of one Reduce node per op, each reading the
// float64 graph input x0 of the given shape (and the int64 initializer
// axes when axes is not nil) and writing the output named by its op.
func reductions(ops []string, opset int64, attrs []*onnxpb.AttributeProto, shape []int, axes []int64) []byte {
	g := &onnxpb.GraphProto{Name: proto.String("reductions"), Input: []*onnxpb.ValueInfoProto{tensorInfo("x0", onnxpb.TensorProto_DOUBLE, shape...)}}
	in := []string{"x0"}
	if axes != nil {
		g.Initializer = []*onnxpb.TensorProto{{Name: proto.String("axes"), DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Dims: []int64{int64(len(axes))}, Int64Data: axes}}
		in = append(in, "axes")
	}
	for _, op := range ops {
		g.Node = append(g.Node, &onnxpb.NodeProto{OpType: proto.String(op), Input: in, Output: []string{op}, Attribute: attrs})
		g.Output = append(g.Output, &onnxpb.ValueInfoProto{Name: proto.String(op)})
	}
	data, err := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(opset)}}, Graph: g})
	if err != nil {
		panic(err)
	}
	return data
}

// checkReductions runs a model of reductions on x, under nabla and, when
// it is installed, under ONNX Runtime, and compares each op's output with
// want's.
func checkReductions(t *testing.T, name string, data []byte, x *tensor.Dense, want map[string]*tensor.Dense) {
	t.Helper()
	m, err := onnx.Import(data, onnx.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got, err := runModel(m, []*tensor.Dense{x})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i, op := range m.OutputNames {
		if err := closeTo(got[i], want[op], 1e-15, 0); err != nil {
			t.Errorf("%s, %s: %v", op, name, err)
		}
	}
	ort, ok := onnxRuntimeIfPresent()
	if !ok {
		t.Logf("%s: onnxruntime-node not found: compared with the hand-derived values only", name)
		return
	}
	path := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	byORT := runORT(t, ort, path, graph.Float64, map[string]ortInput{"x0": {"float64", x.Shape(), ortFloats(graph.Float64s(x))}})
	for op, w := range want {
		if err := closeTo(byORT[op], w, 1e-15, 0); err != nil {
			t.Errorf("%s, %s: ONNX Runtime: %v", op, name, err)
		}
	}
}

// TestReduceNothing reduces over no axis, with noop_with_empty_axes 1 and
// no axes (opset 18), and reduces a scalar (opset 13), and compares with
// the values derived by hand from the reference implementation's formulas
// (x², |x|, √x², log x, …) and, when it is installed, with ONNX Runtime.
// Import returned x itself for empty axes, and for a scalar the square
// alone of ReduceL2 (4 for -2) and x of ReduceLogSum (-2, not NaN).
func TestReduceNothing(t *testing.T) {
	x, _ := graph.FromFloat64s(graph.Float64, []float64{-2, 0.5, 3, 1e200, -0.25, math.Inf(-1)}, 2, 3)
	s := graph.NewDense(graph.Float64)
	s.Set(0, -2.0)
	ops := slices.Sorted(maps.Keys(noReduction))
	for _, c := range []struct {
		name  string
		opset int64
		attrs []*onnxpb.AttributeProto
		in    *tensor.Dense
	}{
		{"empty axes", 18, []*onnxpb.AttributeProto{attrI("noop_with_empty_axes", 1)}, x},
		{"scalar", 13, nil, s},
	} {
		want := map[string]*tensor.Dense{}
		for op, f := range noReduction {
			in := graph.Float64s(c.in)
			w := make([]float64, len(in))
			for i, v := range in {
				w[i] = f(v)
			}
			want[op], _ = graph.FromFloat64s(graph.Float64, w, c.in.Shape()...)
		}
		checkReductions(t, c.name, reductions(ops, c.opset, c.attrs, c.in.Shape(), nil), c.in, want)
	}
}

// TestReduceEmptySet reduces (2,0,3) over its empty axis 1: ONNX's
// reference implementation and ONNX Runtime give 0 for the sums, -∞ for
// ReduceLogSum, ReduceLogSumExp and ReduceMax, +∞ for ReduceMin (of
// int64s, the dtype's extremes), values derived by hand here and, when
// it is installed, compared with ONNX Runtime's. Import refused ReduceMax
// and ReduceMin ("maximum over axes [1] of zero elements is undefined");
// a mean of nothing, which ONNX leaves undefined, stays refused.
func TestReduceEmptySet(t *testing.T) {
	inf := math.Inf(1)
	want := map[string]*tensor.Dense{}
	for op, v := range map[string]float64{
		"ReduceSumSquare": 0, "ReduceL1": 0, "ReduceL2": 0, "ReduceSum": 0,
		"ReduceLogSum": -inf, "ReduceLogSumExp": -inf, "ReduceMax": -inf, "ReduceMin": inf,
	} {
		want[op], _ = graph.FromFloat64s(graph.Float64, []float64{v, v, v, v, v, v}, 2, 1, 3)
	}
	data := reductions(slices.Sorted(maps.Keys(want)), 18, nil, []int{2, 0, 3}, []int64{1})
	checkReductions(t, "axis 1 of (2,0,3)", data, graph.NewDense(graph.Float64, 2, 0, 3), want)
	for op, want := range map[string]int64{"ReduceMax": math.MinInt64, "ReduceMin": math.MaxInt64} {
		m, err := onnx.Import(oneNodeModel(op, 18, []*onnxpb.AttributeProto{attrI("keepdims", 0)}, []operand{{shape: []int{0}, ints: []int64{}}}), onnx.Options{})
		if err != nil {
			t.Errorf("%s of int64: %v", op, err)
			continue
		}
		got, err := runModel(m, nil)
		if err != nil {
			t.Errorf("%s of int64: %v", op, err)
		} else if v := got[0].Int64s(); len(v) != 1 || v[0] != want || got[0].Dims() != 0 {
			t.Errorf("%s of int64: got %v %v, want [%d] of shape ()", op, got[0].Shape(), v, want)
		}
	}
	_, err := onnx.Import(oneNodeModel("ReduceMean", 18, nil, []operand{{shape: []int{2, 0, 3}}, ints(1)}), onnx.Options{})
	if want := "Mean: mean over axes [1] of zero elements is undefined"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ReduceMean: got %v, want an error containing %q", err, want)
	}
}

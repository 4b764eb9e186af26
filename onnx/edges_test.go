package onnx_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
	"gorgonia.org/tensor"
)

// importRun imports a one-node model and runs it on the given inputs.
func importRun(t *testing.T, data []byte, inputs ...*tensor.Dense) []float64 {
	t.Helper()
	m, err := onnx.Import(data, onnx.Options{})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	out, err := runModel(m, inputs)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return graph.Float64s(out[0])
}

// TestSliceHugeSteps slices (10 11 12 13 14) with steps near ±2⁶³, which
// ONNX allows (one element, the first): the index arithmetic must not
// wrap. The wanted values are numpy's x[start:end:step].
func TestSliceHugeSteps(t *testing.T) {
	x, err := graph.FromFloat64s(graph.Float64, []float64{10, 11, 12, 13, 14}, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		start, end, step int64
		want             []float64
	}{
		{1, math.MaxInt64, math.MaxInt64, []float64{11}},
		{0, 5, math.MaxInt64 - 1, []float64{10}},
		{4, 5, math.MaxInt64, []float64{14}},
		{-100, math.MaxInt64, 2, []float64{10, 12, 14}},
		{3, math.MinInt64, math.MinInt64, []float64{13}},
		{math.MaxInt64, math.MinInt64, -math.MaxInt64, []float64{14}},
		{-1, -6, -2, []float64{14, 12, 10}},
	} {
		data := oneNodeModel("Slice", 17, nil, []operand{{shape: []int{5}}, ints(c.start), ints(c.end), ints(0), ints(c.step)})
		if got := importRun(t, data, x); !slices.Equal(got, c.want) {
			t.Errorf("case [%d:%d:%d]: got %v, want %v", c.start, c.end, c.step, got, c.want)
		}
	}
}

// TestArgMaxErrors: an ArgMax over an empty axis, of a scalar, or along
// an axis out of range, is an error that says which.
func TestArgMaxErrors(t *testing.T) {
	for _, c := range []struct {
		shape []int
		axis  int64
		want  string
	}{
		{[]int{2, 0}, 1, "node ArgMax (unnamed, output \"y\"), opset 17: axis 1 of float64(2,0) is empty: no element is the extreme"},
		{[]int{}, 0, "input float64() is a scalar: want an axis to search"},
		{[]int{2, 3}, 2, "input float64(2,3): axis 2 out of range for rank 2"},
	} {
		_, err := onnx.Import(oneNodeModel("ArgMax", 17, []*onnxpb.AttributeProto{attrI("axis", c.axis)}, []operand{{shape: c.shape}}), onnx.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "<nil>") {
			t.Errorf("case %v axis %d: got %v, want an error containing %q", c.shape, c.axis, err, c.want)
		}
	}
}

// TestAttributeOfAnotherType: an attribute read as another type than the
// one it holds (Softmax's axis as a FLOAT, Transpose's perm as an INT,
// Constant's value as an INT) is the node's error; it read as zero, a
// softmax over axis 0 and a transpose that reversed the axes, without a
// word. An attribute without a type (IR 1) holding the field wanted is
// read.
func TestAttributeOfAnotherType(t *testing.T) {
	axisF := &onnxpb.AttributeProto{Name: proto.String("axis"), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(1)}
	permI := &onnxpb.AttributeProto{Name: proto.String("perm"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(1)}
	valueI := &onnxpb.AttributeProto{Name: proto.String("value"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(3)}
	valueNone := &onnxpb.AttributeProto{Name: proto.String("value"), Type: onnxpb.AttributeProto_TENSOR.Enum()}
	x := []operand{{shape: []int{2, 3}}}
	for _, c := range []struct {
		op   string
		attr *onnxpb.AttributeProto
		in   []operand
		want string
	}{
		{"Softmax", axisF, x, `node Softmax (unnamed, output "y"), opset 17: attribute "axis" is of type FLOAT, want INT`},
		{"Transpose", permI, x, `node Transpose (unnamed, output "y"), opset 17: attribute "perm" is of type INT, want INTS`},
		// These two were nil dereferences: "internal error: runtime error".
		{"Constant", valueI, nil, `node Constant (unnamed, output "y"), opset 17: attribute "value" is of type INT, want TENSOR`},
		{"ConstantOfShape", valueNone, []operand{ints(2, 3)}, `node ConstantOfShape (unnamed, output "y"), opset 17: no tensor`},
	} {
		_, err := onnx.Import(oneNodeModel(c.op, 17, []*onnxpb.AttributeProto{c.attr}, c.in), onnx.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.op, err, c.want)
		}
	}
	// Softmax over axis 0 of an untyped attribute holding 0: each column
	// of (1 2 3; 1 2 3) is (½, ½).
	untyped := &onnxpb.AttributeProto{Name: proto.String("axis"), I: proto.Int64(0)}
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 1, 2, 3}, 2, 3)
	if got := importRun(t, oneNodeModel("Softmax", 17, []*onnxpb.AttributeProto{untyped}, x), xv); !slices.Equal(got, []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}) {
		t.Errorf("Softmax of an untyped axis 0: got %v, want ½ everywhere", got)
	}
}

// TestHugeAxesOfEmptyTensors: an axis of 2⁴⁰ in a tensor with another
// axis empty takes no memory, but the positions, indices or copies Import
// builds along it would take 8 TiB: each is an error naming the memory
// limit. Import allocated them, and the process ended (fatal error: out of
// memory) on a model of a few bytes (a stepped Slice appended its 2³⁹
// indices one by one until it did).
func TestHugeAxesOfEmptyTensors(t *testing.T) {
	const big = 1 << 40
	scan := func() []byte { // scanModel's input x reversed along an axis of 2⁴⁰, the state empty
		var mp onnxpb.ModelProto
		if err := proto.Unmarshal(scanModel(), &mp); err != nil {
			t.Fatal(err)
		}
		for i, dims := range [][]int64{{0}, {0, big}, {0}} {
			shape := mp.Graph.Input[i].Type.GetTensorType().Shape
			shape.Dim = shape.Dim[:0]
			for _, d := range dims {
				shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
			}
		}
		b, _ := proto.Marshal(&mp)
		return b
	}
	for _, c := range []struct {
		op   string
		data []byte
		want string
	}{
		{"ArgMax", oneNodeModel("ArgMax", 17, nil, []operand{{shape: []int{big, 0}}}), "1099511627776 positions along an axis: float64(1099511627776) needs 8796093022208 bytes"},
		{"Hardmax", oneNodeModel("Hardmax", 17, []*onnxpb.AttributeProto{attrI("axis", 0)}, []operand{{shape: []int{big, 0}}}), "1099511627776 positions along an axis"},
		{"OneHot", oneNodeModel("OneHot", 17, nil, []operand{{shape: []int{0}}, ints(big), ints(0, 1)}), "1099511627776 positions along an axis"},
		{"Pad", oneNodeModel("Pad", 17, []*onnxpb.AttributeProto{attrS("mode", "edge")}, []operand{{shape: []int{2, 0}}, ints(big, 0, 0, 0)}), "edge padding (1099511627776, 0) of axis 0: int64(1099511627776) needs 8796093022208 bytes"},
		{"Scan", scan(), "1099511627776 positions along an axis"},
		{"Slice", oneNodeModel("Slice", 17, nil, []operand{{shape: []int{big, 0}}, ints(0), ints(big), ints(0), ints(2)}), "549755813888 indices of a stepped slice: int64(549755813888) needs 4398046511104 bytes"},
	} {
		_, err := onnx.Import(c.data, onnx.Options{})
		if err == nil || !strings.Contains(err.Error(), "node "+c.op) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "over the memory limit") {
			t.Errorf("%s: got %v, want an error containing %q", c.op, err, c.want)
		}
	}
}

// TestSplitOutputs: a Split's num_outputs, or its list of sizes, must
// match its outputs; num_outputs 2⁴⁰ on a node of one output made 2⁴⁰
// parts (the process ran out of memory), and extra sizes were dropped.
func TestSplitOutputs(t *testing.T) {
	for _, c := range []struct {
		attrs []*onnxpb.AttributeProto
		in    []operand
		want  string
	}{
		{[]*onnxpb.AttributeProto{attrI("num_outputs", 1<<40)}, []operand{{shape: []int{4}}}, "num_outputs 1099511627776 for 1 outputs"},
		{[]*onnxpb.AttributeProto{attrI("num_outputs", 0)}, []operand{{shape: []int{4}}}, "num_outputs 0 for 1 outputs"},
		{nil, []operand{{shape: []int{4}}, ints(1, 1, 2)}, "split [1 1 2] has 3 sizes for 1 outputs"},
	} {
		_, err := onnx.Import(oneNodeModel("Split", 18, c.attrs, c.in), onnx.Options{})
		if err == nil || !strings.Contains(err.Error(), `node Split (unnamed, output "y"), opset 18: `+c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
	x, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4}, 4)
	if got := importRun(t, oneNodeModel("Split", 18, []*onnxpb.AttributeProto{attrI("num_outputs", 1)}, []operand{{shape: []int{4}}}), x); !slices.Equal(got, []float64{1, 2, 3, 4}) {
		t.Errorf("a Split into one part: got %v, want [1 2 3 4]", got)
	}
}

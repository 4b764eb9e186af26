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

// asFloat32 makes a oneNodeModel's graph inputs float32.
func asFloat32(t *testing.T, data []byte) []byte {
	t.Helper()
	m := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, m); err != nil {
		t.Fatal(err)
	}
	for _, in := range m.GetGraph().GetInput() {
		in.GetType().GetTensorType().ElemType = proto.Int32(int32(onnxpb.TensorProto_FLOAT))
	}
	out, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLayerNormStashType: stash_type DOUBLE computes a float32 input's
// mean and variance in float64, as ONNX asks. Of 10000, 10000.01,
// 10000.02 and 10000.03 in float32 the float32 statistics are 0.02 off
// (-1.2533 for -1.2745); the reference is computed here in float64.
func TestLayerNormStashType(t *testing.T) {
	x := make([]float64, 4)
	for k := range x {
		x[k] = float64(float32(10000 + 0.01*float64(k)))
	}
	mean := (x[0] + x[1] + x[2] + x[3]) / 4
	variance := 0.0
	for _, v := range x {
		variance += (v - mean) * (v - mean) / 4
	}
	xv, _ := graph.FromFloat64s(graph.Float32, x, 4)
	ones, _ := graph.FromFloat64s(graph.Float32, []float64{1, 1, 1, 1}, 4)
	data := asFloat32(t, oneNodeModel("LayerNormalization", 17, []*onnxpb.AttributeProto{attrI("stash_type", int64(onnxpb.TensorProto_DOUBLE))},
		[]operand{{shape: []int{4}}, {shape: []int{4}}}))
	got := importRun(t, data, xv, ones)
	for i, v := range x {
		want := (v - mean) / math.Sqrt(variance+1e-5)
		if math.Abs(got[i]-want) > 1e-6 {
			t.Errorf("y[%d] = %v, want %v", i, got[i], want)
		}
	}
}

// TestLegacyBroadcast: before opset 7, Add's B broadcasts onto A from
// A's axis; aligned with A's last axes (axis = A's rank minus B's), that
// is numpy's broadcasting: (1 2 3; 4 5 6) + (10 20 30).
func TestLegacyBroadcast(t *testing.T) {
	a, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	b, _ := graph.FromFloat64s(graph.Float64, []float64{10, 20, 30}, 3)
	data := oneNodeModel("Add", 6, []*onnxpb.AttributeProto{attrI("broadcast", 1), attrI("axis", 1)}, []operand{{shape: []int{2, 3}}, {shape: []int{3}}})
	if got, want := importRun(t, data, a, b), []float64{11, 22, 33, 14, 25, 36}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestOpsetDefaults: attributes absent take their opset's default:
// Concat's axis is 1 before opset 4 ((1; 2) and (3; 4) side by side, not
// stacked), Selu's alpha and gamma 1.6732 and 1.0507 before opset 6
// (then 1.67326… and 1.05070…). Import took the newest defaults.
func TestOpsetDefaults(t *testing.T) {
	a, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2}, 2, 1)
	b, _ := graph.FromFloat64s(graph.Float64, []float64{3, 4}, 2, 1)
	col := []operand{{shape: []int{2, 1}}, {shape: []int{2, 1}}}
	if got, want := importRun(t, oneNodeModel("Concat", 3, nil, col), a, b), []float64{1, 3, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("Concat at opset 3: got %v, want %v", got, want)
	}
	if got, want := importRun(t, oneNodeModel("Concat", 4, []*onnxpb.AttributeProto{attrI("axis", 0)}, col), a, b), []float64{1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("Concat at opset 4: got %v, want %v", got, want)
	}
	x, _ := graph.FromFloat64s(graph.Float64, []float64{-1, 2}, 2)
	for _, c := range []struct {
		opset        int64
		alpha, gamma float64
	}{{5, 1.6732, 1.0507}, {6, 1.67326319217681884765625, 1.05070102214813232421875}} {
		got := importRun(t, oneNodeModel("Selu", c.opset, nil, []operand{{shape: []int{2}}}), x)
		want := []float64{c.gamma * c.alpha * (math.Exp(-1) - 1), c.gamma * 2}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-15 {
				t.Errorf("Selu at opset %d: y[%d] = %v, want %v", c.opset, i, got[i], want[i])
			}
		}
	}
}

// TestInconsistentAttributes: a Constant of two values, a Conv whose
// kernel_shape is not its weight's, and a 2-D ConvTranspose's
// output_padding of one value are errors; Import took the first value,
// padded SAME for the kernel_shape while convolving with the weight, and
// padded the last axis alone.
func TestInconsistentAttributes(t *testing.T) {
	for _, c := range []struct {
		op    string
		attrs []*onnxpb.AttributeProto
		in    []operand
		want  string
	}{
		{"Constant", []*onnxpb.AttributeProto{attrI("value_int", 3),
			{Name: proto.String("value_float"), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(2)}},
			nil, `node Constant (unnamed, output "y"), opset 17: attributes [value_int value_float]: a Constant takes one value`},
		{"Conv", []*onnxpb.AttributeProto{attrS("auto_pad", "SAME_UPPER"), {Name: proto.String("kernel_shape"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{2, 2}}},
			[]operand{{shape: []int{1, 1, 4, 4}}, {shape: []int{1, 1, 3, 3}}}, `node Conv (unnamed, output "y"), opset 17: kernel_shape [2 2] differs from the weight's spatial shape [3 3]`},
		{"ConvTranspose", []*onnxpb.AttributeProto{{Name: proto.String("strides"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{2, 2}},
			{Name: proto.String("output_padding"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{1}}},
			[]operand{{shape: []int{1, 1, 3, 3}}, {shape: []int{1, 1, 3, 3}}}, `node ConvTranspose (unnamed, output "y"), opset 17: output_padding [1] for 2 spatial axes`},
	} {
		_, err := onnx.Import(oneNodeModel(c.op, 17, c.attrs, c.in), onnx.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.op, err, c.want)
		}
	}
}

// TestOpset1PadAndReshape: opset 1's Pad takes its pads as the paddings
// attribute (each axis's begin, then each axis's end) and Reshape its
// shape as the shape attribute, with consumed_inputs beside it; Import
// refused both. The wanted values are written out by hand from
// x = (1 2 3; 4 5 6).
func TestOpset1PadAndReshape(t *testing.T) {
	x, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	ints := func(name string, v ...int64) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
	}
	for _, c := range []struct {
		name  string
		op    string
		attrs []*onnxpb.AttributeProto
		shape []int
		want  []float64
	}{
		// One row before, two columns after, filled with 9.
		{"Pad constant", "Pad", []*onnxpb.AttributeProto{ints("paddings", 1, 0, 0, 2),
			{Name: proto.String("value"), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(9)}},
			[]int{3, 5}, []float64{9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9}},
		// One column before, one row after, copying the edge.
		{"Pad edge", "Pad", []*onnxpb.AttributeProto{ints("paddings", 0, 1, 1, 0), attrS("mode", "edge")},
			[]int{3, 4}, []float64{1, 1, 2, 3, 4, 4, 5, 6, 4, 4, 5, 6}},
		// Two columns before, one after, mirrored: 3 2 | 1 2 3 | 2.
		{"Pad reflect", "Pad", []*onnxpb.AttributeProto{ints("paddings", 0, 2, 0, 1), attrS("mode", "reflect")},
			[]int{2, 6}, []float64{3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}},
		{"Reshape -1", "Reshape", []*onnxpb.AttributeProto{ints("shape", 3, -1), ints("consumed_inputs", 1)},
			[]int{3, 2}, []float64{1, 2, 3, 4, 5, 6}},
		{"Reshape 0", "Reshape", []*onnxpb.AttributeProto{ints("shape", 0, 3, 1)},
			[]int{2, 3, 1}, []float64{1, 2, 3, 4, 5, 6}},
	} {
		m, err := onnx.Import(oneNodeModel(c.op, 1, c.attrs, []operand{{shape: []int{2, 3}}}), onnx.Options{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got, err := runModel(m, []*tensor.Dense{x})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(got[0].Shape(), c.shape) || !slices.Equal(graph.Float64s(got[0]), c.want) {
			t.Errorf("%s: got %v %v, want %v %v", c.name, got[0].Shape(), graph.Float64s(got[0]), c.shape, c.want)
		}
	}
}

package onnx_test

import (
	"math"
	"slices"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
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

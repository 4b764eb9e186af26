package onnx_test

import (
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
	"google.golang.org/protobuf/proto"
	"gorgonia.org/tensor"
)

// recurrentModel is a float64 model of one recurrent node whose inputs
// X, W, R, B and initial_h are graph inputs of the given shapes.
func recurrentModel(op string, attrs []*onnxpb.AttributeProto, shapes [][]int) *onnxpb.ModelProto {
	names := []string{"X", "W", "R", "B", "", "initial_h"}
	g := &onnxpb.GraphProto{Name: proto.String("rnn")}
	et := int32(onnxpb.TensorProto_DOUBLE)
	info := func(name string, shape []int) *onnxpb.ValueInfoProto {
		var dims []*onnxpb.TensorShapeProto_Dimension
		for _, d := range shape {
			dims = append(dims, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
		}
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
			TensorType: &onnxpb.TypeProto_Tensor{ElemType: &et, Shape: &onnxpb.TensorShapeProto{Dim: dims}}}}}
	}
	k := 0
	for _, name := range names {
		if name != "" {
			g.Input = append(g.Input, info(name, shapes[k]))
			k++
		}
	}
	g.Node = []*onnxpb.NodeProto{{OpType: proto.String(op), Input: names, Output: []string{"Y", "Y_h"}, Attribute: attrs}}
	g.Output = []*onnxpb.ValueInfoProto{{Name: proto.String("Y")}, {Name: proto.String("Y_h")}}
	return &onnxpb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(17)}}, Graph: g}
}

// TestImportedRecurrentLayersDifferentiate checks the gradients of
// imported bidirectional LSTM, GRU and RNN layers, with respect to every
// input and weight, against finite differences.
func TestImportedRecurrentLayersDifferentiate(t *testing.T) {
	const T, B, I, H = 3, 2, 3, 2
	str := func(name string, v ...string) *onnxpb.AttributeProto {
		a := &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRINGS.Enum()}
		for _, s := range v {
			a.Strings = append(a.Strings, []byte(s))
		}
		if len(v) == 1 {
			a.Type, a.Strings, a.S = onnxpb.AttributeProto_STRING.Enum(), nil, []byte(v[0])
		}
		return a
	}
	for _, c := range []struct {
		op    string
		gates int
		attrs []*onnxpb.AttributeProto
	}{
		{"LSTM", 4, nil},
		{"GRU", 3, []*onnxpb.AttributeProto{{Name: proto.String("linear_before_reset"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(1)}}},
		{"GRU", 3, nil},
		{"RNN", 1, []*onnxpb.AttributeProto{str("activations", "Relu", "Tanh")}},
	} {
		attrs := append([]*onnxpb.AttributeProto{str("direction", "bidirectional")}, c.attrs...)
		shapes := [][]int{{T, B, I}, {2, c.gates * H, I}, {2, c.gates * H, H}, {2, 2 * c.gates * H}, {2, B, H}}
		data, err := proto.Marshal(recurrentModel(c.op, attrs, shapes))
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(11, 12))
		var values []*tensor.Dense
		for _, s := range shapes {
			values = append(values, randDense(r, s...))
		}
		weights := [2]*tensor.Dense{randDense(r, T, 2, B, H), randDense(r, 2, B, H)}
		names := []string{"X", "W", "R", "B", "initial_h"}
		fn := func(in []*graph.Node) *graph.Node {
			g := in[0].Graph()
			bind := map[string]*graph.Node{}
			for i, n := range in {
				bind[names[i]] = n
			}
			m, err := onnx.Import(data, onnx.Options{Graph: g, Inputs: bind})
			if err != nil {
				return g.Fail(err)
			}
			return ops.Add(ops.Sum(ops.Mul(m.Outputs[0], g.Const(weights[0]))), ops.Sum(ops.Mul(m.Outputs[1], g.Const(weights[1]))))
		}
		if err := gradcheck.Check(fn, values, gradcheck.Options{}); err != nil {
			t.Errorf("%s %v: %v", c.op, c.attrs, err)
		}
	}
}

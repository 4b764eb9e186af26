package onnx_test

import (
	"fmt"
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

// operand is an input of a one-node test model: a float64 graph input of
// the given shape (checked by gradcheck), or, when ints is set, an int64
// initializer.
type operand struct {
	shape []int
	ints  []int64
}

func ints(v ...int64) operand { return operand{shape: []int{len(v)}, ints: v} }

func attrI(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func attrS(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

// oneNodeModel is a float64 model of one node whose float operands are
// graph inputs x0, x1, ... and integer ones initializers.
func oneNodeModel(op string, opset int64, attrs []*onnxpb.AttributeProto, in []operand) []byte {
	g := &onnxpb.GraphProto{Name: proto.String(op)}
	et := int32(onnxpb.TensorProto_DOUBLE)
	var names []string
	for i, o := range in {
		name := fmt.Sprintf("x%d", i)
		names = append(names, name)
		if o.ints != nil {
			t, _ := graph.FromInt64s(graph.Int64, o.ints, o.shape...)
			raw := make([]byte, 0, 8*len(o.ints))
			for _, v := range t.Int64s() {
				raw = append(raw, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
			}
			dims := make([]int64, len(o.shape))
			for k, d := range o.shape {
				dims[k] = int64(d)
			}
			g.Initializer = append(g.Initializer, &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Dims: dims, RawData: raw})
			continue
		}
		var dims []*onnxpb.TensorShapeProto_Dimension
		for _, d := range o.shape {
			dims = append(dims, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
		}
		g.Input = append(g.Input, &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
			TensorType: &onnxpb.TypeProto_Tensor{ElemType: &et, Shape: &onnxpb.TensorShapeProto{Dim: dims}}}}})
	}
	g.Node = []*onnxpb.NodeProto{{OpType: proto.String(op), Input: names, Output: []string{"y"}, Attribute: attrs}}
	g.Output = []*onnxpb.ValueInfoProto{{Name: proto.String("y")}}
	data, err := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(opset)}}, Graph: g})
	if err != nil {
		panic(err)
	}
	return data
}

// TestImportedOpsDifferentiate checks, against finite differences, the
// gradients of imported ops that Import builds from several nabla ops.
func TestImportedOpsDifferentiate(t *testing.T) {
	cases := []struct {
		op    string
		opset int64
		attrs []*onnxpb.AttributeProto
		in    []operand
	}{
		{"Gemm", 17, []*onnxpb.AttributeProto{attrI("transA", 1), {Name: proto.String("alpha"), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(0.5)}}, []operand{{shape: []int{3, 2}}, {shape: []int{3, 4}}, {shape: []int{4}}}},
		{"MatMul", 17, nil, []operand{{shape: []int{2, 1, 2, 3}}, {shape: []int{3, 3, 2}}}},
		{"Softmax", 11, []*onnxpb.AttributeProto{attrI("axis", 1)}, []operand{{shape: []int{2, 2, 3}}}},
		{"LayerNormalization", 17, []*onnxpb.AttributeProto{attrI("axis", -2)}, []operand{{shape: []int{2, 3, 2}}, {shape: []int{3, 2}}, {shape: []int{3, 2}}}},
		{"InstanceNormalization", 17, nil, []operand{{shape: []int{2, 2, 3}}, {shape: []int{2}}, {shape: []int{2}}}},
		{"BatchNormalization", 15, nil, []operand{{shape: []int{2, 2, 3}}, {shape: []int{2}}, {shape: []int{2}}, {shape: []int{2}}, {shape: []int{2}}}},
		{"Pad", 17, []*onnxpb.AttributeProto{attrS("mode", "reflect")}, []operand{{shape: []int{2, 3}}, ints(1, 2, 0, 1)}},
		{"Pad", 17, []*onnxpb.AttributeProto{attrS("mode", "edge")}, []operand{{shape: []int{2, 3}}, ints(0, 1, 2, -1)}},
		{"MaxPool", 17, []*onnxpb.AttributeProto{{Name: proto.String("kernel_shape"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{2, 2}}, attrS("auto_pad", "SAME_UPPER")}, []operand{{shape: []int{1, 2, 3, 3}}}},
		{"AveragePool", 17, []*onnxpb.AttributeProto{{Name: proto.String("kernel_shape"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{3}}, {Name: proto.String("pads"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{2, 1}}}, []operand{{shape: []int{1, 2, 4}}}},
		{"Resize", 17, []*onnxpb.AttributeProto{attrS("mode", "cubic")}, []operand{{shape: []int{1, 1, 3, 2}}, {shape: []int{0}}, {shape: []int{0}}, ints(1, 1, 5, 3)}},
		{"GatherElements", 17, []*onnxpb.AttributeProto{attrI("axis", 1)}, []operand{{shape: []int{2, 3}}, {shape: []int{2, 2}, ints: []int64{0, -1, 2, 2}}}},
		{"CumSum", 17, []*onnxpb.AttributeProto{attrI("exclusive", 1), attrI("reverse", 1)}, []operand{{shape: []int{2, 3}}, ints(1)}},
		{"SoftmaxCrossEntropyLoss", 17, []*onnxpb.AttributeProto{attrI("ignore_index", 1)}, []operand{{shape: []int{3, 4, 2}}, {shape: []int{3, 2}, ints: []int64{0, 1, 3, 2, 1, 0}}, {shape: []int{4}}}},
		{"PRelu", 17, nil, []operand{{shape: []int{2, 3}}, {shape: []int{3}}}},
		{"Selu", 17, nil, []operand{{shape: []int{5}}}},
		{"Gelu", 20, []*onnxpb.AttributeProto{attrS("approximate", "tanh")}, []operand{{shape: []int{4}}}},
		{"Tile", 17, nil, []operand{{shape: []int{2, 1}}, ints(2, 3)}},
		{"Trilu", 17, []*onnxpb.AttributeProto{attrI("upper", 0)}, []operand{{shape: []int{3, 3}}}},
		{"ReduceL2", 17, []*onnxpb.AttributeProto{{Name: proto.String("axes"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{0}}}, []operand{{shape: []int{2, 3}}}},
	}
	for _, c := range cases {
		data := oneNodeModel(c.op, c.opset, c.attrs, c.in)
		r := rand.New(rand.NewPCG(21, 22))
		var values []*tensor.Dense
		var names []string
		for i, o := range c.in {
			if o.ints == nil {
				v := randDense(r, o.shape...)
				if c.op == "BatchNormalization" && i == 4 { // a variance
					for k := range v.Float64s() {
						v.Float64s()[k] = 1 + v.Float64s()[k]*v.Float64s()[k]
					}
				}
				values = append(values, v)
				names = append(names, fmt.Sprintf("x%d", i))
			}
		}
		m0, err := onnx.Import(data, onnx.Options{})
		if err != nil {
			t.Errorf("%s: %v", c.op, err)
			continue
		}
		weights := randDense(r, m0.Outputs[0].Shape()...)
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
			return ops.Sum(ops.Mul(m.Outputs[0], g.Const(weights)))
		}
		if err := gradcheck.Check(fn, values, gradcheck.Options{}); err != nil {
			t.Errorf("%s %v: %v", c.op, c.attrs, err)
		}
	}
}

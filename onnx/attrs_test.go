package onnx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
	"google.golang.org/protobuf/proto"
)

// arg is a node's input in nodeModel: a float32 graph input of a shape,
// an initializer of int64s or float32s, or absent.
type arg struct {
	shape  []int64
	ints   []int64
	floats []float32
	absent bool
}

func graphIn(shape ...int64) arg  { return arg{shape: shape} }
func initInts(v ...int64) arg     { return arg{ints: v} }
func initFloats(v ...float32) arg { return arg{floats: v} }

var absent = arg{absent: true}

func dimsOf(shape []int64) []*onnxpb.TensorShapeProto_Dimension {
	var dims []*onnxpb.TensorShapeProto_Dimension
	for _, d := range shape {
		dims = append(dims, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
	}
	return dims
}

// nodeModel is a model of one node of op at opset, output "y".
func nodeModel(op string, opset int64, attrs []*onnxpb.AttributeProto, args ...arg) *onnxpb.ModelProto {
	g := &onnxpb.GraphProto{Name: proto.String(op)}
	n := &onnxpb.NodeProto{OpType: proto.String(op), Output: []string{"y"}, Attribute: attrs}
	for i, a := range args {
		name := fmt.Sprintf("x%d", i)
		switch {
		case a.absent:
			name = ""
		case a.ints != nil:
			g.Initializer = append(g.Initializer, &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)),
				Dims: []int64{int64(len(a.ints))}, Int64Data: a.ints})
		case a.floats != nil:
			g.Initializer = append(g.Initializer, &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)),
				Dims: []int64{int64(len(a.floats))}, FloatData: a.floats})
		default:
			g.Input = append(g.Input, &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
				TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Shape: &onnxpb.TensorShapeProto{Dim: dimsOf(a.shape)}}}}})
		}
		n.Input = append(n.Input, name)
	}
	g.Node = []*onnxpb.NodeProto{n}
	g.Output = []*onnxpb.ValueInfoProto{{Name: proto.String("y")}}
	return &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g,
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}}}
}

func intAttr(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func floatAttr(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

func stringAttr(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func intsAttr(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

func stringsAttr(name string, v ...string) *onnxpb.AttributeProto {
	a := &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRINGS.Enum()}
	for _, s := range v {
		a.Strings = append(a.Strings, []byte(s))
	}
	return a
}

// TestUnknownAttributesRefused: every supported op refuses an attribute
// it does not implement, naming the node, the opset, the attribute and
// the ones implemented; each was ignored, and the node built as if it
// were absent.
func TestUnknownAttributesRefused(t *testing.T) {
	for _, op := range keys(importers) {
		_, err := ImportProto(nodeModel(op, 17, []*onnxpb.AttributeProto{intAttr("bogus", 1)}), "", Options{}) // refused before its inputs are read
		want := fmt.Sprintf(`nabla: onnx.Import: node %s (unnamed, output "y"), opset 17: unsupported: attribute "bogus" (implemented for %s at opset 17: `, op, op)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: got %v, want an error starting %q", op, err, want)
		}
	}
	_, err := ImportProto(nodeModel("Gemm", 17, []*onnxpb.AttributeProto{intAttr("transC", 1), intAttr("transA", 0)}), "", Options{})
	want := `node Gemm (unnamed, output "y"), opset 17: unsupported: attribute "transC" (implemented for Gemm at opset 17: alpha, beta, transA, transB) at `
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Gemm: got %v, want an error containing %q", err, want)
	}
	_, err = ImportProto(nodeModel("Relu", 17, []*onnxpb.AttributeProto{intAttr("alpha", 1), intAttr("beta", 1)}), "", Options{})
	want = `unsupported: attributes "alpha", "beta" (implemented for Relu at opset 17: none)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Relu: got %v, want an error containing %q", err, want)
	}
}

// TestUnimplementedAttributeValuesRefused: attributes ONNX defines whose
// values (other than the default) Import does not implement, or that
// ONNX defines only at other opsets, are refused, naming the value and
// those implemented. Those marked silent imported before without a word:
// the node built as if the attribute were absent (or, for Conv's group 0
// and LSTM's layout 2, as if it were 1); the same node without the
// attribute imports.
func TestUnimplementedAttributeValuesRefused(t *testing.T) {
	x4 := graphIn(1, 2, 4, 4)
	rnn := func(gates int64) []arg {
		return []arg{graphIn(2, 1, 3), graphIn(1, gates*2, 3), graphIn(1, gates*2, 2)}
	}
	bn := []arg{x4, graphIn(2), graphIn(2), graphIn(2), graphIn(2)}
	resize13 := []arg{x4, absent, initFloats(1, 1, 2, 2)}
	kernel := intsAttr("kernel_shape", 2, 2)
	for _, c := range []struct {
		op     string
		opset  int64
		base   []*onnxpb.AttributeProto // the node's other attributes
		in     []arg
		attr   *onnxpb.AttributeProto
		want   string
		silent bool
	}{
		{"MaxPool", 12, []*onnxpb.AttributeProto{kernel}, []arg{x4}, intAttr("storage_order", 1), `storage_order 1 (implemented: 0)`, false},
		{"AveragePool", 19, []*onnxpb.AttributeProto{kernel}, []arg{x4}, intsAttr("dilations", 2, 2), `dilations [2 2] (implemented: 1 on every axis)`, false},
		{"BatchNormalization", 15, nil, bn, intAttr("training_mode", 1), `training_mode 1 (implemented: 0)`, false},
		{"BatchNormalization", 7, nil, bn, intAttr("spatial", 0), `spatial 0 (implemented: 1)`, true},
		{"BatchNormalization", 6, nil, bn, intAttr("is_test", 0), `is_test 0, training mode (implemented: is_test 1, Import builds inference)`, false},
		{"BatchNormalization", 9, nil, bn, intAttr("spatial", 1), `attribute "spatial" (implemented for BatchNormalization at opset 9: epsilon, momentum, training_mode)`, true},
		{"Dropout", 6, nil, []arg{x4}, intAttr("is_test", 0), `is_test 0, training mode`, false},
		{"Dropout", 13, nil, []arg{x4}, floatAttr("ratio", 0.5), `attribute "ratio" (implemented for Dropout at opset 13: seed)`, true},
		{"LayerNormalization", 17, nil, []arg{graphIn(2, 3), graphIn(3)}, intAttr("stash_type", int64(onnxpb.TensorProto_FLOAT16)), `stash_type 10 (implemented: 1, 11)`, true},
		{"Pad", 19, nil, []arg{x4, initInts(0, 0, 0, 1, 0, 0, 0, 1)}, stringAttr("mode", "wrap"), `mode "wrap" (implemented: "constant", "edge", "reflect")`, false},
		{"Pad", 2, nil, []arg{x4}, intsAttr("paddings", 0, 0, 0, 1, 0, 0, 0, 1), `attribute "paddings" (implemented for Pad at opset 2: mode, pads, value)`, false},
		{"Pad", 1, nil, []arg{x4}, intsAttr("paddings", 0, 0, 0, -1, 0, 0, 0, 1), `paddings [0 0 0 -1 0 0 0 1]: opset 1's paddings count the values added, at least 0`, false},
		// The attributes of other opsets were read: Pad's pads attribute
		// before its input, Reshape's allowzero before opset 14.
		{"Pad", 11, nil, []arg{x4, initInts(0, 0, 0, 1, 0, 0, 0, 1)}, intsAttr("pads", 0, 0, 0, 2, 0, 0, 0, 2), `attribute "pads" (implemented for Pad at opset 11: mode)`, true},
		{"Reshape", 5, nil, []arg{x4, initInts(2, 16)}, intsAttr("shape", 4, 8), `attribute "shape" (implemented for Reshape at opset 5: none)`, true},
		{"Reshape", 13, nil, []arg{x4, initInts(2, 16)}, intAttr("allowzero", 1), `attribute "allowzero" (implemented for Reshape at opset 13: none)`, true},
		{"Reshape", 4, nil, []arg{x4}, intsAttr("consumed_inputs", 0), `no shape attribute (opset 4's Reshape takes its shape as one)`, false},
		{"Resize", 18, nil, resize13, intAttr("antialias", 1), `antialias 1 (implemented: 0)`, false},
		{"Resize", 18, nil, resize13, stringAttr("keep_aspect_ratio_policy", "not_larger"), `keep_aspect_ratio_policy "not_larger" (implemented: "stretch")`, false},
		{"Resize", 13, nil, resize13, stringAttr("coordinate_transformation_mode", "tf_crop_and_resize"), `coordinate_transformation_mode "tf_crop_and_resize" (implemented: "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric")`, false},
		{"Resize", 19, nil, resize13, stringAttr("coordinate_transformation_mode", "half_pixel_symmetric"), `coordinate_transformation_mode "half_pixel_symmetric"`, false},
		{"Resize", 10, nil, []arg{x4, initFloats(1, 1, 2, 2)}, stringAttr("coordinate_transformation_mode", "align_corners"), `attribute "coordinate_transformation_mode" (implemented for Resize at opset 10: mode)`, true},
		{"Resize", 13, nil, resize13, stringAttr("nearest_mode", "round"), `nearest_mode "round" (implemented: "round_prefer_floor", "round_prefer_ceil", "floor", "ceil")`, true},
		{"ScatterND", 16, nil, []arg{graphIn(3, 2), initInts(1), graphIn(1, 2)}, stringAttr("reduction", "mul"), `reduction "mul" (implemented: "none", "add")`, false},
		{"RNN", 14, nil, rnn(1), floatAttr("clip", 3), `attribute "clip" (implemented for RNN at opset 14: activations, direction, hidden_size, layout)`, false},
		{"GRU", 14, nil, rnn(3), &onnxpb.AttributeProto{Name: proto.String("activation_alpha"), Type: onnxpb.AttributeProto_FLOATS.Enum(), Floats: []float32{0.1}}, `attribute "activation_alpha"`, false},
		{"LSTM", 14, nil, rnn(4), stringsAttr("activations", "Sigmoid", "HardSigmoid", "Tanh"), `activation "HardSigmoid" (implemented: Sigmoid, Tanh, Relu, Softplus)`, false},
		{"LSTM", 14, nil, rnn(4), intAttr("input_forget", 1), `input_forget 1 (implemented: 0)`, false},
		{"LSTM", 14, nil, []arg{graphIn(1, 2, 3), graphIn(1, 8, 3), graphIn(1, 8, 2)}, intAttr("layout", 2), `layout 2 (implemented: 0, 1)`, true},
		{"RNN", 7, nil, rnn(1), intAttr("linear_before_reset", 1), `attribute "linear_before_reset" (implemented for RNN at opset 7: activations, direction, hidden_size)`, true},
		{"Constant", 12, nil, nil, stringAttr("value_string", "a"), `attribute "value_string" (implemented for Constant at opset 12: value, value_float, value_floats, value_int, value_ints)`, false},
		{"Gelu", 20, nil, []arg{x4}, stringAttr("approximate", "erf"), `approximate "erf" (implemented: "none", "tanh")`, false},
		{"NegativeLogLikelihoodLoss", 13, nil, []arg{graphIn(2, 3), initInts(0, 1)}, stringAttr("reduction", "max"), `reduction "max" (implemented: "mean", "none", "sum")`, false},
		{"Conv", 11, nil, []arg{x4, graphIn(2, 2, 3, 3)}, intAttr("group", 0), `group 0: must be at least 1`, true},
		{"Conv", 11, nil, []arg{x4, graphIn(2, 2, 3, 3)}, stringAttr("auto_pad", "SAME"), `auto_pad "SAME" (implemented: "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER")`, false},
		{"Gemm", 7, nil, []arg{graphIn(2, 3), graphIn(3, 2)}, intAttr("broadcast", 1), `attribute "broadcast" (implemented for Gemm at opset 7: alpha, beta, transA, transB)`, true},
		{"Add", 7, nil, []arg{graphIn(2, 3), graphIn(3)}, intAttr("broadcast", 1), `attribute "broadcast" (implemented for Add at opset 7: none)`, true},
		// B (2) along A (2, 2)'s axis 0: numpy's broadcasting aligns it
		// with axis 1, a wrong value.
		{"Add", 6, []*onnxpb.AttributeProto{intAttr("broadcast", 1)}, []arg{graphIn(2, 2), graphIn(2)}, intAttr("axis", 0), `axis 0 with broadcast 1: B float32(2) aligned with A float32(2,2) from axis 0 (implemented: B aligned with A's last axes, axis 1)`, true},
		{"Softmax", 13, nil, []arg{x4}, intAttr("consumed_inputs", 0), `attribute "consumed_inputs" (implemented for Softmax at opset 13: axis)`, true},
		// noop_with_empty_axes came with ReduceSum's axes input (opset 13)
		// and the other Reduce ops' (18), when their axes attribute went:
		// both were accepted at every opset.
		{"ReduceL1", 13, nil, []arg{x4}, intAttr("noop_with_empty_axes", 1), `attribute "noop_with_empty_axes" (implemented for ReduceL1 at opset 13: axes, keepdims)`, true},
		{"ReduceSum", 12, nil, []arg{x4}, intAttr("noop_with_empty_axes", 1), `attribute "noop_with_empty_axes" (implemented for ReduceSum at opset 12: axes, keepdims)`, true},
		{"ReduceSumSquare", 18, nil, []arg{x4}, intsAttr("axes", 1), `attribute "axes" (implemented for ReduceSumSquare at opset 18: keepdims, noop_with_empty_axes)`, true},
		{"ReduceSum", 13, nil, []arg{x4}, intsAttr("axes", 1), `attribute "axes" (implemented for ReduceSum at opset 13: keepdims, noop_with_empty_axes)`, true},
		// Attributes of other opsets than the model's were read: an
		// attribute an input replaced (Slice's starts, Squeeze's axes,
		// Split's split, Clip's min), read before the input, or one added
		// later (ceil_mode, select_last_index, layout, ...) honoured where
		// the model's opset does not define it.
		{"Slice", 10, nil, []arg{graphIn(4, 4), initInts(1), initInts(3)}, intsAttr("starts", 0), `attribute "starts" (implemented for Slice at opset 10: none)`, true},
		{"Squeeze", 13, nil, []arg{graphIn(1, 4), initInts(0)}, intsAttr("axes", 0), `attribute "axes" (implemented for Squeeze at opset 13: none)`, true},
		{"Split", 13, nil, []arg{graphIn(4), initInts(4)}, intsAttr("split", 4), `attribute "split" (implemented for Split at opset 13: axis)`, true},
		{"Clip", 11, nil, []arg{graphIn(4), initFloats(0), initFloats(1)}, floatAttr("min", -1), `attribute "min" (implemented for Clip at opset 11: none)`, true},
		{"Shape", 14, nil, []arg{x4}, intAttr("start", 1), `attribute "start" (implemented for Shape at opset 14: none)`, true},
		{"Constant", 11, nil, nil, floatAttr("value_float", 1), `attribute "value_float" (implemented for Constant at opset 11: value)`, false},
		{"MaxPool", 9, []*onnxpb.AttributeProto{kernel}, []arg{x4}, intAttr("ceil_mode", 1), `attribute "ceil_mode" (implemented for MaxPool at opset 9: auto_pad, kernel_shape, pads, storage_order, strides)`, true},
		{"MaxPool", 7, []*onnxpb.AttributeProto{kernel}, []arg{x4}, intsAttr("dilations", 2, 2), `attribute "dilations" (implemented for MaxPool at opset 7: auto_pad, kernel_shape, pads, strides)`, true},
		{"AveragePool", 6, []*onnxpb.AttributeProto{kernel}, []arg{x4}, intAttr("count_include_pad", 1), `attribute "count_include_pad" (implemented for AveragePool at opset 6: auto_pad, kernel_shape, pads, strides)`, true},
		{"ArgMax", 11, nil, []arg{x4}, intAttr("select_last_index", 1), `attribute "select_last_index" (implemented for ArgMax at opset 11: axis, keepdims)`, true},
		{"ScatterND", 15, nil, []arg{graphIn(3, 2), initInts(1), graphIn(1, 2)}, stringAttr("reduction", "add"), `attribute "reduction" (implemented for ScatterND at opset 15: none)`, true},
		{"LSTM", 13, nil, rnn(4), intAttr("layout", 1), `attribute "layout" (implemented for LSTM at opset 13: activations, direction, hidden_size, input_forget)`, true},
		{"Resize", 13, nil, resize13, intAttr("antialias", 0), `attribute "antialias" (implemented for Resize at opset 13: coordinate_transformation_mode, cubic_coeff_a, exclude_outside, extrapolation_value, mode, nearest_mode)`, true},
	} {
		name := fmt.Sprintf("%s %s at opset %d", c.op, c.attr.GetName(), c.opset)
		_, err := ImportProto(nodeModel(c.op, c.opset, append(c.base, c.attr), c.in...), "", Options{Frozen: true})
		want := fmt.Sprintf(`nabla: onnx.Import: node %s (unnamed, output "y"), opset %d: `, c.op, c.opset)
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error starting %q and containing %q", name, err, want, c.want)
		}
		if c.silent { // the attribute is what the error is about
			if _, err := ImportProto(nodeModel(c.op, c.opset, c.base, c.in...), "", Options{Frozen: true}); err != nil {
				t.Errorf("%s: without the attribute: %v", name, err)
			}
		}
	}
}

// TestTrainingModeByDefaultRefused: before opset 7, BatchNormalization
// and Dropout without is_test are in training mode (ONNX's default,
// 0), which Import refuses, naming the node, its opset and the
// attribute; it built them for inference, silently, a batch norm
// normalised by its running statistics where training mode takes the
// batch's, and a Dropout that drops nothing. With is_test 1 they import.
func TestTrainingModeByDefaultRefused(t *testing.T) {
	x4 := graphIn(1, 2, 4, 4)
	bn := []arg{x4, graphIn(2), graphIn(2), graphIn(2), graphIn(2)}
	consumed := intsAttr("consumed_inputs", 0, 0, 0, 1, 1) // opset 1's required attribute
	for _, c := range []struct {
		op    string
		opset int64
		attrs []*onnxpb.AttributeProto
		in    []arg
	}{
		{"BatchNormalization", 6, nil, bn},
		{"BatchNormalization", 1, []*onnxpb.AttributeProto{consumed}, bn},
		{"Dropout", 6, []*onnxpb.AttributeProto{floatAttr("ratio", 0.5)}, []arg{x4}},
		{"Dropout", 1, nil, []arg{x4}},
	} {
		_, err := ImportProto(nodeModel(c.op, c.opset, c.attrs, c.in...), "", Options{Frozen: true})
		want := fmt.Sprintf(`nabla: onnx.Import: node %s (unnamed, output "y"), opset %d: unsupported: is_test absent: its default, 0, is training mode (implemented: is_test 1, Import builds inference) at `, c.op, c.opset)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s at opset %d: got %v, want an error starting %q", c.op, c.opset, err, want)
		}
		if _, err := ImportProto(nodeModel(c.op, c.opset, append(c.attrs, intAttr("is_test", 1)), c.in...), "", Options{Frozen: true}); err != nil {
			t.Errorf("%s at opset %d with is_test 1: %v", c.op, c.opset, err)
		}
	}
	for _, opset := range []int64{7, 15} { // no is_test: inference
		if _, err := ImportProto(nodeModel("BatchNormalization", opset, nil, bn...), "", Options{Frozen: true}); err != nil {
			t.Errorf("BatchNormalization at opset %d: %v", opset, err)
		}
	}
}

// TestAttributeTables: each op of the attribute tables is supported; an
// importer reading an attribute its op's table lacks is an internal
// error, whether the node has the attribute or not; an attribute given
// twice is refused (the second was ignored).
func TestAttributeTables(t *testing.T) {
	for op := range attributes {
		if _, ok := importers[op]; !ok {
			t.Errorf("the attribute table names %s, which has no importer", op)
		}
	}
	importers["Undeclared"] = one(func(c *nodeContext) (*graph.Node, error) {
		x, err := c.input(0)
		return ops.Scale(x, c.attrFloat("alpha", 1)), err
	})
	defer delete(importers, "Undeclared")
	_, err := ImportProto(nodeModel("Undeclared", 17, nil, graphIn(2)), "", Options{})
	want := `node Undeclared (unnamed, output "y"), opset 17: internal error: Import reads attribute "alpha", which the table of Undeclared's attributes lacks`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error containing %q", err, want)
	}
	_, err = ImportProto(nodeModel("Softmax", 17, []*onnxpb.AttributeProto{intAttr("axis", 0), intAttr("axis", 1)}), "", Options{})
	want = `node Softmax (unnamed, output "y"), opset 17: attribute "axis" is given twice`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error containing %q", err, want)
	}
}

// TestImplementedAttributeValuesAccepted: the values Import implements of
// attributes that it refuses others of, ONNX's defaults among them, and
// the attributes an inference import may ignore, import.
func TestImplementedAttributeValuesAccepted(t *testing.T) {
	x4 := graphIn(1, 2, 4, 4)
	bn := []arg{x4, graphIn(2), graphIn(2), graphIn(2), graphIn(2)}
	lstm := []arg{graphIn(2, 1, 3), graphIn(1, 8, 3), graphIn(1, 8, 2)}
	kernel := intsAttr("kernel_shape", 2, 2)
	for _, c := range []struct {
		op    string
		opset int64
		attrs []*onnxpb.AttributeProto
		in    []arg
	}{
		{"MaxPool", 12, []*onnxpb.AttributeProto{kernel, intAttr("storage_order", 0)}, []arg{x4}},
		{"AveragePool", 19, []*onnxpb.AttributeProto{kernel, intsAttr("dilations", 1, 1), stringAttr("auto_pad", "SAME_UPPER")}, []arg{x4}},
		{"BatchNormalization", 15, []*onnxpb.AttributeProto{intAttr("training_mode", 0), floatAttr("momentum", 0.5)}, bn},
		{"BatchNormalization", 7, []*onnxpb.AttributeProto{intAttr("spatial", 1)}, bn},
		{"BatchNormalization", 5, []*onnxpb.AttributeProto{intAttr("is_test", 1), intsAttr("consumed_inputs", 0, 0, 0, 1, 1)}, bn},
		{"Dropout", 6, []*onnxpb.AttributeProto{intAttr("is_test", 1), floatAttr("ratio", 0.3)}, []arg{x4}},
		{"Dropout", 13, []*onnxpb.AttributeProto{intAttr("seed", 3)}, []arg{x4}},
		{"LayerNormalization", 17, []*onnxpb.AttributeProto{intAttr("stash_type", 1)}, []arg{graphIn(2, 3), graphIn(3)}},
		{"Resize", 18, []*onnxpb.AttributeProto{intAttr("antialias", 0), stringAttr("keep_aspect_ratio_policy", "stretch"), floatAttr("extrapolation_value", 2),
			stringAttr("mode", "linear"), stringAttr("coordinate_transformation_mode", "align_corners")}, []arg{x4, absent, initFloats(1, 1, 2, 2)}},
		{"LSTM", 14, []*onnxpb.AttributeProto{intAttr("input_forget", 0), intAttr("layout", 0), stringsAttr("activations", "Sigmoid", "Tanh", "Relu"), stringAttr("direction", "forward")}, lstm},
		{"Cast", 19, []*onnxpb.AttributeProto{intAttr("to", int64(onnxpb.TensorProto_DOUBLE)), intAttr("saturate", 0)}, []arg{x4}},
		{"Gemm", 6, []*onnxpb.AttributeProto{intAttr("broadcast", 1)}, []arg{graphIn(2, 3), graphIn(3, 2), graphIn(2)}},
		{"Add", 6, []*onnxpb.AttributeProto{intAttr("broadcast", 1), intAttr("axis", 1)}, []arg{graphIn(2, 3), graphIn(3)}},
		{"Add", 6, []*onnxpb.AttributeProto{intAttr("broadcast", 1), intAttr("axis", 0)}, []arg{graphIn(2, 3), graphIn(1)}},
		{"Relu", 5, []*onnxpb.AttributeProto{intsAttr("consumed_inputs", 0)}, []arg{x4}},
		{"Conv", 11, []*onnxpb.AttributeProto{intAttr("group", 2), stringAttr("auto_pad", "NOTSET")}, []arg{x4, graphIn(2, 1, 3, 3)}},
		{"Gelu", 20, []*onnxpb.AttributeProto{stringAttr("approximate", "none")}, []arg{x4}},
	} {
		if _, err := ImportProto(nodeModel(c.op, c.opset, c.attrs, c.in...), "", Options{Frozen: true}); err != nil {
			t.Errorf("%s at opset %d: %v", c.op, c.opset, err)
		}
	}
}

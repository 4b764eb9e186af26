package onnx_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
	"gorgonia.org/tensor"
)

// tensorInfo is a graph input or output of elem's type and shape.
func tensorInfo(name string, elem onnxpb.TensorProto_DataType, shape ...int) *onnxpb.ValueInfoProto {
	var dims []*onnxpb.TensorShapeProto_Dimension
	for _, d := range shape {
		dims = append(dims, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(elem)), Shape: &onnxpb.TensorShapeProto{Dim: dims}}}}}
}

// gatherCase is a model Gather(data, indices) along axis, data a float
// graph input; indices an initializer when given, else an int64 graph
// input of idxShape (fed with no values: its shape is empty). With dead,
// the Gather's value is no output: the model's output is Relu(data).
type gatherCase struct {
	data     []int
	idx      []int64
	idxShape []int
	axis     int64
	dead     bool
}

func (c gatherCase) model() []byte {
	g := &onnxpb.GraphProto{Name: proto.String("gather"), Input: []*onnxpb.ValueInfoProto{tensorInfo("data", onnxpb.TensorProto_FLOAT, c.data...)}}
	if c.idx != nil {
		dims := make([]int64, len(c.idxShape))
		for i, d := range c.idxShape {
			dims[i] = int64(d)
		}
		g.Initializer = []*onnxpb.TensorProto{{Name: proto.String("idx"), DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Dims: dims, Int64Data: c.idx}}
	} else {
		g.Input = append(g.Input, tensorInfo("idx", onnxpb.TensorProto_INT64, c.idxShape...))
	}
	g.Node = []*onnxpb.NodeProto{{OpType: proto.String("Gather"), Input: []string{"data", "idx"}, Output: []string{"y"}, Attribute: []*onnxpb.AttributeProto{attrI("axis", c.axis)}}}
	if c.dead {
		g.Node = append(g.Node, &onnxpb.NodeProto{OpType: proto.String("Relu"), Input: []string{"data"}, Output: []string{"z"}})
		g.Output = []*onnxpb.ValueInfoProto{{Name: proto.String("z")}}
	} else {
		g.Output = []*onnxpb.ValueInfoProto{{Name: proto.String("y")}}
	}
	data, err := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(17)}}, Graph: g})
	if err != nil {
		panic(err)
	}
	return data
}

// TestGatherEmpty gathers along an empty axis and with no index. With no
// index, ONNX's output is data's shape with the axis replaced by the
// indices' shape (the spec's formula; ONNX Runtime agrees): Import
// refused an empty axis ("table must be (n,...) with n ≥ 1 rows"). An
// index into an empty axis is out of range, an error, as in ONNX
// Runtime, also where the Gather's value is no output (ONNX Runtime runs
// the node and fails) and where its output has no element (ONNX Runtime
// checks every index).
func TestGatherEmpty(t *testing.T) {
	ort, haveORT := onnxRuntimeIfPresent()
	for _, c := range []struct {
		name string
		gatherCase
		want []int  // the output's shape
		err  string // or Import's error
	}{
		{"no index into an empty axis", gatherCase{data: []int{0, 3}, idx: []int64{}, idxShape: []int{0}}, []int{0, 3}, ""},
		{"no index, fed, into an empty axis", gatherCase{data: []int{0, 3}, idxShape: []int{0}}, []int{0, 3}, ""},
		{"2-D indices, empty axis 1", gatherCase{data: []int{2, 0, 3}, idx: []int64{}, idxShape: []int{2, 0}, axis: 1}, []int{2, 2, 0, 3}, ""},
		{"no index into a full axis", gatherCase{data: []int{2, 3}, idx: []int64{}, idxShape: []int{0}}, []int{0, 3}, ""},
		{"indices into a full axis of empty data", gatherCase{data: []int{0, 3}, idx: []int64{1, -1}, idxShape: []int{2}, axis: 1}, []int{0, 2}, ""},
		{"an index into an empty axis", gatherCase{data: []int{0, 3}, idx: []int64{0}, idxShape: []int{1}},
			nil, "node Gather (unnamed, output \"y\"), opset 17: indices int64(1) index data float32(0,3) along its axis 0, which is empty: every index is out of range"},
		{"an index into an empty axis, the value unused", gatherCase{data: []int{0, 3}, idx: []int64{0}, idxShape: []int{1}, dead: true},
			nil, "indices int64(1) index data float32(0,3) along its axis 0, which is empty"},
		{"a fed index into an empty axis", gatherCase{data: []int{0, 3}, idxShape: []int{1}},
			nil, "indices int64(1) index data float32(0,3) along its axis 0, which is empty"},
		{"an index out of range, the output empty", gatherCase{data: []int{3, 0}, idx: []int64{5}, idxShape: []int{1}},
			nil, "index 5 out of range [-3, 3)"},
		{"an index out of range, the value unused", gatherCase{data: []int{2, 3}, idx: []int64{5}, idxShape: []int{1}, dead: true},
			nil, "index 5 out of range [-2, 2)"},
	} {
		data := c.model()
		x := graph.NewDense(graph.Float32, c.data...)
		idx, _ := graph.FromInt64s(graph.Int64, nil, 0)
		feeds := []*tensor.Dense{x}
		if c.idx == nil {
			feeds = append(feeds, idx)
		}
		m, err := onnx.Import(data, onnx.Options{})
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err == "":
			got, err := runModel(m, feeds)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else if !slices.Equal(got[0].Shape(), c.want) {
				t.Errorf("%s: shape %v, want %v", c.name, got[0].Shape(), c.want)
			}
		}
		if !haveORT || (c.idx == nil && c.err != "") { // a fed index needs a value to fail
			continue
		}
		path := filepath.Join(t.TempDir(), "model.onnx")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		in := map[string]ortInput{"data": {"float32", c.data, x.Float32s()}}
		if c.idx == nil {
			in["idx"] = ortInput{"int64", c.idxShape, []int64{}}
		}
		byORT, err := tryORT(t, ort, path, graph.Float32, in)
		switch {
		case c.err != "" && err == nil:
			t.Errorf("%s: ONNX Runtime runs the model", c.name)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err == "" && !slices.Equal(byORT["y"].Shape(), c.want):
			t.Errorf("%s: ONNX Runtime's shape %v, want %v", c.name, byORT["y"].Shape(), c.want)
		}
	}
}

// TestFloatIndicesRefused imports models whose indices are floats, an
// initializer or a graph input: ONNX allows int32 and int64 indices alone
// (the ops' type constraint Tind), and Import read a float index as the
// integer it truncates to. Each is an error naming the node; int64
// indices import.
func TestFloatIndicesRefused(t *testing.T) {
	f32 := onnxpb.TensorProto_FLOAT
	model := func(op string, idxType onnxpb.TensorProto_DataType, initializer bool, in ...string) []byte {
		g := &onnxpb.GraphProto{Name: proto.String("m"), Input: []*onnxpb.ValueInfoProto{tensorInfo("data", f32, 3, 1)}}
		if initializer {
			idx := &onnxpb.TensorProto{Name: proto.String("idx"), DataType: proto.Int32(int32(idxType)), Dims: []int64{2, 1}}
			if idxType == f32 {
				idx.FloatData = []float32{0, 2}
			} else {
				idx.Int64Data = []int64{0, 2}
			}
			g.Initializer = []*onnxpb.TensorProto{idx}
		} else {
			g.Input = append(g.Input, tensorInfo("idx", idxType, 2, 1))
		}
		g.Node = []*onnxpb.NodeProto{{Name: proto.String("pick"), OpType: proto.String(op), Input: in, Output: []string{"y"}}}
		g.Output = []*onnxpb.ValueInfoProto{{Name: proto.String("y")}}
		data, err := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(17)}}, Graph: g})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, c := range []struct {
		op   string
		in   []string
		want string
	}{
		{"Gather", []string{"data", "idx"}, `node "pick" (Gather), opset 17: indices are float32(2,1): ONNX allows int32 or int64 indices only`},
		{"GatherElements", []string{"data", "idx"}, `node "pick" (GatherElements), opset 17: indices are float32(2,1): ONNX allows int32 or int64 indices only`},
		{"ScatterND", []string{"data", "idx", "data"}, `node "pick" (ScatterND), opset 17: indices are float32(2,1): ONNX allows int32 or int64 indices only`},
	} {
		for _, initializer := range []bool{true, false} {
			line, err := importAt(model(c.op, f32, initializer, c.in...))
			if want := "nabla: onnx.Import: " + c.want + " at " + line; err == nil || err.Error() != want {
				t.Errorf("%s (an initializer: %v): got %v, want %s", c.op, initializer, err, want)
			}
		}
		if c.op == "ScatterND" { // its updates' shape would differ
			continue
		}
		if _, err := onnx.Import(model(c.op, onnxpb.TensorProto_INT64, true, c.in...), onnx.Options{}); err != nil {
			t.Errorf("%s with int64 indices: %v", c.op, err)
		}
	}
	// NegativeLogLikelihoodLoss's target classes are Tind too.
	g := &onnxpb.GraphProto{Name: proto.String("nll"), Input: []*onnxpb.ValueInfoProto{tensorInfo("x", f32, 2, 3), tensorInfo("t", f32, 2)}}
	g.Node = []*onnxpb.NodeProto{{Name: proto.String("loss"), OpType: proto.String("NegativeLogLikelihoodLoss"), Input: []string{"x", "t"}, Output: []string{"y"}}}
	g.Output = []*onnxpb.ValueInfoProto{{Name: proto.String("y")}}
	data, err := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(17)}}, Graph: g})
	if err != nil {
		t.Fatal(err)
	}
	line, err := importAt(data)
	want := `nabla: onnx.Import: node "loss" (NegativeLogLikelihoodLoss), opset 17: target classes are float32(2): ONNX allows int32 or int64 target classes only at ` + line
	if err == nil || err.Error() != want {
		t.Errorf("NegativeLogLikelihoodLoss: got %v, want %s", err, want)
	}
}

// importAt imports data and returns the file:line of the call, which
// Import's error names, and the error.
func importAt(data []byte) (string, error) {
	_, err := onnx.Import(data, onnx.Options{})
	_, file, line, _ := runtime.Caller(0)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line-1), err
}

package onnx_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
	"google.golang.org/protobuf/proto"
)

// tinyModel is y = Relu(x + w), x (2,3) float, w an initializer.
func tinyModel() *onnxpb.ModelProto {
	g := graph.New()
	x := g.Input("x", graph.Float32, 2, 3)
	w := g.Param("w", graph.NewDense(graph.Float32, 2, 3))
	m, err := onnx.ExportProto([]*graph.Node{ops.ReLU(ops.Add(x, w))}, onnx.ExportOptions{OutputNames: []string{"y"}})
	if err != nil {
		panic(err)
	}
	return m
}

func node(op string, in []string, out ...string) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{OpType: &op, Input: in, Output: out, Name: proto.String(op + "_" + strings.Join(out, ","))}
}

// TestBadModels feeds broken and hostile models to Import: each must be an
// error naming the problem, never a panic or an allocation past the limit.
func TestBadModels(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(m *onnxpb.ModelProto)
		want   string
	}{
		{"unsupported ops, all listed", func(m *onnxpb.ModelProto) {
			m.Graph.Node = append(m.Graph.Node, node("Unique", []string{"y"}, "a"), node("NonZero", []string{"y"}, "b"), node("Unique", []string{"y"}, "c"))
		}, `unsupported ops at opset 17: NonZero (nodes "NonZero_b"); Unique (nodes "Unique_a", "Unique_c")`},
		{"opset too new", func(m *onnxpb.ModelProto) { m.OpsetImport[0].Version = proto.Int64(99) },
			"opset 99 is newer than the newest supported, 21"},
		{"cycle", func(m *onnxpb.ModelProto) {
			m.Graph.Node = append(m.Graph.Node, node("Relu", []string{"q"}, "p"), node("Relu", []string{"p"}, "q"))
		}, "the nodes form a cycle through node"},
		{"dangling input", func(m *onnxpb.ModelProto) { m.Graph.Node[0].Input[0] = "nowhere" },
			`input "nowhere" is produced by no node, initializer or input`},
		{"duplicate names", func(m *onnxpb.ModelProto) { m.Graph.Node[1].Output[0] = m.Graph.Node[0].Output[0] },
			"is defined twice"},
		{"unknown dtype", func(m *onnxpb.ModelProto) { m.Graph.Initializer[0].DataType = proto.Int32(77) },
			`initializer "w": element type 77 (unknown) is not supported (float, double, int32, int64 or bool)`},
		{"lying dims", func(m *onnxpb.ModelProto) { m.Graph.Initializer[0].Dims = []int64{1 << 20, 1 << 20} },
			`initializer "w": float32(1048576,1048576) needs 4398046511104 bytes`},
		{"data shorter than dims", func(m *onnxpb.ModelProto) { m.Graph.Initializer[0].Dims = []int64{3, 3} },
			"float32(3,3) needs 36 bytes of raw data, the tensor has 24"},
		{"negative dim", func(m *onnxpb.ModelProto) { m.Graph.Initializer[0].Dims = []int64{-2, -3} },
			"dims [-2 -3]: dimension 0 (-2) is negative or too large"},
		{"external data leaving the folder", func(m *onnxpb.ModelProto) {
			t := m.Graph.Initializer[0]
			t.RawData = nil
			t.DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
			t.ExternalData = []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("../../etc/passwd")}}
		}, `external data "../../etc/passwd": the path leaves the model's folder`},
		{"symbolic dimension", func(m *onnxpb.ModelProto) {
			m.Graph.Input[0].Type.GetTensorType().Shape.Dim[0].Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "batch"}
		}, `input "x": dimension 0 is symbolic ("batch"): give the shape in Options.InputShapes`},
		{"no graph", func(m *onnxpb.ModelProto) { m.Graph = nil }, "the model has no graph"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		m := tinyModel()
		c.mutate(m)
		_, err := onnx.ImportProto(m, dir, onnx.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "nabla: onnx.Import: ") {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
		if testing.Verbose() {
			t.Logf("%s: %v", c.name, err)
		}
	}
	if _, err := onnx.ImportProto(tinyModel(), dir, onnx.Options{}); err != nil {
		t.Errorf("the unmutated model: %v", err)
	}
}

// TestImportErrorNamesTheCaller checks the error's site is the caller's.
func TestImportErrorNamesTheCaller(t *testing.T) {
	_, err := onnx.Import([]byte("not a model"), onnx.Options{})
	if err == nil || !strings.Contains(err.Error(), "badinput_test.go:") {
		t.Errorf("got %v, want an error naming badinput_test.go", err)
	}
}

// TestExternalData reads an initializer from a file beside the model.
func TestExternalData(t *testing.T) {
	dir := t.TempDir()
	m := tinyModel()
	w := m.Graph.Initializer[0]
	raw := make([]byte, 8+24)
	for i := range 6 { // float32 1.5 = 0x3fc00000, little-endian
		copy(raw[8+4*i:], []byte{0, 0, 0xc0, 0x3f})
	}
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	w.RawData = nil
	w.DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
	w.ExternalData = []*onnxpb.StringStringEntryProto{
		{Key: proto.String("location"), Value: proto.String("w.bin")}, {Key: proto.String("offset"), Value: proto.String("8")},
	}
	data, _ := proto.Marshal(m)
	path := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	model, err := onnx.ImportFile(path, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := model.Params["w"].Value().Float32s(); got[5] != 1.5 {
		t.Errorf("w = %v, want 1.5 everywhere", got)
	}
	if model, err = onnx.ImportFile(dir, onnx.Options{}); err != nil || model.Params["w"].Value().Float32s()[0] != 1.5 {
		t.Errorf("ImportFile of the model's folder: %v", err)
	}
	if _, err := onnx.Import(data, onnx.Options{}); err == nil || !strings.Contains(err.Error(), "use ImportFile") {
		t.Errorf("Import of a model with external data: got %v", err)
	}
}

// FuzzImport feeds arbitrary bytes and mutations of a valid model to
// Import: an error naming the problem or a graph, never a panic (which
// Import would report as an internal error).
func FuzzImport(f *testing.F) {
	data, _ := proto.Marshal(tinyModel())
	f.Add(data)
	f.Add(scanModel())
	f.Add(oneNodeModel("Resize", 17, []*onnxpb.AttributeProto{attrS("mode", "cubic")}, []operand{{shape: []int{1, 1, 3, 2}}, {shape: []int{0}}, {shape: []int{0}}, ints(1, 1, 5, 3)}))
	// Opset 1's attributes, reductions of nothing and of empty sets, and
	// a Gather from an empty axis.
	paddings := &onnxpb.AttributeProto{Name: proto.String("paddings"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{0, 1, 2, 0}}
	f.Add(oneNodeModel("Pad", 1, []*onnxpb.AttributeProto{paddings, attrS("mode", "reflect")}, []operand{{shape: []int{3, 2}}}))
	shape := &onnxpb.AttributeProto{Name: proto.String("shape"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{0, -1}}
	f.Add(oneNodeModel("Reshape", 1, []*onnxpb.AttributeProto{shape}, []operand{{shape: []int{2, 3}}}))
	f.Add(oneNodeModel("ReduceL2", 18, []*onnxpb.AttributeProto{attrI("noop_with_empty_axes", 1)}, []operand{{shape: []int{2, 3}}}))
	f.Add(oneNodeModel("ReduceMin", 18, nil, []operand{{shape: []int{2, 0, 3}}, ints(1)}))
	f.Add(oneNodeModel("Gather", 17, nil, []operand{{shape: []int{0, 3}}, {shape: []int{0}, ints: []int64{}}}))
	if b, err := os.ReadFile(filepath.Join(nodeTests(), "test_conv_with_strides_padding", "model.onnx")); err == nil {
		f.Add(b)
	}
	// A small limit keeps each input fast; Import checks every size
	// against it before allocating.
	defer graph.SetMemoryLimit(graph.SetMemoryLimit(1 << 26))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := onnx.Import(b, onnx.Options{})
		if err == nil && m.Graph.Err() != nil {
			t.Fatalf("Import returned a poisoned graph without an error: %v", m.Graph.Err())
		}
		// Import recovers a panic as an internal error: a mistake in the
		// model must have its own.
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("Import panicked: %v", err)
		}
	})
}

// TestHugeRepeatsStaySmall imports a Tile of 2²⁶ repeats: a few nodes, not
// one per copy, so that a small model cannot make Import build millions.
func TestHugeRepeatsStaySmall(t *testing.T) {
	m, err := onnx.Import(oneNodeModel("Tile", 17, nil, []operand{{shape: []int{2, 1}}, ints(1<<26, 1)}), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Outputs[0].Shape(); got[0] != 1<<27 || got[1] != 1 {
		t.Errorf("shape %v, want (%d,1)", got, 1<<27)
	}
	if n := m.Graph.Len(); n > 20 {
		t.Errorf("%d nodes for one Tile", n)
	}
}

// TestConv1DMismatchRefused: a 1-D Conv whose weight does not fit its
// input is an error naming the shapes (of the 2-D convolution Import
// builds); Import panicked reshaping the refused convolution's result
// back to 1-D, an internal error (found by FuzzImport).
func TestConv1DMismatchRefused(t *testing.T) {
	_, err := onnx.Import(oneNodeModel("Conv", 17, nil, []operand{{shape: []int{1, 2, 5}}, {shape: []int{3, 4, 3}}}), onnx.Options{})
	want := `node Conv (unnamed, output "y"), opset 17: Conv2D: input (1,2,1,5) and weight (3,4,1,3) do not fit 1 group(s)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error containing %q", err, want)
	}
}

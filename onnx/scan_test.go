package onnx_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
	"google.golang.org/protobuf/proto"
	"gorgonia.org/tensor"
)

// scanModel is s_t = s_{t-1}·w + x_t, y_t = tanh(s_t), scanned over axis 1
// of x in reverse, w read from the main graph inside the body.
func scanModel() []byte {
	et := int32(onnxpb.TensorProto_DOUBLE)
	info := func(name string, shape ...int64) *onnxpb.ValueInfoProto {
		var dims []*onnxpb.TensorShapeProto_Dimension
		for _, d := range shape {
			dims = append(dims, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
			TensorType: &onnxpb.TypeProto_Tensor{ElemType: &et, Shape: &onnxpb.TensorShapeProto{Dim: dims}}}}}
	}
	node := func(op string, out string, in ...string) *onnxpb.NodeProto {
		return &onnxpb.NodeProto{OpType: proto.String(op), Input: in, Output: []string{out}}
	}
	body := &onnxpb.GraphProto{
		Name:   proto.String("body"),
		Input:  []*onnxpb.ValueInfoProto{info("s", 2), info("x_t", 2)},
		Output: []*onnxpb.ValueInfoProto{info("s_next", 2), info("y_t", 2)},
		Node:   []*onnxpb.NodeProto{node("Mul", "sw", "s", "w"), node("Add", "s_next", "sw", "x_t"), node("Tanh", "y_t", "s_next")},
	}
	ints := func(name string, v ...int64) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
	}
	scan := &onnxpb.NodeProto{OpType: proto.String("Scan"), Input: []string{"s0", "x"}, Output: []string{"s_final", "y"}, Attribute: []*onnxpb.AttributeProto{
		{Name: proto.String("body"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: body},
		{Name: proto.String("num_scan_inputs"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(1)},
		ints("scan_input_axes", 1), ints("scan_input_directions", 1), ints("scan_output_axes", 1),
	}}
	g := &onnxpb.GraphProto{
		Name:   proto.String("scan"),
		Input:  []*onnxpb.ValueInfoProto{info("s0", 2), info("x", 2, 4), info("w", 2)},
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String("s_final")}, {Name: proto.String("y")}},
		Node:   []*onnxpb.NodeProto{scan},
	}
	data, err := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(17)}}, Graph: g})
	if err != nil {
		panic(err)
	}
	return data
}

// TestImportScan checks an imported Scan's values against the recurrence
// computed by hand, and its gradients with respect to the initial state,
// the sequence and a weight the body reads from the main graph against
// finite differences.
func TestImportScan(t *testing.T) {
	data := scanModel()
	r := rand.New(rand.NewPCG(31, 32))
	s0, x, w := randDense(r, 2), randDense(r, 2, 4), randDense(r, 2)
	m, err := onnx.Import(data, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := run(t, feedsOf(m, s0, x, w), m.Outputs...)
	// By hand: step k reads x's column 3-k (the input scanned in reverse)
	// and writes y's column k (the output appended).
	wantY := graph.NewDense(graph.Float64, 2, 4)
	s := append([]float64(nil), s0.Float64s()...)
	for k := range 4 {
		for i := range 2 {
			s[i] = s[i]*w.Float64s()[i] + x.Float64s()[i*4+3-k]
			wantY.Float64s()[i*4+k] = tanh(s[i])
		}
	}
	wantS, _ := graph.FromFloat64s(graph.Float64, s, 2)
	if err := closeTo(got[0], wantS, 0, 1e-12); err != nil {
		t.Errorf("final state: %v", err)
	}
	if err := closeTo(got[1], wantY, 0, 1e-12); err != nil {
		t.Errorf("outputs: %v", err)
	}
	weights := randDense(r, 2, 4)
	fn := func(in []*graph.Node) *graph.Node {
		g := in[0].Graph()
		m, err := onnx.Import(data, onnx.Options{Graph: g, Inputs: map[string]*graph.Node{"s0": in[0], "x": in[1], "w": in[2]}})
		if err != nil {
			return g.Fail(err)
		}
		return ops.Add(ops.Sum(ops.Mul(m.Outputs[1], g.Const(weights))), ops.Sum(m.Outputs[0]))
	}
	if err := gradcheck.Check(fn, []*tensor.Dense{s0, x, w}, gradcheck.Options{}); err != nil {
		t.Error(err)
	}
}

// TestImportScanListLengths: Scan's lists of axes and directions hold a
// value per scan input or output; the extra one given here was ignored.
func TestImportScanListLengths(t *testing.T) {
	m := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(scanModel(), m); err != nil {
		t.Fatal(err)
	}
	for _, a := range m.GetGraph().GetNode()[0].GetAttribute() {
		if a.GetName() == "scan_output_axes" {
			a.Ints = []int64{1, 0}
		}
	}
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	_, err = onnx.Import(data, onnx.Options{})
	want := `node Scan (unnamed, output "s_final,y"), opset 17: scan_output_axes [1 0]: want one value per scan output (1)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error containing %q", err, want)
	}
}

func tanh(v float64) float64 { return math.Tanh(v) }

// feedsOf feeds a model's inputs in order.
func feedsOf(m *onnx.Model, values ...*tensor.Dense) vm.Feeds {
	f := vm.Feeds{}
	for i, n := range m.Inputs {
		f[n] = values[i]
	}
	return f
}

package onnx_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
	"google.golang.org/protobuf/proto"
	"gorgonia.org/tensor"
)

// cube is a custom op, x³, without an ONNX export.
type cube struct{}

func (cube) Name() string                             { return "Cube" }
func (cube) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }
func (cube) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	for i, v := range in[0].Float64s() {
		out.Float64s()[i] = v * v * v
	}
	return nil
}

// exportedCube is cube exporting itself as x·x·x.
type exportedCube struct{ cube }

func (exportedCube) ExportONNX(in []string, out string, _ []graph.Type, _ graph.Type) ([]*onnxpb.NodeProto, error) {
	sq := out + "/square"
	return []*onnxpb.NodeProto{
		{OpType: proto.String("Mul"), Input: []string{in[0], in[0]}, Output: []string{sq}},
		{OpType: proto.String("Mul"), Input: []string{sq, in[0]}, Output: []string{out}},
	}, nil
}

// softplus is a composite op: its forward is log(1 + eˣ) from built-in ops.
type softplus struct{}

func (softplus) Name() string { return "MySoftplus" }
func (softplus) Build(in []*graph.Node) *graph.Node {
	return ops.Log1p(ops.Exp(in[0]))
}
func (softplus) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{ops.Mul(g, ops.Sigmoid(ctx.Inputs()[0]))}
}

// TestExportCustomOps exports a custom op through Exporter and a composite
// as its subgraph, and refuses a custom op with neither, naming it.
func TestExportCustomOps(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	y := ops.Add(graph.Apply(exportedCube{}, x), graph.ApplyComposite(softplus{}, x))
	m := reimport(t, "", []*graph.Node{y}, onnx.ExportOptions{})
	in, _ := graph.FromFloat64s(graph.Float64, []float64{-1, 0.5, 2}, 3)
	got := run(t, vm.Feeds{m.Inputs[0]: in}, m.Outputs[0])[0]
	want, _ := graph.FromFloat64s(graph.Float64, []float64{-1 + 0.31326168751822286, 0.125 + 0.9740769841801067, 8 + 2.1269280110429727}, 3)
	if err := closeTo(got, want, 0, 1e-12); err != nil {
		t.Errorf("exported custom ops: %v", err)
	}

	_, err := onnx.Export([]*graph.Node{graph.Apply(cube{}, x)}, onnx.ExportOptions{})
	if err == nil || !strings.Contains(err.Error(), "nabla: onnx.Export: op Cube has no ONNX export: a custom op exports by implementing onnx.Exporter (built at export_test.go:") {
		t.Errorf("a custom op without export: got %v", err)
	}
}

// TestExportKeepsNamesAndSites checks initializer names and that every
// node's doc string is the file:line that built it.
func TestExportKeepsNamesAndSites(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float32, 2, 3)
	w := g.Param("layer.weight", graph.NewDense(graph.Float32, 3, 3))
	y := ops.Tanh(ops.MatMul(x, w))
	m, err := onnx.ExportProto([]*graph.Node{y}, onnx.ExportOptions{Opset: 13})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.GetOpsetImport()[0].GetVersion(); got != 13 {
		t.Errorf("opset %d, want 13", got)
	}
	if len(m.Graph.Initializer) != 1 || m.Graph.Initializer[0].GetName() != "layer.weight" {
		t.Errorf("initializers %v, want layer.weight", m.Graph.Initializer)
	}
	for _, n := range m.Graph.Node {
		if !strings.HasPrefix(n.GetDocString(), "export_test.go:") {
			t.Errorf("node %s: doc string %q, want this file's line", n.GetName(), n.GetDocString())
		}
	}
	for _, bad := range []onnx.ExportOptions{{Opset: 12}, {Opset: 22}} {
		if _, err := onnx.Export([]*graph.Node{y}, bad); err == nil || !strings.Contains(err.Error(), "want 13 to 21") {
			t.Errorf("opset %d: got %v", bad.Opset, err)
		}
	}
	if _, err := onnx.Export([]*graph.Node{y}, onnx.ExportOptions{OutputNames: []string{"layer.weight"}}); err == nil ||
		!strings.Contains(err.Error(), `output name "layer.weight" is taken by an input, a parameter or another output`) {
		t.Errorf("an output named as a parameter: got %v", err)
	}
	if _, err := onnx.Export([]*graph.Node{nil}, onnx.ExportOptions{}); err == nil || !strings.Contains(err.Error(), "output 0 is nil") {
		t.Errorf("a nil output: got %v", err)
	}
}

// TestExportOfTwoGraphs: outputs of two graphs are an error; Export wrote
// a model whose second output read a value no node made, which Import
// then refused ("input 0 is missing").
func TestExportOfTwoGraphs(t *testing.T) {
	g, other := graph.New(), graph.New()
	y := ops.Exp(g.Input("x", graph.Float32, 2, 3))
	z := ops.Neg(other.Input("z", graph.Float32, 2))
	for _, outs := range [][]*graph.Node{{y, z}, {z, y}} {
		_, err := onnx.Export(outs, onnx.ExportOptions{})
		want := "nabla: onnx.Export: output 1 (" + outs[1].String() + ") belongs to another graph than output 0 (" + outs[0].String() + "): a model is one graph at export_test.go:"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

// store is a parameter store whose Get gives v.
type store struct{ v *tensor.Dense }

func (s store) Get(*graph.Node) (*tensor.Dense, error) { return s.v, nil }
func (s store) Set(*graph.Node, *tensor.Dense) error   { return nil }

// TestExportValuesFromAStore: ExportOptions.Values giving a value of
// another dtype or shape than its parameter's, or none, is an error; a
// view is written in its elements' order. Export wrote each as it lay: an
// initializer of another dtype, of another shape with the parameter's
// dims, or of no data.
func TestExportValuesFromAStore(t *testing.T) {
	g := graph.New()
	w := g.Param("w", graph.NewDense(graph.Float32, 2, 3))
	y := ops.Neg(w)
	for _, c := range []struct {
		v    *tensor.Dense
		want string
	}{
		{graph.NewDense(graph.Float64, 2, 3), "the store gave float64(2,3), want float32(2,3)"},
		{graph.NewDense(graph.Float32, 3, 2), "the store gave float32(3,2), want float32(2,3)"},
		{nil, "the store gave no value (a nil or zero tensor.Dense) and no error"},
		{&tensor.Dense{}, "the store gave no value (a nil or zero tensor.Dense) and no error"},
	} {
		_, err := onnx.Export([]*graph.Node{y}, onnx.ExportOptions{Values: store{c.v}})
		want := `nabla: onnx.Export: ExportOptions.Values: parameter "w": ` + c.want + " at export_test.go:"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
	// Columns 1 to 3 of (0 1 2 3; 4 5 6 7): (1 2 3; 5 6 7).
	full := tensor.New(tensor.WithShape(2, 4), tensor.WithBacking([]float32{0, 1, 2, 3, 4, 5, 6, 7}))
	view, err := full.Slice(nil, tensor.S(1, 4))
	if err != nil {
		t.Fatal(err)
	}
	m := reimport(t, "", []*graph.Node{y}, onnx.ExportOptions{Values: store{view.(*tensor.Dense)}})
	if got := m.Params["w"].Value().Float32s(); !slices.Equal(got, []float32{1, 2, 3, 5, 6, 7}) {
		t.Errorf("a view's value: got %v, want [1 2 3 5 6 7]", got)
	}
}

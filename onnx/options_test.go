package onnx_test

import (
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

// TestImportOptions checks Frozen, InputShapes (over a symbolic batch),
// Constants and Inputs, and the errors their misuse gives.
func TestImportOptions(t *testing.T) {
	m := tinyModel() // y = Relu(x + w), x float32(2,3)
	m.Graph.Input[0].Type.GetTensorType().Shape.Dim[0].Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "batch"}
	data, _ := proto.Marshal(m)

	frozen, err := onnx.Import(data, onnx.Options{Frozen: true, InputShapes: map[string][]int{"x": {1, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(frozen.Params) != 0 || frozen.Inputs[0].Shape()[0] != 1 {
		t.Errorf("Frozen: params %v, input %v", frozen.Params, frozen.Inputs[0].Type())
	}
	trainable, err := onnx.Import(data, onnx.Options{InputShapes: map[string][]int{"x": {2, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if p := trainable.Params["w"]; p == nil || p.Kind() != graph.KindParam || p.Name() != "w" {
		t.Errorf("Params: %v", trainable.Params)
	}

	g := graph.New()
	x := g.Input("pixels", graph.Float32, 2, 3)
	bound, err := onnx.Import(data, onnx.Options{Graph: g, Inputs: map[string]*graph.Node{"x": ops.Scale(x, 2)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(bound.Inputs) != 0 {
		t.Errorf("a bound input is still among Inputs: %v", bound.InputNames)
	}
	in, _ := graph.FromFloat64s(graph.Float32, []float64{-1, 1, 2, -3, 0.5, 4}, 2, 3)
	got := run(t, vm.Feeds{x: in}, bound.Outputs[0])[0]
	want, _ := graph.FromFloat64s(graph.Float32, []float64{0, 2, 4, 0, 1, 8}, 2, 3) // w is zero
	if err := closeTo(got, want, 0, 0); err != nil {
		t.Errorf("bound input: %v", err)
	}

	constant, err := onnx.Import(data, onnx.Options{Constants: map[string]*tensor.Dense{"x": in}})
	if err != nil {
		t.Fatal(err)
	}
	if len(constant.Inputs) != 0 || constant.Outputs[0].Shape()[0] != 2 {
		t.Errorf("Constants: inputs %v, output %v", constant.InputNames, constant.Outputs[0].Type())
	}

	other := graph.New().Input("z", graph.Float32, 2, 3)
	for _, c := range []struct {
		opts onnx.Options
		want string
	}{
		{onnx.Options{}, `input "x": dimension 0 is symbolic ("batch"): give the shape in Options.InputShapes`},
		{onnx.Options{InputShapes: map[string][]int{"x": {2, 3}, "nope": {1}}}, `Options.InputShapes names "nope", which is not an input of the model`},
		{onnx.Options{Graph: graph.New(), Inputs: map[string]*graph.Node{"x": other}}, `Options.Inputs: "x" (input "z" #0 float32(2,3)) is not a node of Options.Graph`},
		{onnx.Options{Graph: other.Graph(), Inputs: map[string]*graph.Node{"w": other, "x": other}}, ""},
		{onnx.Options{Graph: g, Inputs: map[string]*graph.Node{"w": g.Input("w64", graph.Float64, 2, 3), "x": x}}, `Options.Inputs: "w" is float64(2,3), the model's is float32(2,3)`},
	} {
		_, err := onnx.Import(data, c.opts)
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.opts, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

// TestBoundShapesMatchTheModel: a node bound by Options.Inputs, or a value
// fixed by Options.Constants, of another shape than the model declares
// (its fixed dimensions, or Options.InputShapes) is an error; a (1,3) or
// (3) x broadcast against w (2,3) and the model computed y without a
// word. A symbolic dimension takes any size.
func TestBoundShapesMatchTheModel(t *testing.T) {
	data, _ := proto.Marshal(tinyModel()) // y = Relu(x + w), x and w float32(2,3)
	g := graph.New()
	for _, shape := range [][]int{{1, 3}, {3}, {2, 3, 1}} {
		x := g.Input("pixels", graph.Float32, shape...)
		want := `Options.Inputs: "x" is ` + x.Type().String() + ": the model declares (2,3)"
		if _, err := onnx.Import(data, onnx.Options{Graph: g, Inputs: map[string]*graph.Node{"x": x}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("x bound to %v: got %v, want an error containing %q", shape, err, want)
		}
		want = `Options.Constants: input "x": the value's shape is ` + graph.ShapeString(shape) + ": the model declares (2,3)"
		if _, err := onnx.Import(data, onnx.Options{Constants: map[string]*tensor.Dense{"x": graph.NewDense(graph.Float32, shape...)}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("x fixed to a %v value: got %v, want an error containing %q", shape, err, want)
		}
	}
	x := g.Input("pixels", graph.Float32, 2, 3)
	want := `Options.Inputs: "x" is float32(2,3): Options.InputShapes gives (1,3)`
	if _, err := onnx.Import(data, onnx.Options{Graph: g, Inputs: map[string]*graph.Node{"x": x}, InputShapes: map[string][]int{"x": {1, 3}}}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("x bound against InputShapes: got %v, want an error containing %q", err, want)
	}
	m := tinyModel()
	m.Graph.Input[0].Type.GetTensorType().Shape.Dim[0].Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "batch"}
	batch, _ := proto.Marshal(m)
	if _, err := onnx.Import(batch, onnx.Options{Graph: g, Inputs: map[string]*graph.Node{"x": g.Input("one", graph.Float32, 1, 3)}}); err != nil {
		t.Errorf("x (batch,3) bound to (1,3): %v", err)
	}
	want = `Options.Inputs: "x" is float32(1,4): the model declares (batch,3)`
	if _, err := onnx.Import(batch, onnx.Options{Graph: g, Inputs: map[string]*graph.Node{"x": g.Input("wide", graph.Float32, 1, 4)}}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("x (batch,3) bound to (1,4): got %v, want an error containing %q", err, want)
	}
}

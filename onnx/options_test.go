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

package onnx_test

import (
	"fmt"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/ops"
)

// A graph exported to ONNX and imported back: the parameters keep their
// names, and the imported graph differentiates like any other.
func Example() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 1, 2)
	w, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4}, 2, 2)
	y := ops.Tanh(ops.MatMul(x, g.Param("weight", w)))
	data, err := onnx.Export([]*graph.Node{y}, onnx.ExportOptions{OutputNames: []string{"y"}})
	if err != nil {
		fmt.Println(err)
		return
	}

	m, err := onnx.Import(data, onnx.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	grads, err := compile.Grad(ops.Sum(m.Outputs[0]), m.Params["weight"])
	fmt.Println(m.InputNames, m.OutputNames, m.Outputs[0].Type(), grads[0].Type(), err)
	// Output: [x] [y] float64(1,2) float64(2,2) <nil>
}

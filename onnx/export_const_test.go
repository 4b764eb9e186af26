package onnx_test

import (
	"math"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// PowConst of float32 values raises them, through float64, to its float64
// exponent: an exponent float32 cannot hold (1e-310, 0.1) exports so that
// the imported model computes the same bits at every opset. Written as a
// float32 constant, 1e-310 became 0, and (-0.5)^1e-310, NaN, became 1
// (found by FuzzExport).
func TestExportPowConstOfFloat32KeepsTheExponent(t *testing.T) {
	in, err := graph.FromFloat64s(graph.Float32, []float64{-0.5, 0.5, 2, 0, math.Inf(1), 3e38}, 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []float64{1e-310, 0.1, 1e300, 2, -1.5} {
		g := graph.New()
		x := g.Input("x", graph.Float32, 6)
		y := ops.PowConst(x, c)
		want := run(t, vm.Feeds{x: in}, y)[0]
		for i, v := range graph.Float64s(in) { // the reference: float64's Pow, rounded once
			if w := float64(float32(math.Pow(v, c))); math.Float64bits(w) != math.Float64bits(graph.Float64s(want)[i]) {
				t.Fatalf("PowConst(%v, %g) = %v, want %v", v, c, graph.Float64s(want)[i], w)
			}
		}
		for _, opset := range []int64{13, 21} {
			data, err := onnx.Export([]*graph.Node{y}, onnx.ExportOptions{Opset: opset})
			if err != nil {
				t.Fatal(err)
			}
			m, err := onnx.Import(data, onnx.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := run(t, vm.Feeds{m.Inputs[0]: in}, m.Outputs[0])[0]
			if got.Dtype() != graph.Float32 {
				t.Fatalf("exponent %g, opset %d: the model gives %v", c, opset, got.Dtype())
			}
			g, w := graph.Float64s(got), graph.Float64s(want)
			for i := range w {
				if math.Float64bits(g[i]) != math.Float64bits(w[i]) && !(math.IsNaN(g[i]) && math.IsNaN(w[i])) {
					t.Errorf("exponent %g, opset %d: element %d is %v after the round trip, %v before", c, opset, i, g[i], w[i])
				}
			}
		}
	}
}

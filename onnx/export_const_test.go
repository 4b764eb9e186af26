package onnx_test

import (
	"math"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
	"gorgonia.org/tensor"
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
			m := reimport(t, "", []*graph.Node{y}, onnx.ExportOptions{Opset: opset})
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

// Log1p exports accurately for every x: as log(1+x) it lost every digit of
// a small x (log1p(1e-20) = 1e-20 exported as 0, log1p(1e-10) with 8e-8
// relative error; found by FuzzExport). The reference is math.Log1p, to a
// few ulps of the dtype.
func TestExportLog1pIsAccurate(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 5e-324, -5e-324, 1e-300, 1e-40, 1e-20, -1e-20, 1e-10, 3e-8, -3e-8,
		1e-5, 0.25, -0.5, 0.999, -0.999999, 1, 3, 1e10, 1e300, math.MaxFloat64, math.Inf(1), -1, -2, math.Inf(-1), math.NaN()}
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
		tol := 4 * 0x1p-52
		if dtype == graph.Float32 {
			tol = 4 * 0x1p-23
		}
		in, err := graph.FromFloat64s(dtype, xs, len(xs))
		if err != nil {
			t.Fatal(err)
		}
		g := graph.New()
		x := g.Input("x", dtype, len(xs))
		data, err := onnx.Export([]*graph.Node{ops.Log1p(x)}, onnx.ExportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, got := range importRun(t, data, in) {
			v := graph.Float64s(in)[i]
			want := math.Log1p(v)
			if dtype == graph.Float32 {
				want = float64(float32(want))
			}
			if !(got == want || math.IsNaN(got) && math.IsNaN(want) || math.Abs(got-want) <= tol*math.Abs(want)) || math.Signbit(got) != math.Signbit(want) && !math.IsNaN(want) {
				t.Errorf("%v: log1p(%v) = %v after the round trip, want %v", dtype, v, got, want)
			}
		}
	}
}

// CrossEntropyOneHot of float32 logits and targets, which nabla sums in
// float64, exports so that a sum whose terms overflow float32 but whose
// total does not (targets 3.4e38 against logits 3.4e38 apart) stays finite
// and equal after the round trip; in float32 arithmetic the model gave NaN
// (found by FuzzExport).
func TestExportCrossEntropyOneHotOfFloat32SumsInDouble(t *testing.T) {
	v, err := graph.FromFloat64s(graph.Float32, []float64{1.2879535, 3.4028235e+38, -1.8594438, 0.5, -2, 1}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New()
	x := g.Input("x", graph.Float32, 2, 3)
	y := ops.CrossEntropyOneHot(x, x)
	want := graph.Float64s(run(t, vm.Feeds{x: v}, y)[0])
	// The reference: -Σ t·log softmax(x) in float64, rounded once.
	vals := graph.Float64s(v)
	for r := range 2 {
		row := vals[3*r : 3*r+3]
		m := math.Max(row[0], math.Max(row[1], row[2]))
		lse := m + math.Log(math.Exp(row[0]-m)+math.Exp(row[1]-m)+math.Exp(row[2]-m))
		sum := 0.0
		for _, z := range row {
			sum -= z * (z - lse)
		}
		if w := float64(float32(sum)); math.Abs(want[r]-w) > 1e-6*math.Abs(w) {
			t.Fatalf("row %d: nabla gives %v, want %v", r, want[r], w)
		}
	}
	for _, opset := range []int64{13, 21} {
		m := reimport(t, "", []*graph.Node{y}, onnx.ExportOptions{Opset: opset})
		got := run(t, vm.Feeds{m.Inputs[0]: v}, m.Outputs[0])[0]
		if got.Dtype() != graph.Float32 {
			t.Fatalf("opset %d: the model gives %v", opset, got.Dtype())
		}
		for r, u := range graph.Float64s(got) {
			if !(math.Abs(u-want[r]) <= 1e-6*math.Abs(want[r])) {
				t.Errorf("opset %d: row %d is %v after the round trip, %v before", opset, r, u, want[r])
			}
		}
	}
}

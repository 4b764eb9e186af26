package onnx_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
	"gorgonia.org/tensor"
)

// onnxRuntimeIfPresent returns the folder holding
// node_modules/onnxruntime-node: ONNXRUNTIME_NODE, or nabla-onnxruntime in
// the user's cache folder (npm install --ignore-scripts onnxruntime-node
// there); ok is false when it or node is missing.
func onnxRuntimeIfPresent() (dir string, ok bool) {
	dir = os.Getenv("ONNXRUNTIME_NODE")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", false
		}
		dir = filepath.Join(cache, "nabla-onnxruntime")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "onnxruntime-node")); err != nil {
		return "", false
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", false
	}
	return dir, true
}

// onnxRuntime is onnxRuntimeIfPresent, skipping the test without it.
func onnxRuntime(t *testing.T) string {
	dir, ok := onnxRuntimeIfPresent()
	if !ok {
		t.Skip("onnxruntime-node not found (npm install --ignore-scripts onnxruntime-node in $ONNXRUNTIME_NODE or ~/.cache/nabla-onnxruntime) or node missing")
	}
	return dir
}

// ortInput is a model input for ONNX Runtime.
type ortInput struct {
	Type string `json:"type"`
	Dims []int  `json:"dims"`
	Data any    `json:"data"`
}

// ortFloat is a number in ort_run.js's JSON, where NaN and the
// infinities, which JSON lacks, are the strings "NaN", "Infinity" and
// "-Infinity".
type ortFloat float64

func (f ortFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return json.Marshal(strings.TrimPrefix(strings.Replace(fmt.Sprint(v), "Inf", "Infinity", 1), "+"))
	}
	return json.Marshal(v)
}

func (f *ortFloat) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := strconv.ParseFloat(s, 64)
		*f = ortFloat(v)
		return err
	}
	return json.Unmarshal(b, (*float64)(f))
}

// ortFloats converts float64s for ort_run.js.
func ortFloats(v []float64) []ortFloat {
	out := make([]ortFloat, len(v))
	for i, x := range v {
		out[i] = ortFloat(x)
	}
	return out
}

// runORT runs a model file under ONNX Runtime with the given inputs and
// returns its outputs by name, as float64 tensors of dtype.
func runORT(t *testing.T, ort, model string, dtype tensor.Dtype, inputs map[string]ortInput) map[string]*tensor.Dense {
	t.Helper()
	got, err := tryORT(t, ort, model, dtype, inputs)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// tryORT is runORT returning ONNX Runtime's refusal of the model or its
// inputs as an error.
func tryORT(t *testing.T, ort, model string, dtype tensor.Dtype, inputs map[string]ortInput) (map[string]*tensor.Dense, error) {
	t.Helper()
	script, err := filepath.Abs("testdata/ort_run.js")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "inputs.json")
	if err := os.WriteFile(path, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("node", script, ort, model, path).Output()
	if err != nil {
		msg := ""
		if e, ok := err.(*exec.ExitError); ok {
			msg = string(e.Stderr)
		}
		return nil, fmt.Errorf("onnxruntime: %v: %s", err, msg)
	}
	var res map[string]struct {
		Dims []int
		Data []ortFloat
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]*tensor.Dense{}
	for name, r := range res {
		data := make([]float64, len(r.Data))
		for i, v := range r.Data {
			data[i] = float64(v)
		}
		if got[name], err = graph.FromFloat64s(dtype, data, r.Dims...); err != nil {
			t.Fatal(err)
		}
	}
	return got, nil
}

// TestONNXRuntimeRunsExports runs exported nets under ONNX Runtime and
// compares its outputs with nabla's, in float32 (1e-5), since ONNX
// Runtime's CPU kernels for Conv and its fused activations are float32
// only.
func TestONNXRuntimeRunsExports(t *testing.T) {
	ort := onnxRuntime(t)
	for name, build := range nets {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(9, 10))
			g := graph.New()
			x, y := build(g, r, graph.Float32)
			model := filepath.Join(t.TempDir(), "model.onnx")
			if err := onnx.WriteFile(model, []*graph.Node{y}, onnx.ExportOptions{OutputNames: []string{"y"}}); err != nil {
				t.Fatal(err)
			}
			in := randOf(r, graph.Float32, x.Shape()...)
			got := runORT(t, ort, model, graph.Float32, map[string]ortInput{x.Name(): {"float32", x.Shape(), in.Float32s()}})
			want := run(t, vm.Feeds{x: in}, y)[0]
			if err := closeTo(got["y"], want, 1e-5, 1e-5); err != nil {
				t.Errorf("onnxruntime against nabla: %v", err)
			}
		})
	}
}

// TestONNXRuntimeRunsTrainingPrograms runs the exported losses and
// gradients of the test nets (max and average pooling, convolutions,
// batch norm in training mode) under ONNX Runtime, an implementation of
// the ONNX ops independent of nabla's, and compares them with nabla's
// (float32, 1e-4).
func TestONNXRuntimeRunsTrainingPrograms(t *testing.T) {
	ort := onnxRuntime(t)
	for name, build := range nets {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(91, 92))
			g := graph.New()
			x, y := build(g, r, graph.Float32)
			wrt := paramsOf(g)
			if name == "cnn" { // a batch norm in training mode, before the rest
				bn := nn.NewBatchNorm2d(g, "bn", 3, 1e-3, 0.1, nn.WithDType(graph.Float32))
				wrt = append(wrt, bn.Weight, bn.Bias)
				replayed, err := graph.Replay(map[*graph.Node]*graph.Node{x: bn.Forward(x)}, y)
				if err != nil {
					t.Fatal(err)
				}
				y = replayed[y]
			}
			loss := ops.Sum(ops.Mul(ops.Square(y), g.Const(randOf(r, graph.Float32, y.Shape()...))))
			grads, err := compile.Gradients([]*graph.Node{loss}, nil, append([]*graph.Node{x}, wrt...))
			if err != nil {
				t.Fatal(err)
			}
			outs := append([]*graph.Node{loss}, grads...)
			names := make([]string, len(outs))
			for i := range names {
				names[i] = fmt.Sprintf("out%d", i)
			}
			path := filepath.Join(t.TempDir(), "train.onnx")
			if err := onnx.WriteFile(path, outs, onnx.ExportOptions{OutputNames: names}); err != nil {
				t.Fatal(err)
			}
			in := randOf(r, graph.Float32, x.Shape()...)
			got := runORT(t, ort, path, graph.Float32, map[string]ortInput{x.Name(): {"float32", x.Shape(), in.Float32s()}})
			want := run(t, vm.Feeds{x: in}, outs...)
			for i, name := range names {
				if err := closeTo(got[name], want[i], 1e-4, 1e-5); err != nil {
					t.Errorf("%s: onnxruntime against nabla: %v", name, err)
				}
			}
		})
	}
}

// TestONNXRuntimeRunsRewrittenExports runs, under ONNX Runtime, the
// exports that are not one ONNX op each: Log1p (Goldberg's form, exact
// for small x where log(1+x) is 0), PowConst of float32 by an exponent
// float32 cannot hold (through double), CrossEntropyOneHot of float32
// (summed in double) and a Reshape to an empty shape (allowzero), and
// compares them with nabla's values (float32, 1e-6).
func TestONNXRuntimeRunsRewrittenExports(t *testing.T) {
	ort := onnxRuntime(t)
	vals := []float32{1e-10, -3e-8, 1e-5, 0.25, -0.5, 3}
	in, err := graph.FromFloat64s(graph.Float32, graph.Float64s(tensor.New(tensor.WithBacking(vals))), 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New()
	x := g.Input("x", graph.Float32, 2, 3)
	outs := []*graph.Node{
		ops.Log1p(x),
		ops.PowConst(ops.Abs(x), 0.1),
		ops.CrossEntropyOneHot(x, ops.Softmax(x, 1)),
		ops.Reshape(ops.Slice(x, 0, 0, 0), 3, 0),
	}
	names := []string{"log1p", "pow", "xent", "empty"}
	model := filepath.Join(t.TempDir(), "model.onnx")
	if err := onnx.WriteFile(model, outs, onnx.ExportOptions{OutputNames: names}); err != nil {
		t.Fatal(err)
	}
	got := runORT(t, ort, model, graph.Float32, map[string]ortInput{"x": {"float32", x.Shape(), vals}})
	want := run(t, vm.Feeds{x: in}, outs...)
	for i, name := range names {
		if err := closeTo(got[name], want[i], 1e-6, 0); err != nil {
			t.Errorf("%s: onnxruntime against nabla: %v", name, err)
		}
	}
}

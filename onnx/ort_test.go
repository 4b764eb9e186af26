package onnx_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/vm"
)

// onnxRuntime returns the folder holding node_modules/onnxruntime-node:
// ONNXRUNTIME_NODE, or nabla-onnxruntime in the user's cache folder
// (npm install --ignore-scripts onnxruntime-node there).
func onnxRuntime(t *testing.T) string {
	dir := os.Getenv("ONNXRUNTIME_NODE")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("onnxruntime-node: no cache folder: %v", err)
		}
		dir = filepath.Join(cache, "nabla-onnxruntime")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "onnxruntime-node")); err != nil {
		t.Skipf("onnxruntime-node not found (npm install --ignore-scripts onnxruntime-node in $ONNXRUNTIME_NODE): %v", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node not found: %v", err)
	}
	return dir
}

// TestONNXRuntimeRunsExports runs exported nets under ONNX Runtime and
// compares its outputs with nabla's, in float32 (1e-5), since ONNX
// Runtime's CPU kernels for Conv and its fused activations are float32
// only.
func TestONNXRuntimeRunsExports(t *testing.T) {
	ort := onnxRuntime(t)
	script, err := filepath.Abs("testdata/ort_run.js")
	if err != nil {
		t.Fatal(err)
	}
	for name, build := range nets {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(9, 10))
			g := graph.New()
			x, y := build(g, r, graph.Float32)
			dir := t.TempDir()
			model := filepath.Join(dir, "model.onnx")
			if err := onnx.WriteFile(model, []*graph.Node{y}, onnx.ExportOptions{OutputNames: []string{"y"}}); err != nil {
				t.Fatal(err)
			}
			in := randOf(r, graph.Float32, x.Shape()...)
			spec, _ := json.Marshal(map[string]any{x.Name(): map[string]any{"type": "float32", "dims": x.Shape(), "data": in.Float32s()}})
			inputs := filepath.Join(dir, "inputs.json")
			if err := os.WriteFile(inputs, spec, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("node", script, ort, model, inputs).Output()
			if err != nil {
				msg := ""
				if e, ok := err.(*exec.ExitError); ok {
					msg = string(e.Stderr)
				}
				t.Fatalf("onnxruntime: %v: %s", err, msg)
			}
			var res map[string]struct {
				Dims []int
				Data []float64
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}
			got, err := graph.FromFloat64s(graph.Float32, res["y"].Data, res["y"].Dims...)
			if err != nil {
				t.Fatal(err)
			}
			want := run(t, vm.Feeds{x: in}, y)[0]
			if err := closeTo(got, want, 1e-5, 1e-5); err != nil {
				t.Errorf("onnxruntime against nabla: %v", err)
			}
		})
	}
}

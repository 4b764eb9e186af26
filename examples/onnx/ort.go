package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/data"
	"github.com/nabla-go/nabla/graph"
)

// onnxRuntime returns the folder holding node_modules/onnxruntime-node:
// dir, $ONNXRUNTIME_NODE, or nabla-onnxruntime in the user's cache folder
// (npm install --ignore-scripts onnxruntime-node there), or why there is
// none.
func onnxRuntime(dir string) (string, string) {
	if dir == "" {
		dir = os.Getenv("ONNXRUNTIME_NODE")
	}
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", err.Error()
		}
		dir = filepath.Join(cache, "nabla-onnxruntime")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "onnxruntime-node")); err != nil {
		return "", fmt.Sprintf("onnxruntime-node not found in %s (npm install --ignore-scripts onnxruntime-node there, or give -ort)", dir)
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", "node not found"
	}
	return dir, ""
}

// compareORT runs the exported model under ONNX Runtime on the test
// images (through onnx/testdata/ort_run.js) and compares its logits and
// classes with nabla's; without ONNX Runtime it says why and goes on.
func compareORT(cfg Config, res *Result, input string, images *tensor.Dense, want []float64, out io.Writer) error {
	dir, why := onnxRuntime(cfg.ORT)
	if dir == "" {
		res.ORTSkipped = why
		fmt.Fprintf(out, "skipped the ONNX Runtime check: %s\n", why)
		return nil
	}
	spec, err := json.Marshal(map[string]any{input: map[string]any{"type": "float32", "dims": images.Shape(), "data": graph.Float64s(images)}})
	if err != nil {
		return err
	}
	inputs := filepath.Join(filepath.Dir(res.Exported), "inputs.json")
	if err := os.WriteFile(inputs, spec, 0o644); err != nil {
		return err
	}
	defer os.Remove(inputs)
	cmd := exec.Command("node", find("onnx", "testdata", "ort_run.js"), dir, res.Exported, inputs)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("onnx example: onnxruntime: %w", err)
	}
	var outs map[string]struct {
		Dims []int
		Data []float64
	}
	if err := json.Unmarshal(raw, &outs); err != nil {
		return fmt.Errorf("onnx example: onnxruntime's output: %w", err)
	}
	got := outs["logits"].Data
	if len(got) != len(want) {
		return fmt.Errorf("onnx example: onnxruntime gave %d logits, nabla %d", len(got), len(want))
	}
	res.ORT = true
	for i := 0; i < len(want); i += 10 {
		if data.Argmax(got[i:i+10]) == data.Argmax(want[i:i+10]) {
			res.ORTAgree++
		}
	}
	for i := range want {
		res.ORTMaxDiff = max(res.ORTMaxDiff, math.Abs(got[i]-want[i]))
	}
	fmt.Fprintf(out, "ONNX Runtime on the exported model: the same class for %d of %d test images, logits within %.1e\n", res.ORTAgree, res.Tests, res.ORTMaxDiff)
	return nil
}

package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/onnx"
)

// TestFineTune runs the example for one epoch and checks each step: the
// import predicts as PyTorch did (testdata/cnn.json), fine-tuning raises
// the accuracy, the export imports back, ONNX Runtime (when installed)
// predicts nabla's classes, and the Hessian–vector product agrees with
// central differences of the gradient.
func TestFineTune(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Epochs = 1
	cfg.Out = filepath.Join(t.TempDir(), "tuned.onnx")
	var out bytes.Buffer
	res, err := Run(cfg, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())

	raw, err := os.ReadFile(filepath.Join("testdata", "cnn.json"))
	if err != nil {
		t.Fatal(err)
	}
	var torch struct {
		Logits   [][]float64 `json:"logits"`
		Accuracy float64     `json:"accuracy"`
	}
	if err := json.Unmarshal(raw, &torch); err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Imported-torch.Accuracy) > 1e-12 {
		t.Errorf("the imported model's test accuracy is %v, PyTorch's %v", res.Imported, torch.Accuracy)
	}
	for i, row := range torch.Logits {
		for j, want := range row {
			if got := res.Logits[i*10+j]; math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
				t.Errorf("test image %d, class %d: logit %v, PyTorch's %v", i, j, got, want)
			}
		}
	}
	if len(res.Accuracy) != 1 || !(res.Accuracy[0] > res.Imported+0.05) {
		t.Errorf("accuracy %v after an epoch of fine-tuning from %v", res.Accuracy, res.Imported)
	}
	m, err := onnx.ImportFile(cfg.Out, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.OutputNames[0] != "logits" || m.Outputs[0].Shape()[0] != res.Tests {
		t.Errorf("the export's outputs: %v %v", m.OutputNames, m.Outputs)
	}
	if res.ORT {
		if res.ORTAgree != res.Tests || res.ORTMaxDiff > 1e-4 {
			t.Errorf("ONNX Runtime agrees on %d of %d classes, logits within %v", res.ORTAgree, res.Tests, res.ORTMaxDiff)
		}
	} else if !strings.Contains(out.String(), "skipped the ONNX Runtime check: ") {
		t.Errorf("without ONNX Runtime the example must say so:\n%s", out.String())
	}
	if !(res.HVPRelErr < 1e-3) || !(res.HVPNorm > 0) {
		t.Errorf("Hessian–vector product: |H·v| %v, relative difference from central differences %v", res.HVPNorm, res.HVPRelErr)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/ops"
)

// TestONNXCommand exports a small model, runs the command on it and checks
// what it prints and the DOT it writes.
func TestONNXCommand(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	w := g.Param("w", graph.NewDense(graph.Float64, 3, 4))
	y := ops.ReLU(ops.MatMul(x, w))
	dir := t.TempDir()
	path := filepath.Join(dir, "m.onnx")
	if err := onnx.WriteFile(path, []*graph.Node{y}, onnx.ExportOptions{OutputNames: []string{"y"}}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run([]string{"onnx", path}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  MatMul                   1\n", "  Relu                     1\n", "  x float64(2,3)\n", "  y float64(2,4)\n", "parameters: 1 tensors, 12 values\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	dot, err := os.ReadFile(filepath.Join(dir, "m.dot"))
	if err != nil || !strings.HasPrefix(string(dot), "digraph") {
		t.Errorf("DOT: %v, %.40q", err, dot)
	}
	if err := run([]string{"onnx", filepath.Join(dir, "missing.onnx")}, &out); err == nil {
		t.Errorf("a missing file: no error")
	}
}

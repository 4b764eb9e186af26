package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/cputime"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// importWidth and importLayers size BenchmarkONNXImport's model: four
// 2560×2560 float32 weights, 105 MB.
const importWidth, importLayers = 2560, 4

// BenchmarkONNXImport times onnx.Import of a 105 MB model that nabla
// exports (a perceptron of four 2560×2560 float32 layers) from the bytes
// in memory, and reports the bytes Import allocates over the weights'
// bytes (alloc/weights): 1 would be one copy of the weights.
func BenchmarkONNXImport(b *testing.B) {
	data, weights := importBenchModel(b)
	benchImport(b, data, weights, func() (*onnx.Model, error) { return onnx.Import(data, onnx.Options{}) })
}

// BenchmarkONNXImportFile times onnx.ImportFile of the same model from a
// file, and reports alloc/weights as BenchmarkONNXImport does.
func BenchmarkONNXImportFile(b *testing.B) {
	data, weights := importBenchModel(b)
	path := filepath.Join(b.TempDir(), "mlp.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	benchImport(b, data, weights, func() (*onnx.Model, error) { return onnx.ImportFile(path, onnx.Options{}) })
}

// importBenchModel exports the import benchmarks' model and returns its
// bytes and its weights' bytes.
func importBenchModel(b *testing.B) (data []byte, weights int) {
	g := graph.New()
	x := g.Input("x", graph.Float32, 1, importWidth)
	r := rand.New(rand.NewPCG(1, 2))
	h := x
	for i := range importLayers {
		vals := make([]float32, importWidth*importWidth)
		for j := range vals {
			vals[j] = float32(r.NormFloat64()) / 50
		}
		w := g.Param(fmt.Sprintf("fc%d.weight", i), tensor.New(tensor.WithShape(importWidth, importWidth), tensor.WithBacking(vals)))
		h = ops.Tanh(ops.MatMul(h, w))
		weights += 4 * len(vals)
	}
	data, err := onnx.Export([]*graph.Node{h}, onnx.ExportOptions{OutputNames: []string{"y"}})
	if err != nil {
		b.Fatal(err)
	}
	return data, weights
}

// benchImport times imp, which imports the model data, and reports
// alloc/weights and the model's MB.
func benchImport(b *testing.B, data []byte, weights int, imp func() (*onnx.Model, error)) {
	runtime.GC()
	b.SetBytes(int64(weights))
	b.ResetTimer()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range b.N {
		m, err := imp()
		if err != nil {
			b.Fatal(err)
		}
		if len(m.Params) != importLayers {
			b.Fatalf("%d parameters, want %d", len(m.Params), importLayers)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(weights), "alloc/weights")
	b.ReportMetric(float64(len(data))/1e6, "MB")
}

// inferenceModels are the PyTorch models BenchmarkONNXInference imports,
// which bench/torch/onnx_models.py exports; inferenceShapes their inputs'
// shapes after the batch.
var (
	inferenceModels = []string{"lenet", "mlp", "encoder"}
	inferenceShapes = map[string][]int{"lenet": {1, 28, 28}, "mlp": {784}, "encoder": {16, 64}}
)

var onnxModels struct {
	once sync.Once
	dir  string
	err  error
}

// onnxModelDir returns the folder of the exported models: $NABLA_ONNX_MODELS,
// or a temporary folder that bench/torch/onnx_models.py fills once; it
// skips the benchmark without torch.
func onnxModelDir(b *testing.B) string {
	if dir := os.Getenv("NABLA_ONNX_MODELS"); dir != "" {
		return dir
	}
	onnxModels.once.Do(func() {
		python := os.Getenv("PYTHON")
		if python == "" {
			python = "/usr/bin/python3"
		}
		onnxModels.dir, onnxModels.err = os.MkdirTemp("", "nabla-onnx-bench")
		if onnxModels.err != nil {
			return
		}
		out, err := exec.Command(python, filepath.Join("torch", "onnx_models.py"), onnxModels.dir).CombinedOutput()
		if err != nil {
			onnxModels.err = fmt.Errorf("bench/torch/onnx_models.py: %v: %s", err, out)
		}
	})
	if onnxModels.err != nil {
		b.Skipf("skipped: %v", onnxModels.err)
	}
	if _, err := os.Stat(filepath.Join(onnxModels.dir, "lenet.onnx")); err != nil {
		b.Skip("skipped: torch not installed (bench/torch/onnx_models.py wrote no models)")
	}
	return onnxModels.dir
}

// BenchmarkONNXInference times one forward pass of PyTorch's LeNet (with
// batch norm), MLP (GELU, LayerNorm) and TransformerEncoderLayer, exported
// by torch.onnx.export and imported by onnx.ImportFile at batch 1 and 64,
// on one thread (vm.WithThreads(1)), float32. us/op; bench/torch/ort_bench.js
// times ONNX Runtime on the same files.
func BenchmarkONNXInference(b *testing.B) {
	dir := onnxModelDir(b)
	for _, name := range inferenceModels {
		for _, batch := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/batch=%d", name, batch), func(b *testing.B) {
				shape := append([]int{batch}, inferenceShapes[name]...)
				m, err := onnx.ImportFile(filepath.Join(dir, name+".onnx"), onnx.Options{InputShapes: map[string][]int{"x": shape}, Frozen: true})
				if err != nil {
					b.Fatal(err)
				}
				prog, err := compile.Compile(m.Outputs)
				if err != nil {
					b.Fatal(err)
				}
				machine, err := vm.New(prog, vm.WithThreads(1))
				if err != nil {
					b.Fatal(err)
				}
				vals := make([]float32, graph.ShapeSize(shape))
				for i := range vals {
					vals[i] = float32(math.Sin(float64(i)))
				}
				feeds := vm.Feeds{m.Inputs[0]: tensor.New(tensor.WithShape(shape...), tensor.WithBacking(vals))}
				if err := machine.Run(feeds); err != nil {
					b.Fatal(err)
				}
				runtime.LockOSThread() // one thread runs it all: its CPU clock times it
				defer runtime.UnlockOSThread()
				b.ResetTimer()
				cpu0, cpuOK := cputime.Thread()
				for range b.N {
					if err := machine.Run(feeds); err != nil {
						b.Fatal(err)
					}
				}
				cpu1, _ := cputime.Thread()
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/op")
				if cpuOK {
					b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
				}
			})
		}
	}
}

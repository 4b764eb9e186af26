package onnx_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
	"gorgonia.org/tensor"
)

// torchModels are the models testdata/torch/export.py exports from PyTorch.
var torchModels = []string{"lenet", "mlp", "encoder", "lstm", "gru", "embedding"}

// flatTensor is a tensor of a fixture: its shape and row-major values.
type flatTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// dense returns the tensor as dtype.
func (f flatTensor) dense(t *testing.T, dtype tensor.Dtype) *tensor.Dense {
	t.Helper()
	var d *tensor.Dense
	var err error
	if graph.IsInteger(dtype) {
		ints := make([]int64, len(f.Data))
		for i, v := range f.Data {
			ints[i] = int64(v)
		}
		d, err = graph.FromInt64s(dtype, ints, f.Shape...)
	} else {
		d, err = graph.FromFloat64s(dtype, f.Data, f.Shape...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// torchFixture is what export.py writes beside each model: the inputs,
// PyTorch's outputs in float32 and float64, the projection that makes
// them a scalar, autograd's gradients of that scalar (float64) by ONNX
// name, and one Hessian–vector product.
type torchFixture struct {
	Inputs    map[string]flatTensor `json:"inputs"`
	Outputs32 map[string]flatTensor `json:"outputs32"`
	Outputs   map[string]flatTensor `json:"outputs"`
	Proj      map[string]flatTensor `json:"proj"`
	Grads     map[string]flatTensor `json:"grads"`
	HVP       struct {
		Wrt   string     `json:"wrt"`
		V     flatTensor `json:"v"`
		Value flatTensor `json:"value"`
	} `json:"hvp"`
}

// readTorchFixture reads testdata/torch/NAME.json.
func readTorchFixture(t *testing.T, name string) *torchFixture {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "torch", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	f := &torchFixture{}
	if err := json.Unmarshal(data, f); err != nil {
		t.Fatal(err)
	}
	return f
}

// torchFeeds feeds a model's inputs the fixture's values, floats as dtype.
func torchFeeds(t *testing.T, m *onnx.Model, f *torchFixture) vm.Feeds {
	t.Helper()
	feeds := vm.Feeds{}
	for i, name := range m.InputNames {
		in, ok := f.Inputs[name]
		if !ok {
			t.Fatalf("the fixture has no input %q", name)
		}
		feeds[m.Inputs[i]] = in.dense(t, m.Inputs[i].DType())
	}
	return feeds
}

// TestPyTorchModelsFloat32 imports the float32 exports of PyTorch's
// models and compares their outputs with PyTorch's float32 outputs
// (relative 1e-5 of the output's largest magnitude, elementwise).
func TestPyTorchModelsFloat32(t *testing.T) {
	for _, name := range torchModels {
		t.Run(name, func(t *testing.T) {
			f := readTorchFixture(t, name)
			m, err := onnx.ImportFile(filepath.Join("testdata", "torch", name+".onnx"), onnx.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := run(t, torchFeeds(t, m, f), m.Outputs...)
			for i, oname := range m.OutputNames {
				want := f.Outputs32[oname].dense(t, graph.Float32)
				if err := closeTo(got[i], want, 1e-5, 1e-5*maxAbs(want)); err != nil {
					t.Errorf("output %q against PyTorch (float32): %v", oname, err)
				}
			}
		})
	}
}

// TestPyTorchModelsFloat64 imports the float64 exports of PyTorch's
// models and compares, against PyTorch in float64, their outputs (1e-12)
// and the gradients by autograd of L = Σ outputs·proj with respect to the
// float inputs and every parameter, and one Hessian–vector product
// (relative 1e-10, absolute 1e-12 of the largest): compile.Gradients and
// compile.HVP (forward over reverse) on the imported graph against
// autograd and its double backward. The float64 files are PyTorch's own
// exports of model.double(), so that the comparison is of the imported
// graph, not of float32 rounding; their float attributes (epsilon) are
// float32 in ONNX, read as the decimals PyTorch computes with.
func TestPyTorchModelsFloat64(t *testing.T) {
	for _, name := range torchModels {
		t.Run(name, func(t *testing.T) {
			f := readTorchFixture(t, name)
			m, err := onnx.ImportFile(filepath.Join("testdata", "torch", name+"_f64.onnx"), onnx.Options{})
			if err != nil {
				t.Fatal(err)
			}
			g := m.Graph
			var terms []*graph.Node
			for i, oname := range m.OutputNames {
				p, ok := f.Proj[oname]
				if !ok {
					t.Fatalf("the fixture has no projection of output %q", oname)
				}
				terms = append(terms, ops.Sum(ops.Mul(m.Outputs[i], g.Const(p.dense(t, graph.Float64)))))
			}
			loss := terms[0]
			for _, term := range terms[1:] {
				loss = ops.Add(loss, term)
			}
			byName := map[string]*graph.Node{}
			for i, n := range m.InputNames {
				byName[n] = m.Inputs[i]
			}
			for n, p := range m.Params {
				byName[n] = p
			}
			var names []string
			var wrt []*graph.Node
			for _, n := range keysOf(f.Grads) {
				node, ok := byName[n]
				if !ok {
					t.Fatalf("PyTorch differentiates %q, which the import has neither as input nor as parameter", n)
				}
				names, wrt = append(names, n), append(wrt, node)
			}
			grads, err := compile.Gradients([]*graph.Node{loss}, nil, wrt)
			if err != nil {
				t.Fatal(err)
			}
			x := byName[f.HVP.Wrt]
			v := g.Const(f.HVP.V.dense(t, graph.Float64))
			hvp, err := compile.HVP(loss, x, v)
			if err != nil {
				t.Fatal(err)
			}
			got := run(t, torchFeeds(t, m, f), append(append(append([]*graph.Node{}, m.Outputs...), grads...), hvp)...)
			for i, oname := range m.OutputNames {
				if err := closeTo(got[i], f.Outputs[oname].dense(t, graph.Float64), 1e-12, 1e-13); err != nil {
					t.Errorf("output %q against PyTorch (float64): %v", oname, err)
				}
			}
			got = got[len(m.Outputs):]
			for i, n := range names {
				want := f.Grads[n].dense(t, graph.Float64)
				if err := closeTo(got[i], want, 1e-10, 1e-12*maxAbs(want)); err != nil {
					t.Errorf("dL/d(%s) against PyTorch's autograd: %v", n, err)
				}
			}
			want := f.HVP.Value.dense(t, graph.Float64)
			if err := closeTo(got[len(names)], want, 1e-10, 1e-12*maxAbs(want)); err != nil {
				t.Errorf("Hessian–vector product w.r.t. %s against PyTorch's double backward: %v", f.HVP.Wrt, err)
			}
		})
	}
}

// maxAbs returns the largest magnitude of a tensor's values.
func maxAbs(d *tensor.Dense) float64 {
	m := 0.0
	for _, v := range graph.Float64s(d) {
		m = max(m, v, -v)
	}
	return m
}

// keysOf returns a map's keys, sorted.
func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestPyTorchModelsReexport exports the imported PyTorch models again with
// nabla and imports that: the values must be those of the first import
// (float64, 1e-12), and ONNX Runtime running nabla's float32 export must
// give PyTorch's float32 outputs (1e-5 of the largest), recurrent layers
// included (nabla writes them as Scan loops).
func TestPyTorchModelsReexport(t *testing.T) {
	ort, haveORT := onnxRuntimeIfPresent()
	for _, name := range torchModels {
		t.Run(name, func(t *testing.T) {
			f := readTorchFixture(t, name)
			for _, file := range []string{name + "_f64.onnx", name + ".onnx"} {
				m, err := onnx.ImportFile(filepath.Join("testdata", "torch", file), onnx.Options{})
				if err != nil {
					t.Fatal(err)
				}
				want := run(t, torchFeeds(t, m, f), m.Outputs...)
				path := filepath.Join(t.TempDir(), file)
				if err := onnx.WriteFile(path, m.Outputs, onnx.ExportOptions{OutputNames: m.OutputNames}); err != nil {
					t.Fatal(err)
				}
				back, err := onnx.ImportFile(path, onnx.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if len(back.Params) != len(m.Params) || len(back.InputNames) != len(m.InputNames) {
					t.Fatalf("%s: %d parameters and inputs %v after the round trip, want %d and %v", file, len(back.Params), back.InputNames, len(m.Params), m.InputNames)
				}
				got := run(t, torchFeeds(t, back, f), back.Outputs...)
				for i, oname := range m.OutputNames {
					if err := closeTo(got[i], want[i], 1e-12, 1e-12); err != nil {
						t.Errorf("%s: output %q after nabla's export and import: %v", file, oname, err)
					}
				}
				if file != name+".onnx" || !haveORT {
					continue
				}
				inputs := map[string]ortInput{}
				for i, iname := range m.InputNames {
					in := f.Inputs[iname]
					typ := "float32"
					if graph.IsInteger(m.Inputs[i].DType()) {
						typ = "int64"
					}
					inputs[iname] = ortInput{typ, in.Shape, in.Data}
				}
				res := runORT(t, ort, path, graph.Float32, inputs)
				for _, oname := range m.OutputNames {
					want := f.Outputs32[oname].dense(t, graph.Float32)
					if err := closeTo(res[oname], want, 1e-5, 1e-5*maxAbs(want)); err != nil {
						t.Errorf("ONNX Runtime on nabla's export of %s, output %q, against PyTorch: %v", file, oname, err)
					}
				}
			}
		})
	}
}

// TestConvBiasAndBatchNormImportAsChannelAffine checks that the LeNet's
// convolution biases and inference batch norms import as ops.ChannelAffine
// (one pass with its own kernel and gradients) rather than broadcast
// arithmetic over (C, 1, 1) reshapes, which ran several times slower.
func TestConvBiasAndBatchNormImportAsChannelAffine(t *testing.T) {
	m, err := onnx.ImportFile(filepath.Join("testdata", "torch", "lenet.onnx"), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, n := range m.Graph.Nodes() {
		if n.Kind() == graph.KindOp && n.Type().Rank() == 4 {
			count[n.OpName()]++
		}
	}
	if count["ChannelAffine"] != 4 || count["Add"]+count["Mul"] != 0 {
		t.Errorf("4-D ops of the imported LeNet: %v, want 4 ChannelAffine (2 biases, 2 batch norms) and no Add or Mul", count)
	}
}

// TestFrozenBatchNormFoldsIntoConv checks that, with constant weights
// (Frozen), the LeNet's inference batch norms fold into the convolutions
// before them, which then run with one bias pass each and no pass of
// their own, and that the outputs still match PyTorch's to float32
// rounding (as TestPyTorchModelsFloat32).
func TestFrozenBatchNormFoldsIntoConv(t *testing.T) {
	f := readTorchFixture(t, "lenet")
	m, err := onnx.ImportFile(filepath.Join("testdata", "torch", "lenet.onnx"), onnx.Options{Frozen: true})
	if err != nil {
		t.Fatal(err)
	}
	prog, err := compile.Compile(m.Outputs)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, in := range prog.Instructions() {
		count[in.Name()]++
	}
	if count["Conv2D"] != 2 || count["ChannelAffine"] != 2 {
		t.Errorf("instructions of the frozen LeNet: %v, want 2 Conv2D and 2 ChannelAffine (the biases, batch norms folded in)", count)
	}
	got := run(t, torchFeeds(t, m, f), m.Outputs...)
	want := f.Outputs32[m.OutputNames[0]].dense(t, graph.Float32)
	if err := closeTo(got[0], want, 1e-5, 1e-5*maxAbs(want)); err != nil {
		t.Errorf("frozen LeNet against PyTorch (float32): %v", err)
	}
}

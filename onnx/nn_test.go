package onnx_test

import (
	"math/rand/v2"
	"path/filepath"
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

// modules are nn layers in evaluation mode, each applied to an input of
// the given dtype.
var modules = map[string]func(g *graph.Graph, dt tensor.Dtype) (x, y *graph.Node){
	"Linear": func(g *graph.Graph, dt tensor.Dtype) (x, y *graph.Node) {
		x = g.Input("x", dt, 2, 3)
		return x, nn.NewLinear(g, "fc", 3, 4, true, nn.WithDType(dt)).Forward(x)
	},
	"Conv2d+BatchNorm2d": func(g *graph.Graph, dt tensor.Dtype) (x, y *graph.Node) {
		x = g.Input("x", dt, 2, 3, 6, 6)
		bn := nn.NewBatchNorm2d(g, "bn", 4, 1e-5, 0.1, nn.WithDType(dt))
		nn.SetTraining(bn, false)
		return x, bn.Forward(nn.NewConv2d(g, "conv", 3, 4, []int{3}, true, ops.ConvOptions{Padding: []int{1}}, nn.WithDType(dt)).Forward(x))
	},
	"Embedding+LayerNorm": func(g *graph.Graph, dt tensor.Dtype) (x, y *graph.Node) {
		x = g.Input("tokens", graph.Int64, 2, 3)
		emb := nn.NewEmbedding(g, "emb", 10, 4, nn.WithDType(dt))
		return x, nn.NewLayerNorm(g, "ln", 4, 1e-5, nn.WithDType(dt)).Forward(emb.Forward(x))
	},
	"LSTM": func(g *graph.Graph, dt tensor.Dtype) (x, y *graph.Node) {
		x = g.Input("x", dt, 5, 2, 3)
		return x, nn.NewLSTM(g, "lstm", 3, 4, nn.RecurrentConfig{Layers: 2, Bidirectional: true}, nn.WithDType(dt)).Forward(x)
	},
	"GRU": func(g *graph.Graph, dt tensor.Dtype) (x, y *graph.Node) {
		x = g.Input("x", dt, 2, 5, 3)
		return x, nn.NewGRU(g, "gru", 3, 4, nn.RecurrentConfig{BatchFirst: true}, nn.WithDType(dt)).Forward(x)
	},
	"TransformerBlock": func(g *graph.Graph, dt tensor.Dtype) (x, y *graph.Node) {
		x = g.Input("x", dt, 2, 5, 4)
		b := nn.NewTransformerBlock(g, "block", 4, 2, 8, 0.1, true, nn.WithDType(dt))
		nn.SetTraining(b, false)
		return x, b.Forward(x)
	},
}

// moduleInput is a random input for x: token ids for an integer input.
func moduleInput(r *rand.Rand, x *graph.Node) *tensor.Dense {
	if graph.IsInteger(x.DType()) {
		vals := make([]int64, x.Type().Size())
		for i := range vals {
			vals[i] = r.Int64N(10)
		}
		t, _ := graph.FromInt64s(x.DType(), vals, x.Shape()...)
		return t
	}
	return randOf(r, x.DType(), x.Shape()...)
}

// TestNNModulesExport exports graphs of nn's layers (whose custom ops
// export as their decompositions) and checks the values after importing
// them back (float64, 1e-12) and under ONNX Runtime (float32, 1e-5).
func TestNNModulesExport(t *testing.T) {
	ort, haveORT := onnxRuntimeIfPresent()
	for name, build := range modules {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(51, 52))
			g := graph.New()
			x, y := build(g, graph.Float64)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			m := reimport(t, "", []*graph.Node{y}, onnx.ExportOptions{OutputNames: []string{"y"}})
			in := moduleInput(r, x)
			want := run(t, vm.Feeds{x: in}, y)[0]
			got := run(t, vm.Feeds{m.Inputs[0]: in}, m.Outputs[0])[0]
			if err := closeTo(got, want, 0, 1e-12); err != nil {
				t.Errorf("round trip: %v", err)
			}
			if !haveORT {
				return
			}
			g32 := graph.New()
			x32, y32 := build(g32, graph.Float32)
			path := filepath.Join(t.TempDir(), "m.onnx")
			if err := onnx.WriteFile(path, []*graph.Node{y32}, onnx.ExportOptions{OutputNames: []string{"y"}}); err != nil {
				t.Fatal(err)
			}
			in32 := moduleInput(r, x32)
			feed := ortInput{"float32", x32.Shape(), nil}
			if graph.IsInteger(x32.DType()) {
				feed.Type, feed.Data = "int64", in32.Int64s()
			} else {
				feed.Data = in32.Float32s()
			}
			res := runORT(t, ort, path, graph.Float32, map[string]ortInput{x32.Name(): feed})
			if err := closeTo(res["y"], run(t, vm.Feeds{x32: in32}, y32)[0], 1e-5, 1e-5); err != nil {
				t.Errorf("onnxruntime: %v", err)
			}
		})
	}
}

// TestBatchNormTrainingExports exports a convolution and a batch norm in
// training mode (batch statistics) with the gradients of a loss with
// respect to the input and every parameter (the per-channel family of
// ops), and compares the values after importing them back.
func TestBatchNormTrainingExports(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	g := graph.New()
	x := g.Input("x", graph.Float64, 3, 2, 5, 4)
	conv := nn.NewConv2d(g, "conv", 2, 3, []int{3}, false, ops.ConvOptions{Padding: []int{1}})
	bn := nn.NewBatchNorm2d(g, "bn", 3, 1e-3, 0.1)
	y := ops.Tanh(bn.Forward(conv.Forward(x)))
	loss := ops.Sum(ops.Mul(y, g.Const(randDense(r, y.Shape()...))))
	wrt := []*graph.Node{x}
	for _, p := range nn.NamedParameters(nn.NewSequential("net", conv, bn)) {
		wrt = append(wrt, p.Node)
	}
	grads, err := compile.Gradients([]*graph.Node{loss}, nil, wrt)
	if err != nil {
		t.Fatal(err)
	}
	outs := append([]*graph.Node{y}, grads...)
	checkReimport(t, "", x, randDense(r, x.Shape()...), outs, 1e-12, 1e-12)
}

// TestClassifierTrainingExports exports an embedding classifier's loss
// (ops.CrossEntropy and CrossEntropyOneHot) with its gradients, whose
// embedding gradient is a ScatterAdd and the loss's a OneHot, and
// compares the values after importing them back.
func TestClassifierTrainingExports(t *testing.T) {
	g := graph.New()
	tokens := g.Input("tokens", graph.Int64, 4)
	labels := g.Input("labels", graph.Int64, 4)
	emb := nn.NewEmbedding(g, "emb", 6, 3)
	fc := nn.NewLinear(g, "fc", 3, 5, true)
	logits := fc.Forward(emb.Forward(tokens))
	loss := ops.Add(ops.Mean(ops.CrossEntropy(logits, labels)), ops.Mean(ops.CrossEntropyOneHot(logits, ops.OneHot(labels, 5, graph.Float64))))
	var wrt []*graph.Node
	for _, p := range nn.NamedParameters(nn.NewSequential("net", emb, fc)) {
		wrt = append(wrt, p.Node)
	}
	grads, err := compile.Gradients([]*graph.Node{loss}, nil, wrt)
	if err != nil {
		t.Fatal(err)
	}
	outs := append([]*graph.Node{loss}, grads...)
	m := reimport(t, "", outs, onnx.ExportOptions{})
	tok, _ := graph.FromInt64s(graph.Int64, []int64{0, 5, 2, 5}, 4)
	lab, _ := graph.FromInt64s(graph.Int64, []int64{4, 0, 1, 1}, 4)
	want := run(t, vm.Feeds{tokens: tok, labels: lab}, outs...)
	compareOutputs(t, "", m, run(t, feedsOf(m, tok, lab), m.Outputs...), want, 1e-12, 1e-12)
	if _, err := onnx.Export(outs, onnx.ExportOptions{Opset: 15}); err == nil || !strings.Contains(err.Error(), "ScatterAdd needs opset 16") {
		t.Errorf("ScatterAdd at opset 15: got %v", err)
	}
}

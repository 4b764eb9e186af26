package onnx_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
	"gorgonia.org/tensor"
)

// randDense returns a float64 tensor of seeded normal values.
func randDense(r *rand.Rand, shape ...int) *tensor.Dense { return randOf(r, graph.Float64, shape...) }

// randOf returns a tensor of dtype of seeded normal values.
func randOf(r *rand.Rand, dtype tensor.Dtype, shape ...int) *tensor.Dense {
	vals := make([]float64, graph.ShapeSize(shape))
	for i := range vals {
		vals[i] = r.NormFloat64()
	}
	t, err := graph.FromFloat64s(dtype, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// net builds a test net of a dtype in g.
type net func(g *graph.Graph, r *rand.Rand, dtype tensor.Dtype) (x, y *graph.Node)

// nets are the nets the tests export and import.
var nets = map[string]net{"mlp": mlp, "cnn": cnn}

// mlp builds a two-layer perceptron on a (4, 5) input.
func mlp(g *graph.Graph, r *rand.Rand, dt tensor.Dtype) (x, y *graph.Node) {
	x = g.Input("x", dt, 4, 5)
	w1, b1 := g.Param("fc1.weight", randOf(r, dt, 6, 5)), g.Param("fc1.bias", randOf(r, dt, 6))
	w2, b2 := g.Param("fc2.weight", randOf(r, dt, 3, 6)), g.Param("fc2.bias", randOf(r, dt, 3))
	h := ops.Tanh(ops.MatMulAdd(x, w1, b1, false, true))
	h = ops.Mul(h, ops.Sigmoid(ops.Scale(h, 1.5)))
	y = ops.LogSoftmax(ops.Add(ops.MatMulT(h, w2, false, true), b2), -1)
	return x, y
}

// cnn builds a small convolutional net on a (2, 3, 8, 8) input.
func cnn(g *graph.Graph, r *rand.Rand, dt tensor.Dtype) (x, y *graph.Node) {
	x = g.Input("image", dt, 2, 3, 8, 8)
	w := g.Param("conv.weight", randOf(r, dt, 4, 3, 3, 3))
	b := g.Param("conv.bias", randOf(r, dt, 4))
	h := ops.ReLU(ops.ChannelAffine(ops.Conv2D(x, w, ops.ConvOptions{Padding: []int{1}}), nil, b))
	h = ops.MaxPool2D(h, ops.PoolOptions{Kernel: []int{2}})
	// Pad after the pooling: ONNX Runtime 1.30 fuses a Pad feeding an
	// AveragePool into pads that its own check then refuses.
	h = ops.Pad(ops.AvgPool2D(h, ops.PoolOptions{Kernel: []int{2}, Stride: []int{1}, Padding: []int{1}}), 3, 0, 1)
	h = ops.Transpose(ops.Slice(h, 2, 1, 4), 0, 1, 3, 2)
	f := ops.Flatten(h, 1)
	fc := g.Param("fc.weight", randOf(r, dt, f.Shape()[1], 5))
	y = ops.Softmax(ops.GELU(ops.MatMul(f, fc), false), 1)
	y = ops.Concat(1, y, ops.MeanKeepDims(y, 1), ops.SumKeepDims(ops.Square(f), 1))
	return x, y
}

// paramsOf is g's parameters, in the order of g.Nodes().
func paramsOf(g *graph.Graph) []*graph.Node {
	var params []*graph.Node
	for _, n := range g.Nodes() {
		if n.Kind() == graph.KindParam {
			params = append(params, n)
		}
	}
	return params
}

// sgdMachine is the machine of loss whose runs each take a step of
// gradient descent of rate lr on params.
func sgdMachine(t *testing.T, loss *graph.Node, params []*graph.Node, lr float64) *vm.Machine {
	t.Helper()
	grads, err := compile.Grad(loss, params...)
	if err != nil {
		t.Fatal(err)
	}
	updates := map[*graph.Node]*graph.Node{}
	for i, p := range params {
		updates[p] = ops.Sub(p, ops.Scale(grads[i], lr))
	}
	prog, err := compile.Compile([]*graph.Node{loss}, compile.WithUpdates(updates))
	if err != nil {
		t.Fatal(err)
	}
	machine, err := vm.New(prog)
	if err != nil {
		t.Fatal(err)
	}
	return machine
}

// reimport exports outs with opts and imports them back; what prefixes a
// failure.
func reimport(t *testing.T, what string, outs []*graph.Node, opts onnx.ExportOptions) *onnx.Model {
	t.Helper()
	data, err := onnx.Export(outs, opts)
	if err != nil {
		t.Fatalf("%s%v", what, err)
	}
	m, err := onnx.Import(data, onnx.Options{})
	if err != nil {
		t.Fatalf("%s%v", what, err)
	}
	return m
}

// checkReimport reimports outs and compares the imported model's outputs
// with outs' values (compareOutputs), in fed to x and to the model's
// input.
func checkReimport(t *testing.T, what string, x *graph.Node, in *tensor.Dense, outs []*graph.Node, rtol, atol float64) {
	t.Helper()
	m := reimport(t, what, outs, onnx.ExportOptions{})
	want := run(t, vm.Feeds{x: in}, outs...)
	compareOutputs(t, what, m, run(t, vm.Feeds{m.Inputs[0]: in}, m.Outputs...), want, rtol, atol)
}

// compareOutputs checks that the imported model m's output values got
// are want within rtol and atol (closeTo), naming each that is not.
func compareOutputs(t *testing.T, what string, m *onnx.Model, got, want []*tensor.Dense, rtol, atol float64) {
	t.Helper()
	for i := range want {
		if err := closeTo(got[i], want[i], rtol, atol); err != nil {
			t.Errorf("%soutput %d (%s): %v", what, i, m.OutputNames[i], err)
		}
	}
}

// run compiles and runs outputs with feeds.
func run(t *testing.T, feeds vm.Feeds, outputs ...*graph.Node) []*tensor.Dense {
	t.Helper()
	prog, err := compile.Compile(outputs)
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	var out []*tensor.Dense
	for _, o := range outputs {
		v, err := m.Value(o)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := graph.CloneDense(v)
		out = append(out, c)
	}
	return out
}

// TestRoundTrip exports nets to ONNX, imports them back and compares the
// values of both graphs (float64: equal to 1e-12) and the parameters'
// names and values.
func TestRoundTrip(t *testing.T) {
	for name, build := range nets {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			g := graph.New()
			x, y := build(g, r, graph.Float64)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			in := randDense(r, x.Shape()...)
			want := run(t, vm.Feeds{x: in}, y)[0]
			var m *onnx.Model
			for _, opset := range []int64{13, 17, 18, 21} { // reductions take their axes as inputs from 18
				m = reimport(t, "", []*graph.Node{y}, onnx.ExportOptions{Opset: opset, OutputNames: []string{"y"}})
				if len(m.Inputs) != 1 || m.InputNames[0] != x.Name() || m.OutputNames[0] != "y" {
					t.Fatalf("inputs %v, outputs %v", m.InputNames, m.OutputNames)
				}
				got := run(t, vm.Feeds{m.Inputs[0]: in}, m.Outputs[0])[0]
				if err := closeTo(got, want, 0, 1e-12); err != nil {
					t.Errorf("round trip at opset %d: %v", opset, err)
				}
			}
			for _, n := range g.Nodes() {
				if n.Kind() != graph.KindParam {
					continue
				}
				p := m.Params[n.Name()]
				if p == nil {
					t.Errorf("parameter %q is missing after the round trip (have %v)", n.Name(), m.Params)
					continue
				}
				if err := closeTo(p.Value(), n.Value(), 0, 0); err != nil {
					t.Errorf("parameter %q: %v", n.Name(), err)
				}
			}
		})
	}
}

// TestImportedModelDifferentiates checks the gradients of an imported
// model with respect to its input and its initializers (bound to
// gradcheck's inputs) against finite differences, to second order.
func TestImportedModelDifferentiates(t *testing.T) {
	for name, build := range nets {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			g := graph.New()
			x, y := build(g, r, graph.Float64)
			data, err := onnx.Export([]*graph.Node{y}, onnx.ExportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			names := []string{x.Name()}
			values := []*tensor.Dense{randDense(r, x.Shape()...)}
			for _, n := range g.Nodes() {
				if n.Kind() == graph.KindParam {
					names = append(names, n.Name())
					values = append(values, n.Value())
				}
			}
			// y's weights are a 3-vector's softmax: weigh the outputs so
			// that the scalar depends on every one.
			weights := randDense(r, y.Shape()...)
			fn := func(in []*graph.Node) *graph.Node {
				bind := map[string]*graph.Node{}
				for i, n := range in {
					bind[names[i]] = n
				}
				m, err := onnx.Import(data, onnx.Options{Graph: in[0].Graph(), Inputs: bind})
				if err != nil {
					return in[0].Graph().Fail(err)
				}
				return ops.Sum(ops.Mul(m.Outputs[0], in[0].Graph().Const(weights)))
			}
			if err := gradcheck.Check(fn, values, gradcheck.Options{}); err != nil {
				t.Error(err)
			}
			if name == "mlp" {
				if err := gradcheck.GradGradCheck(fn, values, gradcheck.Options{Fast: true}); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// A Vmapped Cond whose predicate is batched (both branches, selected per
// example, their inputs through GradGate) exports and imports back to
// the same values, an untaken branch's NaNs left out.
func TestRoundTripVmappedCond(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4)
	w := g.Input("w", graph.Float64)
	ys, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node {
		v := ex[0]
		return ops.Cond(ops.Greater(v, ops.Sub(w, w)), func(o []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Mul(ops.Log(o[0]), w)}
		}, func(o []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Mul(o[0], w)}
		}, []*graph.Node{v})
	}, []*graph.Node{x}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{2, -1, 0, 0.5}, 4)
	wv, _ := graph.FromFloat64s(graph.Float64, []float64{1.5})
	want := run(t, vm.Feeds{x: xv, w: wv}, ys[0])[0]
	m := reimport(t, "", ys, onnx.ExportOptions{OutputNames: []string{"y"}})
	feeds := vm.Feeds{}
	for i, name := range m.InputNames {
		feeds[m.Inputs[i]] = map[string]*tensor.Dense{"x": xv, "w": wv}[name]
	}
	got := run(t, feeds, m.Outputs[0])[0]
	if err := closeTo(got, want, 0, 0); err != nil {
		t.Error(err)
	}
	if v := graph.Float64s(want); v[0] != math.Log(2)*1.5 || v[1] != -1.5 || v[2] != 0 {
		t.Errorf("the batched Cond gives %v", v)
	}
}

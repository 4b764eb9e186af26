package onnx_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TestTrainImportedModel trains an imported MLP by gradient descent (the
// loss must fall), saves its state with nn.Save, loads it into a second
// import with nn.Load and checks that both give the same outputs.
func TestTrainImportedModel(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	g := graph.New()
	_, y := mlp(g, r, graph.Float64)
	data, err := onnx.Export([]*graph.Node{y}, onnx.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Import(data, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The log-probabilities of class 0 for every row, to maximise.
	loss := ops.Neg(ops.Mean(ops.Slice(m.Outputs[0], 1, 0, 1)))
	state := m.State()
	var params []*graph.Node
	for _, s := range state {
		params = append(params, s.Node)
	}
	machine := sgdMachine(t, loss, params, 0.5)
	in := randDense(r, m.Inputs[0].Shape()...)
	var first, last float64
	for step := range 30 {
		if err := machine.Run(vm.Feeds{m.Inputs[0]: in}); err != nil {
			t.Fatal(err)
		}
		v, _ := machine.Value(loss)
		if step == 0 {
			first = v.Float64s()[0]
		}
		last = v.Float64s()[0]
	}
	if !(last < first/2) {
		t.Errorf("loss %v after 30 steps from %v: training the imported model did not work", last, first)
	}

	var buf bytes.Buffer
	if err := nn.Save(&buf, machine, state); err != nil {
		t.Fatal(err)
	}
	m2, err := onnx.Import(data, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	loss2 := ops.Neg(ops.Mean(ops.Slice(m2.Outputs[0], 1, 0, 1)))
	prog2, err := compile.Compile([]*graph.Node{loss2})
	if err != nil {
		t.Fatal(err)
	}
	machine2, err := vm.New(prog2)
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.Load(&buf, machine2, m2.State()); err != nil {
		t.Fatal(err)
	}
	if err := machine2.Run(vm.Feeds{m2.Inputs[0]: in}); err != nil {
		t.Fatal(err)
	}
	if err := machine.Run(vm.Feeds{m.Inputs[0]: in}); err != nil { // one more step's loss, before its update
		t.Fatal(err)
	}
	got, _ := machine2.Value(loss2)
	want, _ := machine.Value(loss)
	if err := closeTo(got, want, 0, 1e-12); err != nil {
		t.Errorf("loaded state: %v", err)
	}
}

// TestExportTrainedValues exports a model after a training step with
// ExportOptions.Values: the file holds the machine's parameter values,
// not the graph's initial ones, and a store without the parameters is an
// error naming one.
func TestExportTrainedValues(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	g := graph.New()
	x, y := mlp(g, r, graph.Float64)
	loss := ops.Sum(ops.Square(y))
	params := paramsOf(g)
	machine := sgdMachine(t, loss, params, 0.1)
	in := randDense(r, x.Shape()...)
	if err := machine.Run(vm.Feeds{x: in}); err != nil {
		t.Fatal(err)
	}
	m := reimport(t, "", []*graph.Node{y}, onnx.ExportOptions{Values: machine})
	for _, p := range params {
		trained, err := machine.Get(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := closeTo(m.Params[p.Name()].Value(), trained, 0, 0); err != nil {
			t.Errorf("parameter %q: %v, want the trained value", p.Name(), err)
		}
		if closeTo(trained, p.Value(), 0, 1e-6) == nil {
			t.Errorf("parameter %q: the step did not change it: the test checks nothing", p.Name())
		}
	}

	other := graph.New()
	z := other.Param("z", randDense(r, 2))
	prog2, err := compile.Compile([]*graph.Node{ops.Sum(z)})
	if err != nil {
		t.Fatal(err)
	}
	machine2, err := vm.New(prog2)
	if err != nil {
		t.Fatal(err)
	}
	_, err = onnx.Export([]*graph.Node{y}, onnx.ExportOptions{Values: machine2})
	if err == nil || !strings.Contains(err.Error(), "nabla: onnx.Export: ExportOptions.Values: parameter \"fc1.weight\": Get: ") || strings.Count(err.Error(), "nabla:") != 1 {
		t.Errorf("a store without the parameters: error %v", err)
	}
}

package onnx_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
	"google.golang.org/protobuf/proto"
	"gorgonia.org/tensor"
)

// ctlInfo declares a value of the given element type and shape.
func ctlInfo(name string, et onnxpb.TensorProto_DataType, shape ...int64) *onnxpb.ValueInfoProto {
	e := int32(et)
	dims := []*onnxpb.TensorShapeProto_Dimension{}
	for _, d := range shape {
		dims = append(dims, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: &e, Shape: &onnxpb.TensorShapeProto{Dim: dims}}}}}
}

func ctlNode(op string, out []string, in ...string) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{OpType: proto.String(op), Input: in, Output: out}
}

func graphAttr(name string, g *onnxpb.GraphProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: g}
}

func ctlModel(g *onnxpb.GraphProto) []byte {
	data, err := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(17)}}, Graph: g})
	if err != nil {
		panic(err)
	}
	return data
}

const dbl = onnxpb.TensorProto_DOUBLE

// ifModel is y = p ? x·x : sin(x), the branches reading x from the main
// graph by name.
func ifModel() []byte {
	then := &onnxpb.GraphProto{Name: proto.String("then"), Output: []*onnxpb.ValueInfoProto{ctlInfo("a", dbl, 2)},
		Node: []*onnxpb.NodeProto{ctlNode("Mul", []string{"a"}, "x", "x")}}
	els := &onnxpb.GraphProto{Name: proto.String("else"), Output: []*onnxpb.ValueInfoProto{ctlInfo("b", dbl, 2)},
		Node: []*onnxpb.NodeProto{ctlNode("Sin", []string{"b"}, "x")}}
	n := ctlNode("If", []string{"y"}, "p")
	n.Attribute = []*onnxpb.AttributeProto{graphAttr("then_branch", then), graphAttr("else_branch", els)}
	return ctlModel(&onnxpb.GraphProto{Name: proto.String("if"),
		Input:  []*onnxpb.ValueInfoProto{ctlInfo("p", dbl), ctlInfo("x", dbl, 2)},
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String("y")}}, Node: []*onnxpb.NodeProto{n}})
}

// TestImportIf checks an imported If's values for both predicates against
// the branches computed by hand, and its gradient against finite
// differences.
func TestImportIf(t *testing.T) {
	data := ifModel()
	m, err := onnx.Import(data, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(41, 42))
	x := randDense(r, 2)
	for _, p := range []float64{1, 0} {
		pv, _ := graph.FromFloat64s(graph.Float64, []float64{p})
		got := run(t, feedsOf(m, pv, x), m.Outputs...)
		want := graph.NewDense(graph.Float64, 2)
		for i, v := range x.Float64s() {
			want.Float64s()[i] = math.Sin(v)
			if p != 0 {
				want.Float64s()[i] = v * v
			}
		}
		if err := closeTo(got[0], want, 0, 1e-12); err != nil {
			t.Errorf("p=%v: %v", p, err)
		}
		// The predicate is computed at run time (0·Σx + p), so that the
		// import builds a Cond rather than the branch p selects.
		fn := func(in []*graph.Node) *graph.Node {
			g := in[0].Graph()
			pred := ops.Add(ops.Mul(ops.Sum(in[0]), g.Scalar(0, graph.Float64)), g.Scalar(p, graph.Float64))
			m, err := onnx.Import(data, onnx.Options{Graph: g, Inputs: map[string]*graph.Node{"x": in[0], "p": pred}})
			if err != nil {
				return g.Fail(err)
			}
			return ops.Sum(ops.Mul(m.Outputs[0], m.Outputs[0]))
		}
		if err := gradcheck.Check(fn, []*tensor.Dense{x}, gradcheck.Options{}); err != nil {
			t.Errorf("p=%v: %v", p, err)
		}
	}
}

// loopModel is M steps (M an initializer) of s ← s·w + i, i the
// iteration number, with y_i = tanh(s) stacked. With stopAt ≥ 0, the body
// continues while i < stopAt (there are then no scan outputs), and the
// initial condition is an initializer holding start (a value at run
// time, as the main graph's initializers are trainable).
func loopModel(m, stopAt int64, start int32) []byte {
	i64, boolean := int32(onnxpb.TensorProto_INT64), int32(onnxpb.TensorProto_BOOL)
	body := &onnxpb.GraphProto{Name: proto.String("body"),
		Input: []*onnxpb.ValueInfoProto{ctlInfo("i", onnxpb.TensorProto_INT64), ctlInfo("c", onnxpb.TensorProto_BOOL), ctlInfo("s", dbl, 2)},
		Node: []*onnxpb.NodeProto{
			ctlNode("Mul", []string{"sw"}, "s", "w"),
			{OpType: proto.String("Cast"), Input: []string{"i"}, Output: []string{"fi"},
				Attribute: []*onnxpb.AttributeProto{{Name: proto.String("to"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(int64(dbl))}}},
			ctlNode("Add", []string{"s_out"}, "sw", "fi"),
		},
		Output: []*onnxpb.ValueInfoProto{ctlInfo("c_out", onnxpb.TensorProto_BOOL), ctlInfo("s_out", dbl, 2)},
	}
	inputs := []string{"M", "", "s0"}
	inits := []*onnxpb.TensorProto{{Name: proto.String("M"), DataType: &i64, Int64Data: []int64{m}}}
	outputs := []string{"s_final"}
	if stopAt < 0 {
		body.Node = append(body.Node, ctlNode("Identity", []string{"c_out"}, "c"), ctlNode("Tanh", []string{"y"}, "s_out"))
		body.Output = append(body.Output, ctlInfo("y", dbl, 2))
		outputs = append(outputs, "ys")
	} else {
		body.Initializer = []*onnxpb.TensorProto{{Name: proto.String("stop"), DataType: &i64, Int64Data: []int64{stopAt}}}
		body.Node = append(body.Node, ctlNode("Less", []string{"c_out"}, "i", "stop"))
		inputs[1] = "c0"
		inits = append(inits, &onnxpb.TensorProto{Name: proto.String("c0"), DataType: &boolean, Int32Data: []int32{start}})
	}
	n := ctlNode("Loop", outputs, inputs...)
	n.Attribute = []*onnxpb.AttributeProto{graphAttr("body", body)}
	var outs []*onnxpb.ValueInfoProto
	for _, o := range outputs {
		outs = append(outs, &onnxpb.ValueInfoProto{Name: proto.String(o)})
	}
	return ctlModel(&onnxpb.GraphProto{Name: proto.String("loop"), Initializer: inits,
		Input:  []*onnxpb.ValueInfoProto{ctlInfo("s0", dbl, 2), ctlInfo("w", dbl, 2)},
		Output: outs, Node: []*onnxpb.NodeProto{n}})
}

// TestImportLoop checks imported Loops, of a fixed number of steps with
// stacked outputs and of one ended early by the body's condition, against
// the recurrence computed by hand, and their gradients with respect to
// the initial state and a weight the body reads from the main graph
// against finite differences.
func TestImportLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	s0, w := randDense(r, 2), randDense(r, 2)
	for _, tc := range []struct {
		name        string
		m, stopAt   int64
		start       int32
		steps       int
		scanOutputs bool
	}{
		{"fixed", 3, -1, 1, 3, true},
		{"until", 5, 1, 1, 2, false}, // continues after i = 0, stops after i = 1
		{"not started", 5, 1, 0, 0, false},
	} {
		data := loopModel(tc.m, tc.stopAt, tc.start)
		m, err := onnx.Import(data, onnx.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := run(t, feedsOf(m, s0, w), m.Outputs...)
		s := append([]float64(nil), s0.Float64s()...)
		var ys []float64
		for i := range tc.steps {
			for k := range s {
				s[k] = s[k]*w.Float64s()[k] + float64(i)
				ys = append(ys, math.Tanh(s[k]))
			}
		}
		wantS, _ := graph.FromFloat64s(graph.Float64, s, 2)
		if err := closeTo(got[0], wantS, 0, 1e-12); err != nil {
			t.Errorf("%s: final state: %v", tc.name, err)
		}
		if tc.scanOutputs {
			wantY, _ := graph.FromFloat64s(graph.Float64, ys, tc.steps, 2)
			if err := closeTo(got[1], wantY, 0, 1e-12); err != nil {
				t.Errorf("%s: scan outputs: %v", tc.name, err)
			}
		}
		weights := randDense(r, tc.steps, 2)
		fn := func(in []*graph.Node) *graph.Node {
			g := in[0].Graph()
			m, err := onnx.Import(data, onnx.Options{Graph: g, Inputs: map[string]*graph.Node{"s0": in[0], "w": in[1]}})
			if err != nil {
				return g.Fail(err)
			}
			out := ops.Sum(ops.Mul(m.Outputs[0], m.Outputs[0]))
			if tc.scanOutputs {
				out = ops.Add(out, ops.Sum(ops.Mul(m.Outputs[1], g.Const(weights))))
			}
			return out
		}
		if err := gradcheck.Check(fn, []*tensor.Dense{s0, w}, gradcheck.Options{}); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestImportLoopUnsupported checks that a Loop whose trip count is known
// only at run time is refused with the reason.
func TestImportLoopUnsupported(t *testing.T) {
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(loopModel(3, -1, 1), &mp); err != nil {
		t.Fatal(err)
	}
	mp.Graph.Initializer = nil
	mp.Graph.Input = append(mp.Graph.Input, ctlInfo("M", onnxpb.TensorProto_INT64))
	data, _ := proto.Marshal(&mp)
	_, err := onnx.Import(data, onnx.Options{})
	if err == nil || !strings.Contains(err.Error(), "trip count M (int64()) is computed at run time: nabla's loops need a bound known at import") {
		t.Errorf("got %v, want the trip count refused", err)
	}
}

// TestImportLoopTripCounts: a trip count past the memory limit (2⁴⁰
// steps, whose iteration numbers alone would take 8 TiB) or of no single
// value is an error; Import allocated the iteration numbers first, and
// indexed an empty M.
func TestImportLoopTripCounts(t *testing.T) {
	_, err := onnx.Import(loopModel(1<<40, 5, 1), onnx.Options{})
	if want := "node Loop (unnamed, output \"s_final\"), opset 17: trip count 1099511627776: int64(1099511627776) needs 8796093022208 bytes"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("M = 2⁴⁰: got %v, want an error containing %q", err, want)
	}
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(loopModel(3, -1, 1), &mp); err != nil {
		t.Fatal(err)
	}
	mp.Graph.Initializer[0].Int64Data, mp.Graph.Initializer[0].Dims = nil, []int64{0}
	data, _ := proto.Marshal(&mp)
	_, err = onnx.Import(data, onnx.Options{})
	if want := "the trip count M holds 0 values, want 1"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("an empty M: got %v, want an error containing %q", err, want)
	}
}

// TestImportIfShapes checks that an If whose branches declare outputs of
// different shapes is refused with the reason, when the condition is known
// only at run time, and imported when it is a constant (the branch taken
// alone).
func TestImportIfShapes(t *testing.T) {
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(ifModel(), &mp); err != nil {
		t.Fatal(err)
	}
	els := mp.Graph.Node[0].Attribute[1].G
	els.Output[0] = ctlInfo("b", dbl, 1)
	els.Node = []*onnxpb.NodeProto{ctlNode("ReduceSum", []string{"b"}, "x")}
	data, _ := proto.Marshal(&mp)
	_, err := onnx.Import(data, onnx.Options{})
	want := "unsupported: If whose branches give output 0 shapes [2] (then_branch) and [1] (else_branch): nabla's Cond needs both branches to give the same types"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
	g := graph.New()
	x, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2}, 2)
	m, err := onnx.Import(data, onnx.Options{Graph: g, Inputs: map[string]*graph.Node{"p": g.Scalar(0, graph.Float64), "x": g.Const(x)}})
	if err != nil {
		t.Fatal(err)
	}
	got := run(t, nil, m.Outputs...)
	if v := graph.Float64s(got[0]); len(v) != 1 || v[0] != 3 {
		t.Errorf("else branch of a constant condition: got %v, want [3]", v)
	}
}

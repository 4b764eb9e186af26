package onnx_test

import (
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
	"google.golang.org/protobuf/proto"
	"gorgonia.org/tensor"
)

// TestRecurrentRoundTrip imports bidirectional LSTM, GRU and RNN layers
// (ops.Scan loops), exports them with their gradients (reverse Scans that
// sum over the steps) as ONNX Scans, imports that back and compares
// every value; ONNX Runtime runs the exported forward pass too.
func TestRecurrentRoundTrip(t *testing.T) {
	const T, B, I, H = 3, 2, 3, 2
	dir := &onnxpb.AttributeProto{Name: proto.String("direction"), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte("bidirectional")}
	for _, c := range []struct {
		op    string
		gates int
	}{{"LSTM", 4}, {"GRU", 3}, {"RNN", 1}} {
		t.Run(c.op, func(t *testing.T) {
			shapes := [][]int{{T, B, I}, {2, c.gates * H, I}, {2, c.gates * H, H}, {2, 2 * c.gates * H}, {2, B, H}}
			data, _ := proto.Marshal(recurrentModel(c.op, []*onnxpb.AttributeProto{dir}, shapes))
			m, err := onnx.Import(data, onnx.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(41, 42))
			var values []*tensor.Dense
			for _, s := range shapes {
				values = append(values, randDense(r, s...))
			}
			loss := ops.Add(ops.Sum(ops.Square(m.Outputs[0])), ops.Sum(m.Outputs[1]))
			grads, err := compile.Gradients([]*graph.Node{loss}, nil, m.Inputs)
			if err != nil {
				t.Fatal(err)
			}
			outs := append(append([]*graph.Node(nil), m.Outputs...), grads...)
			path := filepath.Join(t.TempDir(), "rnn.onnx")
			if err := onnx.WriteFile(path, outs, onnx.ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			back, err := onnx.ImportFile(path, onnx.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := run(t, feedsOf(m, values...), outs...)
			got := run(t, feedsOf(back, values...), back.Outputs...)
			for i := range want {
				if err := closeTo(got[i], want[i], 0, 1e-12); err != nil {
					t.Errorf("output %d (%s): %v", i, back.OutputNames[i], err)
				}
			}
			if python := pythonWithONNX(); python != "" {
				if out, err := exec.Command(python, "-c", "import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)", path).CombinedOutput(); err != nil {
					t.Errorf("onnx.checker: %v\n%s", err, out)
				}
			}
			ort, ok := onnxRuntimeIfPresent()
			if !ok {
				return
			}
			fwd := filepath.Join(t.TempDir(), "forward.onnx")
			if err := onnx.WriteFile(fwd, m.Outputs, onnx.ExportOptions{OutputNames: []string{"Y", "Y_h"}}); err != nil {
				t.Fatal(err)
			}
			feeds := map[string]ortInput{}
			for i, name := range m.InputNames {
				feeds[name] = ortInput{"float64", values[i].Shape(), values[i].Float64s()}
			}
			res := runORT(t, ort, fwd, graph.Float64, feeds)
			for i, name := range []string{"Y", "Y_h"} {
				if err := closeTo(res[name], want[i], 1e-12, 1e-12); err != nil {
					t.Errorf("onnxruntime %s: %v", name, err)
				}
			}
		})
	}
}

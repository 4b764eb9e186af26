package fuzztest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/vm"
)

// FuzzExport exports random graphs of the ops' builders to ONNX (at a
// random opset, parameters as initializers), imports them back and checks
// that the model computes the same values, of the same types, to
// rounding; an op without an ONNX export (or not at that opset) is an
// error naming it, never a panic, and a model Export writes always
// imports (but where it holds values of rank 9 or more, which Gather and
// unary ops make and nabla's binary ops, which the export of some unary
// ops writes, refuse; or where it folds a constant index out of range,
// which the graph's run skips where its value is empty).
func FuzzExport(f *testing.F) {
	for _, seed := range graphSeeds {
		f.Add(append([]byte{1}, seed...))
	}
	limitMemory(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := NewBytes(data)
		opset := []int64{13, 17, 18, 21}[in.IntN(4)]
		code := data[min(in.pos, len(data)):]
		g := graph.New()
		b := NewBuilder(NewBytes(code), Mode{MaxRank: 3, MaxOps: 10, Extreme: true}, g)
		b.Leaf = func(i int, t graph.Type) *graph.Node {
			if i%2 == 1 {
				return g.Param(fmt.Sprint("p", i), b.Values(t))
			}
			return g.Input(fmt.Sprint("x", i), t.DType, t.Shape...)
		}
		b.Build()
		outs := outputs(b)
		if len(outs) == 0 || g.Err() != nil {
			return
		}
		want, err := run(t, b, outs)
		if err != nil {
			return // a data error: an index out of range
		}
		model, err := onnx.Export(outs, onnx.ExportOptions{Opset: opset})
		if err != nil {
			noPanic(t, "Export", err)
			if msg := err.Error(); !strings.HasPrefix(msg, "nabla: onnx.Export: ") ||
				!strings.Contains(msg, "has no ONNX export") && !strings.Contains(msg, "needs opset") {
				t.Fatalf("Export of a valid graph at opset %d: %v", opset, err)
			}
			return
		}
		m, err := onnx.Import(model, onnx.Options{})
		if err != nil && strings.Contains(err.Error(), "above the supported 8") && slices.ContainsFunc(g.Nodes(), func(n *graph.Node) bool { return len(n.Shape()) > 8 }) {
			return // a value of rank 9 (Gather's) that the export's binary ops (Scale's Mul) cannot take
		}
		if err != nil && strings.Contains(err.Error(), "at import: value") && strings.Contains(err.Error(), "out of") {
			return // a constant index out of range (-Inf), which Import folds and the graph's run skipped (its value is empty); ONNX Runtime refuses such a Gather too, empty or not
		}
		if err != nil {
			t.Fatalf("Import of what Export wrote at opset %d: %v", opset, err)
		}
		// The imported model on the same feeds.
		fed := map[string]*graph.Node{}
		for _, n := range b.Leaves {
			fed[n.Name()] = n
		}
		mm, ok := machineFor(t, m.Outputs)
		if !ok {
			t.Fatalf("the imported model's program is refused where the graph's runs")
		}
		defer mm.Close()
		p, err := compile.Compile(outs)
		if err != nil {
			t.Fatal(err)
		}
		orig := feeds(b, p)
		feedsOf := vm.Feeds{}
		for i, n := range m.Inputs {
			v, ok := orig[fed[m.InputNames[i]]]
			if !ok {
				t.Fatalf("the imported model has input %q, which the graph does not read", m.InputNames[i])
			}
			feedsOf[n] = v
		}
		got, err := runValues(t, mm, feedsOf, m.Outputs)
		if err != nil {
			t.Fatalf("running the imported model at opset %d: %v", opset, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d outputs after the round trip, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i].Dtype() != want[i].Dtype() || !slices.Equal(got[i].Shape(), want[i].Shape()) {
				t.Fatalf("output %d (%v): %v%v after the round trip at opset %d", i, outs[i], got[i].Dtype(), got[i].Shape(), opset)
			}
			if msg := sameToRounding(got[i], want[i]); msg != "" {
				t.Fatalf("output %d (%v): %s after the round trip at opset %d and before", i, outs[i], msg, opset)
			}
		}
	})
}

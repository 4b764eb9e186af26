package cuda

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TestReadThroughOnDevice checks that the ops that read a Transpose or a
// Slice where its elements lie (pass readthrough) run on the device, with
// the CPU's values.
func TestReadThroughOnDevice(t *testing.T) {
	devs := testDevices(t)
	every2 := func(x *graph.Node) *graph.Node { // (6, 5): every other element of x's rows
		return ops.Reshape(ops.Slice(ops.Reshape(x, 6, 5, 2), 2, 1, 2), 6, 5)
	}
	cases := []struct {
		name  string
		build func(x, y *graph.Node) *graph.Node
	}{
		{"Sum(Transpose)", func(x, _ *graph.Node) *graph.Node { return ops.Sum(ops.Transpose(x, 1, 0), 1) }},
		{"Mean(Transpose)", func(x, _ *graph.Node) *graph.Node { return ops.Mean(ops.Transpose(x, 1, 0), 1) }},
		{"Max(Reshape(Slice(Reshape)))", func(x, _ *graph.Node) *graph.Node { return ops.Max(every2(x), 1) }},
		{"SumTo(Reshape(Slice(Reshape)))", func(x, _ *graph.Node) *graph.Node { return ops.SumTo(every2(x), 1, 5) }},
		{"Neg(Reshape(Slice(Reshape)))", func(x, _ *graph.Node) *graph.Node { return ops.Neg(every2(x)) }},
		{"Sub(Reshape(Slice(Reshape)))", func(x, y *graph.Node) *graph.Node { return ops.Sub(y, every2(x)) }},
	}
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
		for _, dev := range devs {
			for _, c := range cases {
				g := graph.New()
				x := g.Input("x", dtype, 6, 10)
				y := g.Input("y", dtype, 6, 5)
				feeds := vm.Feeds{x: readThroughFeed(t, dtype, 6, 10), y: readThroughFeed(t, dtype, 6, 5)}
				out := c.build(x, y)
				prog, err := compile.Compile([]*graph.Node{out})
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, in := range prog.Instructions() {
					names = append(names, in.Name())
				}
				if !strings.Contains(strings.Join(names, " "), c.name) {
					t.Fatalf("%s: no %s in %v", c.name, c.name, names)
				}
				cpu, m := machines(t, prog, dev)
				if err := compareRun(cpu, m, feeds, []*graph.Node{out}); err != nil {
					t.Fatalf("%s %v on %v: %v", c.name, dtype, dev, err)
				}
				for i, in := range prog.Instructions() {
					if m.OnHost(i) {
						t.Errorf("%s %v on %v: %s runs on the host", c.name, dtype, dev, in.Name())
					}
				}
				m.Close()
			}
		}
	}
}

// readThroughFeed is a tensor of the given shape holding sines.
func readThroughFeed(t *testing.T, dtype tensor.Dtype, shape ...int) *tensor.Dense {
	vals := make([]float64, graph.ShapeSize(shape))
	for i := range vals {
		vals[i] = math.Sin(float64(3*i+1)) * float64(i%7+1)
	}
	d, err := graph.FromFloat64s(dtype, vals, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

package nn

import (
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// TestZeroStateDecomposes checks that the zero state's decomposition
// (what exporters and device machines without its kernel run) has its
// type and holds zeros.
func TestZeroStateDecomposes(t *testing.T) {
	for _, layers := range []int{0, 3} {
		g := graph.New()
		x := g.Input("x", graph.Float32, 5, 2, 7)
		state := zeroState(x, 1, 4, layers)
		outs, err := state.Op().(graph.Decomposer).Decompose([]*graph.Node{x})
		if err != nil {
			t.Fatal(err)
		}
		if len(outs) != 1 || !outs[0].Type().Equal(state.Type()) {
			t.Fatalf("layers %d: decomposition %v, want one node of %v", layers, outs, state.Type())
		}
		prog, err := compile.Compile(outs)
		if err != nil {
			t.Fatal(err)
		}
		m, err := vm.New(prog)
		if err != nil {
			t.Fatal(err)
		}
		in := graph.NewDense(graph.Float32, 5, 2, 7)
		for i := range in.Float32s() {
			in.Float32s()[i] = float32(i + 1)
		}
		if err := m.Run(vm.Feeds{x: in}); err != nil {
			t.Fatal(err)
		}
		v, _ := m.Value(outs[0])
		for i, f := range v.Float32s() {
			if f != 0 {
				t.Fatalf("layers %d: element %d is %v, want 0", layers, i, f)
			}
		}
	}
}

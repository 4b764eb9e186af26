package compile_test

import (
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The rewritten sum computes what Add and MatMul compute, and its
// gradients are theirs.
func TestMatMulAddValues(t *testing.T) {
	g := graph.New()
	a := g.Param("a", must(graph.FromFloat64s(graph.Float64, []float64{1, -2, 3, 0.5, 4, -1}, 2, 3)))
	b := g.Param("b", must(graph.FromFloat64s(graph.Float64, []float64{2, 1, -1, 3, 0, 1}, 3, 2)))
	c := g.Param("c", must(graph.FromFloat64s(graph.Float64, []float64{0.25, -4}, 2)))
	loss := ops.Sum(ops.Square(ops.Add(ops.MatMul(a, b), c)))
	grads := must(compile.Grad(loss, a, b, c))
	outs := append([]*graph.Node{loss}, grads...)
	fused := must(compile.Compile(outs, compile.WithChecks()))
	if !containsOp(fused, "MatMulAdd") {
		t.Fatalf("no MatMulAdd in\n%v", fused)
	}
	// a·b = [[4, -2], [-3, 11.5]]; + c = [[4.25, -6], [-2.75, 7.5]].
	want := []float64{4.25, -6, -2.75, 7.5}
	s := 0.0
	for _, e := range want {
		s += e * e
	}
	got := evalFloats(t, fused, loss)
	if got[0] != s {
		t.Errorf("loss: got %v, want %v", got[0], s)
	}
	// dL/dc = Σ over rows of 2·(a·b + c).
	if dc := evalFloats(t, fused, grads[2]); dc[0] != 2*(want[0]+want[2]) || dc[1] != 2*(want[1]+want[3]) {
		t.Errorf("dL/dc: got %v, want [%v %v]", dc, 2*(want[0]+want[2]), 2*(want[1]+want[3]))
	}
}

// evalFloats runs p once and returns n's value.
func evalFloats(t *testing.T, p *compile.Program, n *graph.Node) []float64 {
	t.Helper()
	m := must(vm.New(p))
	if err := m.Run(nil); err != nil {
		t.Fatal(err)
	}
	return must(m.Value(n)).Float64s()
}

func containsOp(p *compile.Program, name string) bool {
	for i := range p.Instructions() {
		if p.Instructions()[i].Name() == name {
			return true
		}
	}
	return false
}

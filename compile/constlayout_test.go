package compile_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Products reading a constant matrix transposed read a transposed copy as
// stored, with the same values; a product of an input is left alone, and
// so is a constant read both ways (it is kept both ways).
func TestConstLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	random := func(shape ...int) []float64 {
		v := make([]float64, graph.ShapeSize(shape))
		for i := range v {
			v[i] = 2*rng.Float64() - 1
		}
		return v
	}
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	w := g.Const(must(graph.FromFloat64s(graph.Float64, random(4, 3), 4, 3)))
	a := g.Const(must(graph.FromFloat64s(graph.Float64, random(3, 5), 3, 5)))
	b := g.Input("b", graph.Float64, 4)
	outs := []*graph.Node{
		ops.MatMulT(x, w, false, true),                // x·wᵀ
		ops.MatMulT(a, x, true, true),                 // aᵀ·xᵀ
		ops.Add(ops.MatMulT(x, w, false, true), b),    // a MatMulAdd
		ops.MatMul(ops.MatMulT(x, w, false, true), w), // w both ways
		ops.MatMulT(x, ops.Tanh(x), false, true),      // no constant
	}
	p := must(compile.Compile(outs))
	transposed := 0
	for _, in := range p.Instructions() {
		switch op := in.Op.(type) {
		case ops.MatMulOp:
			if op.TransA || op.TransB {
				transposed++
			}
		case ops.MatMulAddOp:
			if op.TransA || op.TransB {
				transposed++
			}
		}
	}
	if transposed != 2 { // aᵀ·xᵀ reads x transposed, and x·tanh(x)ᵀ
		t.Errorf("%d products read an operand transposed, want 2:\n%v", transposed, p)
	}
	feeds := vm.Feeds{
		x: must(graph.FromFloat64s(graph.Float64, random(2, 3), 2, 3)),
		b: must(graph.FromFloat64s(graph.Float64, random(4), 4)),
	}
	got := runNodes(t, feeds, outs...)
	off := must(compile.Compile(outs, compile.WithoutPass("constlayout")))
	m := must(vm.New(off))
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	for k, o := range outs {
		want := graph.Float64s(must(m.Value(o)))
		for i := range want {
			if math.Abs(got[k][i]-want[i]) > 1e-14 {
				t.Fatalf("output %d entry %d: %v with the pass, %v without", k, i, got[k][i], want[i])
			}
		}
	}
}

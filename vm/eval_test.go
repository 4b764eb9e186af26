package vm_test

import (
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

func TestEvalAndScalar(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	sq := ops.Square(x)
	total := ops.Sum(sq)
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3}, 3)
	vals, err := vm.Eval(vm.Feeds{x: xv}, total, sq)
	if err != nil {
		t.Fatal(err)
	}
	if got := graph.Float(vals[0], 0); got != 14 {
		t.Errorf("sum of squares: got %v, want 14", got)
	}
	if got := vals[1].Float64s(); got[0] != 1 || got[1] != 4 || got[2] != 9 {
		t.Errorf("squares: got %v, want [1 4 9]", got)
	}
	vals[1].Float64s()[0] = 100 // the caller's own copy
	again, _ := vm.Eval(vm.Feeds{x: xv}, sq)
	if again[0].Float64s()[0] != 1 {
		t.Errorf("a second Eval saw the first one's caller's write")
	}
	_, err = vm.Eval(nil, total)
	wantErr(t, "Eval without feeds", err, `input "x"`)

	m, err := vm.New(mustCompile(t, total, sq))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Scalar(total)
	wantErr(t, "Scalar before Run", err, "has not run")
	if err := m.Run(vm.Feeds{x: xv}); err != nil {
		t.Fatal(err)
	}
	if s, err := m.Scalar(total); err != nil || s != 14 {
		t.Errorf("Scalar: got %v, %v; want 14", s, err)
	}
	_, err = m.Scalar(sq)
	wantErr(t, "Scalar of a vector", err, "3 elements, not one")
}

func mustCompile(t *testing.T, outputs ...*graph.Node) *compile.Program {
	t.Helper()
	p, err := compile.Compile(outputs)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

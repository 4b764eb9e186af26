package compile_test

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Shared factors give the same bits as factorising for each reader, for
// solves (their gradients solve with the same matrix), an inverse and a
// determinant, batched, at orders on both sides of the switch to the
// blocked LU, with rows swapped; the gradient program factorises each
// matrix once.
func TestLUShareKeepsBits(t *testing.T) {
	for _, n := range []int{4, 70} {
		g := graph.New()
		av, bv := make([]float64, 2*n*n), make([]float64, 2*n*3)
		for i := range av {
			av[i] = math.Sin(0.37*float64(i)+0.1) / float64(n)
		}
		for m := range 2 {
			for i := range n {
				av[m*n*n+i*n+(i+1)%n] += 1 + 0.1*float64(i%3) // dominant off the diagonal: rows are swapped
			}
		}
		for i := range bv {
			bv[i] = math.Cos(0.53*float64(i) + 0.2)
		}
		a := g.Param("a", must(graph.FromFloat64s(graph.Float64, av, 2, n, n)))
		b := g.Param("b", must(graph.FromFloat64s(graph.Float64, bv, 2, n, 3)))
		x := ops.Solve(a, b)
		loss := ops.Add(ops.Sum(ops.Square(x)), ops.Sum(ops.Det(a)))
		grads := must(compile.Grad(loss, a, b))
		outs := append([]*graph.Node{x, loss, ops.Inverse(a)}, grads...)
		shared := must(compile.Compile(outs, compile.WithChecks()))
		if got := countOp(shared, "LUFactors"); got != 1 {
			t.Errorf("n=%d: %d LUFactors, want 1:\n%v", n, got, shared)
		}
		got := evalAll(t, shared, outs)
		want := evalAll(t, must(compile.Compile(outs, compile.WithoutPass("lushare"))), outs)
		for i := range outs {
			for j := range want[i] {
				if math.Float64bits(got[i][j]) != math.Float64bits(want[i][j]) {
					t.Fatalf("n=%d: %v element %d: got %v, want %v (factorised for each reader)", n, outs[i], j, got[i][j], want[i][j])
				}
			}
		}
	}
}

// A singular matrix fails each reader of shared factors as it fails the
// reader alone: a solve's error names the solve and its line, and the
// determinant is 0.
func TestLUShareSingular(t *testing.T) {
	g := graph.New()
	a := g.Input("a", graph.Float64, 2, 2)
	b := g.Input("b", graph.Float64, 2, 1)
	det := ops.Det(a)
	x := ops.Solve(a, b)
	_, _, line, _ := runtime.Caller(0)
	p := must(compile.Compile([]*graph.Node{det, x}))
	if countOp(p, "LUFactors") != 1 {
		t.Fatalf("factors not shared:\n%v", p)
	}
	m := must(vm.New(p))
	feeds := vm.Feeds{a: must(graph.FromFloat64s(graph.Float64, []float64{1, 2, 2, 4}, 2, 2)),
		b: must(graph.FromFloat64s(graph.Float64, []float64{1, 1}, 2, 1))}
	err := m.Run(feeds)
	want := fmt.Sprintf("the diagonal element 2 is zero, the solve could not be completed because the input matrix is singular "+
		"(built at lushare_vm_test.go:%d)", line-1)
	if err == nil || !strings.HasPrefix(err.Error(), "nabla: Solve (node Solve #") || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got error %v, want Solve's, ending %q", err, want)
	}
	sign, logAbs := ops.SlogDet(a)
	dets := []*graph.Node{det, sign, logAbs}
	p = must(compile.Compile(dets))
	if countOp(p, "LUFactors") != 1 {
		t.Fatalf("factors not shared:\n%v", p)
	}
	m = must(vm.New(p))
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0, 0, math.Inf(-1)} {
		if got := must(m.Value(dets[i])).Float64s()[0]; got != want {
			t.Errorf("%v: got %v, want %v", dets[i], got, want)
		}
	}
}

func countOp(p *compile.Program, name string) int {
	n := 0
	for i := range p.Instructions() {
		if p.Instructions()[i].Name() == name {
			n++
		}
	}
	return n
}

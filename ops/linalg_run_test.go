package ops_test

import (
	"fmt"
	"runtime"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// line is the caller's line number.
func line() int {
	_, _, l, _ := runtime.Caller(1)
	return l
}

// TestLinalgRunErrors: a matrix that is not positive-definite, fed at run
// time, fails Run with the op, the node, the batch element, the failing
// minor and the line that built the op (LogDet's Cholesky too); folded
// from constants, Compile fails the same way.
func TestLinalgRunErrors(t *testing.T) {
	const notPD = "the factorization could not be completed because the input is not positive-definite " +
		"(the leading minor of order 2 is not positive-definite)"
	bad, err := graph.FromFloat64s(graph.Float64, []float64{2, 1, 1, 2, 1, 2, 2, 1}, 2, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	run := func(build func(a *graph.Node) *graph.Node) error {
		g := graph.New()
		a := g.Input("a", graph.Float64, 2, 2, 2)
		prog, err := compile.Compile([]*graph.Node{build(a)})
		if err != nil {
			return err
		}
		m, err := vm.New(prog)
		if err != nil {
			return err
		}
		return m.Run(vm.Feeds{a: bad})
	}
	var cholLine, logDetLine int
	chol := run(func(a *graph.Node) *graph.Node { cholLine = line(); return ops.Cholesky(a) })
	logDet := run(func(a *graph.Node) *graph.Node { logDetLine = line(); return ops.LogDet(a) })
	g := graph.New()
	folded := ops.Cholesky(g.Const(bad))
	foldedLine := line() - 1
	_, foldErr := compile.Compile([]*graph.Node{folded})
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"Cholesky", chol, fmt.Sprintf("nabla: Cholesky (node Cholesky #1 float64(2,2,2)): batch element 1: %s (built at linalg_run_test.go:%d)", notPD, cholLine)},
		{"LogDet", logDet, fmt.Sprintf("nabla: Cholesky (node Cholesky #1 float64(2,2,2)): batch element 1: %s (built at linalg_run_test.go:%d)", notPD, logDetLine)},
		{"folded", foldErr, fmt.Sprintf("nabla: Compile: folding constant Cholesky (node Cholesky #1 float64(2,2,2)): batch element 1: %s (built at linalg_run_test.go:%d)", notPD, foldedLine)},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("case %v: got error %v, want %q", c.name, c.err, c.want)
		}
	}
}

// ExampleCholesky factorises a covariance and solves with it.
func ExampleCholesky() {
	g := graph.New()
	a := g.Input("a", graph.Float64, 2, 2)
	l := ops.Cholesky(a)
	x := ops.CholeskySolve(l, g.Const(tensor.New(tensor.WithShape(2, 1), tensor.WithBacking([]float64{4, 5}))))
	prog, err := compile.Compile([]*graph.Node{l, x, ops.LogDet(a)})
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := vm.New(prog)
	if err != nil {
		fmt.Println(err)
		return
	}
	feed := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{4, 2, 2, 5}))
	if err := m.Run(vm.Feeds{a: feed}); err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range prog.Outputs() {
		v, _ := m.Value(n)
		fmt.Printf("%.4g\n", v.Data())
	}
	// Output:
	// [2 0 1 2]
	// [0.625 0.75]
	// 2.773
}

package ops_test

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/race"
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

// machine compiles outs and returns a machine for them.
func machine(t *testing.T, outs ...*graph.Node) *vm.Machine {
	t.Helper()
	prog, err := compile.Compile(outs)
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSlogDetValues checks SlogDet's values against determinants
// expanded by hand, and that the sign has no gradient (its derivatives
// to third order are the op table's rows). The first matrix needs a row
// swap and has det −7.556: 1.8·(−4.2+0.35) + 0.4·(−0.63+0.25) +
// 0.6·(0.21−1) = −6.93 − 0.152 − 0.474; the second 6.206: 1.5·(3.74+0.3)
// − 0.2·(−0.66−0.05) + 0.4·(0.18−0.17).
func TestSlogDetValues(t *testing.T) {
	a, err := graph.FromFloat64s(graph.Float64, []float64{
		1.8, -0.4, 0.6, 0.3, 2, -0.5, 0.5, 0.7, -2.1,
		1.5, 0.2, 0.4, -0.3, 1.7, 0.5, 0.1, -0.6, 2.2}, 2, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New()
	x := g.Input("a", graph.Float64, 2, 3, 3)
	sign, l := ops.SlogDet(x)
	grads, err := compile.GradWith(ops.Sum(sign), []*graph.Node{x}, compile.ZerosIfDisconnected())
	if err != nil {
		t.Fatal(err)
	}
	m := machine(t, sign, l, grads[0])
	if err := m.Run(vm.Feeds{x: a}); err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]float64{{-1, 1}, {math.Log(7.556), math.Log(6.206)}, make([]float64, 18)} {
		v, err := m.Value([]*graph.Node{sign, l, grads[0]}[i])
		if err != nil {
			t.Fatal(err)
		}
		for k, got := range graph.Float64s(v) {
			if math.Abs(got-want[k]) > 1e-12 {
				t.Errorf("output %d element %d: got %v, want %v", i, k, got, want[k])
			}
		}
	}
}

// TestDetGradientAtSingular: Det's gradient needs A⁻¹; at a singular
// matrix it is Inverse's run-time error, not infinities.
func TestDetGradientAtSingular(t *testing.T) {
	g := graph.New()
	x := g.Input("a", graph.Float64, 2, 2)
	grads, err := compile.Grad(ops.Det(x), x)
	if err != nil {
		t.Fatal(err)
	}
	m := machine(t, grads[0])
	singular, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 2, 4}, 2, 2)
	err = m.Run(vm.Feeds{x: singular})
	want := "the diagonal element 2 is zero, the inversion could not be completed because the input matrix is singular"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Inverse") {
		t.Errorf("got error %v, want Inverse's %q", err, want)
	}
}

// TestLinalgRunsAllocateNothing: once warm, a machine running the
// factorisations (their scratch kept by the machine) allocates nothing.
func TestLinalgRunsAllocateNothing(t *testing.T) {
	for _, n := range []int{5, 40} { // both sides of the switch to LAPACK
		g := graph.New()
		x := g.Input("a", graph.Float64, 4, n, n)
		b := g.Input("b", graph.Float64, 4, n, 2)
		spd := ops.Add(ops.MatMulT(x, x, false, true), ops.Scale(ops.Eye(g, graph.Float64, n), float64(n)))
		l := ops.Cholesky(spd)
		outs := []*graph.Node{l, ops.CholeskySolve(l, b), ops.Solve(spd, b), ops.Inverse(spd), ops.Det(spd), ops.LogDet(spd), ops.MatrixExp(ops.Scale(x, 1/float64(n)))}
		q, r := ops.QR(x)
		outs = append(outs, q, r)
		w, u := ops.Eigh(spd)
		outs = append(outs, w, u)
		su, ss, svh := ops.SVD(b)
		outs = append(outs, su, ss, svh)
		m := machine(t, outs...)
		vals := make([]float64, 4*n*n)
		for i := range vals {
			vals[i] = math.Sin(float64(i))
		}
		av, _ := graph.FromFloat64s(graph.Float64, vals, 4, n, n)
		bv, _ := graph.FromFloat64s(graph.Float64, vals[:4*n*2], 4, n, 2)
		feeds := vm.Feeds{x: av, b: bv}
		if err := m.Run(feeds); err != nil {
			t.Fatal(err)
		}
		if n > 32 && race.Enabled {
			continue // LAPACK's products take gemm's serial buffers from a sync.Pool, which the race detector empties at random
		}
		if a := testing.AllocsPerRun(10, func() { _ = m.Run(feeds) }); a != 0 {
			t.Errorf("order %d: got %v allocations per run, want 0", n, a)
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

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

// The solves that replace products with an inverse compute the products'
// values, to rounding: A is well conditioned (cond₂ about 3), so the two
// differ by a few units in the last place, far below 1e-13 relative.
func TestSolveValues(t *testing.T) {
	g := graph.New()
	a := g.Param("a", must(graph.FromFloat64s(graph.Float64, []float64{
		4, 1, -0.5, 0.25,
		0.5, 3, 1, -1,
		-1, 0.75, 5, 0.5,
		0.25, -0.5, 1, 3.5}, 4, 4)))
	b := g.Param("b", must(graph.FromFloat64s(graph.Float64, []float64{
		1, -2, 0.5, 3, 0, 1.5, -1, 2, 4, 0.25, -3, 1}, 4, 3)))
	ab := g.Param("ab", must(graph.FromFloat64s(graph.Float64, []float64{
		2, 0.5, -0.25, 3, 1, 0.5, 0.75, -1, 4,
		5, -1, 0, 1, 2, 0.5, 0.25, 0, 3}, 2, 3, 3)))
	bb := g.Param("bb", must(graph.FromFloat64s(graph.Float64, []float64{1, 2, -3, 0.5, -1, 4}, 2, 3, 1)))
	c := g.Param("c", must(graph.FromFloat64s(graph.Float64, []float64{0.5, -1, 2, 3, 1, 0, -2, 0.25}, 2, 4)))
	cb := g.Param("cb", must(graph.FromFloat64s(graph.Float64, []float64{1, -1, 0.5, 2, 0, 3}, 2, 1, 3)))
	outs := []*graph.Node{
		ops.MatMul(ops.Inverse(a), b),
		ops.MatMulT(ops.Inverse(a), b, true, false),
		ops.MatMul(ops.Inverse(ab), bb),
		ops.MatMul(c, ops.Inverse(a)),
		ops.MatMulT(c, ops.Inverse(a), false, true),
		ops.MatMul(cb, ops.Inverse(ab)),
	}
	solved := must(compile.Compile(outs, compile.WithChecks()))
	if containsOp(solved, "Inverse") || containsOp(solved, "MatMul") {
		t.Errorf("an inverse or a product left in\n%v", solved)
	}
	got := evalAll(t, solved, outs)
	want := evalAll(t, must(compile.Compile(outs, compile.WithChecks(), compile.WithoutPass("solve"))), outs)
	for i := range outs {
		scale := 0.0
		for _, w := range want[i] {
			scale = math.Max(scale, math.Abs(w))
		}
		for j := range want[i] {
			if d := math.Abs(got[i][j] - want[i][j]); !(d <= 1e-13*scale) {
				t.Errorf("%v element %d: got %v, want %v (the product with the inverse)", outs[i], j, got[i][j], want[i][j])
			}
		}
	}
	// A⁻¹·b for the first column of b, by hand: the residual A·x − b.
	x := got[0]
	av, bv := a.Value().Float64s(), b.Value().Float64s()
	for i := range 4 {
		r := -bv[i*3]
		for k := range 4 {
			r += av[i*4+k] * x[k*3]
		}
		if math.Abs(r) > 1e-14 {
			t.Errorf("residual of row %d: %v", i, r)
		}
	}
}

// evalAll runs p once and returns the values of nodes.
func evalAll(t *testing.T, p *compile.Program, nodes []*graph.Node) [][]float64 {
	t.Helper()
	m := must(vm.New(p))
	if err := m.Run(nil); err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(nodes))
	for i, n := range nodes {
		out[i] = must(m.Value(n)).Float64s()
	}
	return out
}

// A singular matrix fails the solve that replaced the product as it
// failed the inverse: the error names the solve, the user's product and
// the line that built it.
func TestSolveSingularError(t *testing.T) {
	g := graph.New()
	a := g.Input("a", graph.Float64, 2, 2)
	b := g.Input("b", graph.Float64, 2, 1)
	y := ops.MatMul(ops.Inverse(a), b)
	_, _, line, _ := runtime.Caller(0)
	p := must(compile.Compile([]*graph.Node{y}))
	m := must(vm.New(p))
	err := m.Run(vm.Feeds{a: must(graph.FromFloat64s(graph.Float64, []float64{1, 2, 2, 4}, 2, 2)),
		b: must(graph.FromFloat64s(graph.Float64, []float64{1, 1}, 2, 1))})
	want := fmt.Sprintf("the diagonal element 2 is zero, the solve could not be completed because the input matrix is singular "+
		"(built at solve_vm_test.go:%d)", line-1)
	if err == nil || !strings.HasPrefix(err.Error(), "nabla: Solve (node MatMul #") || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got error %v, want Solve's naming the product, ending %q", err, want)
	}
}

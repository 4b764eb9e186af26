package compile_test

import (
	"math"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Forward and reverse mode build the same Jacobian, for more outputs than
// inputs and fewer; Auto agrees with both; entries match a hand
// derivation.
func TestJacobianModes(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	wide := ops.Concat(0, ops.Sin(x), ops.Mul(x, x), ops.Reshape(ops.Sum(ops.Exp(x)), 1)) // 5 outputs
	narrow := ops.Reshape(ops.Sum(ops.Mul(ops.Sin(x), ops.Sum(x))), 1)                    // 1 output
	var outs []*graph.Node
	for _, y := range []*graph.Node{wide, narrow} {
		for _, mode := range []compile.JacobianMode{compile.Auto, compile.Forward, compile.Reverse} {
			j, err := compile.JacobianWith(y, x, mode)
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, j)
		}
	}
	x0 := []float64{0.3, -0.7}
	vals := runAt(t, x, x0, outs...)
	a, b := x0[0], x0[1]
	s := a + b
	want := [][]float64{
		{math.Cos(a), 0, 0, math.Cos(b), 2 * a, 0, 0, 2 * b, math.Exp(a), math.Exp(b)},
		{math.Cos(a)*s + math.Sin(a) + math.Sin(b), math.Cos(b)*s + math.Sin(a) + math.Sin(b)},
	}
	for k, got := range vals {
		for i, w := range want[k/3] {
			if math.Abs(got[i]-w) > 1e-14 {
				t.Fatalf("Jacobian %d (mode %d) entry %d: %v, want %v", k/3, k%3, i, got[i], w)
			}
		}
	}
	if s := outs[0].Shape(); len(s) != 2 || s[0] != 5 || s[1] != 2 {
		t.Errorf("shape %v, want (5, 2)", s)
	}
}

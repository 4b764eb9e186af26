package fuzztest

import (
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// FuzzJVP checks forward mode on decoded smooth functions y(x0, x1):
// the JVP along a random tangent equals the reverse-mode Jacobian times
// the tangent, the forward-mode Jacobian (every unit tangent in one
// batched sweep) equals the reverse-mode one, and the Hessian of ⟨w, y⟩
// (forward over reverse, batched) equals the reverse-mode Jacobian of
// its gradient. The forward rules are checked against the Backwards,
// which FuzzGrad checks against finite differences.
func FuzzJVP(f *testing.F) {
	for _, seed := range smoothSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := NewBytes(data)
		shape := in.Shape(3, 3)
		g := graph.New()
		x0, x1 := g.Input("x0", graph.Float64, shape...), g.Input("x1", graph.Float64, shape...)
		b := NewBuilder(NewBytes(data[min(in.pos, len(data)):]), Mode{MaxOps: 6}, g, x0, x1)
		y := b.BuildSmooth()
		if err := g.Err(); err != nil {
			t.Fatalf("building a smooth function: %v", err)
		}
		rng := b.Rand()
		tangent := g.Const(Values(rng, x0.Type()))
		w := g.Const(Values(rng, y.Type()))
		jvp, err := compile.JVP([]*graph.Node{y}, []*graph.Node{x0}, []*graph.Node{tangent})
		if err != nil {
			t.Fatalf("JVP: %v", err)
		}
		fwd := mustNode(t)(compile.JacobianWith(y, x0, compile.Forward))
		rev := mustNode(t)(compile.JacobianWith(y, x0, compile.Reverse))
		s := ops.Sum(ops.Mul(y, w))
		gr, err := compile.GradWith(s, []*graph.Node{x0}, compile.ZerosIfDisconnected())
		if err != nil {
			t.Fatalf("Grad: %v", err)
		}
		hess := mustNode(t)(compile.JacobianWith(gr[0], x0, compile.Forward))
		hessRev := mustNode(t)(compile.JacobianWith(gr[0], x0, compile.Reverse))
		outs := []*graph.Node{jvp[0], fwd, rev, hess, hessRev, tangent}
		if _, err := compile.Grad(s, x0); err == nil { // y depends on x0
			outs = append(outs, mustNode(t)(compile.Hessian(s, x0)))
		}
		vals, err := run(t, b, outs)
		if err != nil {
			t.Fatalf("running the derivatives: %v", err)
		}
		v := make([][]float64, len(vals))
		for i, d := range vals {
			v[i] = d.Float64s()
		}
		n := len(v[5])
		jt := make([]float64, len(v[0]))
		for r := range jt {
			for j := range n {
				jt[r] += v[2][r*n+j] * v[5][j]
			}
		}
		agree(t, "JVP vs reverse-mode Jacobian times the tangent", v[0], jt)
		agree(t, "forward-mode vs reverse-mode Jacobian", v[1], v[2])
		agree(t, "forward-over-reverse vs reverse-over-reverse Hessian", v[3], v[4])
		if len(v) > 6 {
			agree(t, "Hessian vs reverse-over-reverse Hessian", v[6], v[4])
		}
	})
}

// mustNode returns a function failing t on a derivative that does not build.
func mustNode(t *testing.T) func(*graph.Node, error) *graph.Node {
	return func(n *graph.Node, err error) *graph.Node {
		t.Helper()
		if err != nil {
			t.Fatalf("building a derivative: %v", err)
		}
		return n
	}
}

// agree fails t unless got equals want to rounding.
func agree(t *testing.T, what string, got, want []float64) {
	t.Helper()
	near(t, what, got, want, 1e-10)
}

package fuzztest

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// FuzzHessian checks compile.Hessian, HVP and SparseHessian of random
// smooth scalar functions ⟨w, y(x)⟩ against central differences of the
// gradient: the Hessian to the differences' accuracy, the Hessian–vector
// product and the sparse Hessian (its pattern holding every nonzero) to
// rounding of the dense one.
func FuzzHessian(f *testing.F) {
	for _, seed := range smoothSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := NewBytes(data)
		shape := in.Shape(3, 3)
		g := graph.New()
		x := g.Input("x", graph.Float64, shape...)
		b := NewBuilder(NewBytes(data[min(in.pos, len(data)):]), Mode{MaxOps: 6}, g, x)
		y := b.BuildSmooth()
		if err := g.Err(); err != nil {
			t.Fatalf("building a smooth function: %v", err)
		}
		rng := b.Rand()
		xv := Values(rng, x.Type())
		w := g.Const(Values(rng, y.Type()))
		v := Values(rng, x.Type())
		fx := ops.Sum(ops.Mul(y, w))
		grad, err := compile.GradWith(fx, []*graph.Node{x}, compile.ZerosIfDisconnected())
		if err != nil {
			t.Fatalf("Grad: %v", err)
		}
		h := mustNode(t)(compile.Hessian(fx, x))
		hv := mustNode(t)(compile.HVP(fx, x, g.Const(v)))
		outs := []*graph.Node{grad[0], h, hv}
		sparse, err := compile.SparseHessian(fx, x)
		switch {
		case err == nil:
			outs = append(outs, sparse.Values)
		case !strings.Contains(err.Error(), "the sparsity pattern is dense"):
			t.Fatalf("SparseHessian: %v", err)
		}
		p, err := compile.Compile(outs)
		if err != nil {
			t.Fatalf("compiling the derivatives: %v", err)
		}
		m, err := vm.New(p, vm.WithThreads(1))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		at := func(x0 *tensor.Dense) [][]float64 {
			vals, err := runValues(t, m, vm.Feeds{x: x0}, outs)
			if err != nil {
				t.Fatalf("running the derivatives: %v", err)
			}
			out := make([][]float64, len(vals))
			for i, d := range vals {
				out[i] = graph.Float64s(d)
			}
			return out
		}
		vals := at(xv)
		n := x.Type().Size()
		hess := vals[1]

		// Central differences of the gradient, column j from x ± δ·e_j.
		const delta = 1e-5
		fd := make([]float64, n*n)
		x0 := graph.Float64s(xv)
		for j := range n {
			shifted := func(s float64) []float64 {
				xs := append([]float64(nil), x0...)
				xs[j] += s
				d, _ := graph.FromFloat64s(graph.Float64, xs, shape...)
				return at(d)[0]
			}
			plus, minus := shifted(delta), shifted(-delta)
			for i := range n {
				fd[i*n+j] = (plus[i] - minus[i]) / (2 * delta)
			}
		}
		near(t, "Hessian vs central differences of the gradient", hess, fd, 1e-6)

		hvWant := make([]float64, n)
		for i := range n {
			for j := range n {
				hvWant[i] += hess[i*n+j] * graph.Float64s(v)[j]
			}
		}
		near(t, "HVP vs the Hessian times the vector", vals[2], hvWant, 1e-10)
		if sparse != nil {
			near(t, "SparseHessian vs the Hessian", sparse.Pattern.Dense(vals[3]), hess, 1e-10)
		}
	})
}

// near fails t unless got equals want within tol·(1 + max |want|), or
// both are NaN.
func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	scale := 0.0
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= tol*(1+scale)) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			t.Fatalf("%s: entry %d is %v, want %v", what, i, got[i], want[i])
		}
	}
}

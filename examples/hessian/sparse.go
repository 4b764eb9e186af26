package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// residual is the discretised boundary-value problem d²u/dx² = sin(u), u = 0
// at both ends, on n unknowns: r_i = u_{i-1} − 2u_i + u_{i+1} − h²·sin(u_i)
// inside, and u at the two ends. Its Jacobian is tridiagonal, and the
// Hessian of Σ r_i² pentadiagonal.
func residual(u *graph.Node) *graph.Node {
	n := u.Shape()[0]
	h := 1 / float64(n-1)
	left, mid, right := ops.Slice(u, 0, 0, n-2), ops.Slice(u, 0, 1, n-1), ops.Slice(u, 0, 2, n)
	inner := ops.Sub(ops.Add(ops.Sub(left, ops.Scale(mid, 2)), right), ops.Scale(ops.Sin(mid), h*h))
	return ops.Concat(0, ops.Slice(u, 0, 0, 1), inner, ops.Slice(u, 0, n-1, n))
}

// SparseReport is what runSparse finds: the Hessian's size, its pattern's
// entries, the colours (Hessian–vector products) it took, and the largest
// relative difference between the sparse Hessian times a random vector
// and compile.HVP's product.
type SparseReport struct {
	N, NNZ, Colors int
	MaxDiff        float64
	Elapsed        time.Duration
}

// SparseHessian computes the sparse Hessian of Σ r_i² at a smooth point
// and checks it against a Hessian–vector product.
func SparseHessian(n int) (SparseReport, error) {
	if n < 3 {
		return SparseReport{}, fmt.Errorf("the problem needs at least 3 unknowns, not %d", n)
	}
	g := graph.New()
	u := g.Input("u", graph.Float64, n)
	f := ops.Sum(ops.Square(residual(u)))
	sh, err := compile.SparseHessian(f, u)
	if err != nil {
		return SparseReport{}, err
	}
	rng := rand.New(rand.NewPCG(1, 1))
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.Float64() - 0.5
	}
	vd, err := graph.FromFloat64s(graph.Float64, v, n)
	if err != nil {
		return SparseReport{}, err
	}
	hv, err := compile.HVP(f, u, g.Const(vd))
	if err != nil {
		return SparseReport{}, err
	}
	prog, err := compile.Compile([]*graph.Node{sh.Values, hv})
	if err != nil {
		return SparseReport{}, err
	}
	m, err := vm.New(prog)
	if err != nil {
		return SparseReport{}, err
	}
	u0 := make([]float64, n)
	for i := range u0 {
		u0[i] = math.Sin(3 * float64(i) / float64(n))
	}
	ud, err := graph.FromFloat64s(graph.Float64, u0, n)
	if err != nil {
		return SparseReport{}, err
	}
	start := time.Now()
	if err := m.Run(vm.Feeds{u: ud}); err != nil {
		return SparseReport{}, err
	}
	elapsed := time.Since(start)
	values, err := m.Value(sh.Values)
	if err != nil {
		return SparseReport{}, err
	}
	want, err := m.Value(hv)
	if err != nil {
		return SparseReport{}, err
	}
	p, vals, w := sh.Pattern, graph.Float64s(values), graph.Float64s(want)
	diff := 0.0
	for i := range n {
		s := 0.0
		for k := p.RowStart[i]; k < p.RowStart[i+1]; k++ {
			s += vals[k] * v[p.Cols[k]]
		}
		diff = max(diff, math.Abs(s-w[i])/max(1, math.Abs(w[i])))
	}
	return SparseReport{N: n, NNZ: p.NNZ(), Colors: sh.Colors, MaxDiff: diff, Elapsed: elapsed}, nil
}

func runSparse(w io.Writer, n int) error {
	r, err := SparseHessian(n)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Hessian of sum(r²) for d²u/dx² = sin(u) on %d unknowns: %d entries may be nonzero (%.4f%%), %d colours, so %d Hessian–vector products instead of %d; run in %v\n",
		r.N, r.NNZ, 100*float64(r.NNZ)/float64(r.N)/float64(r.N), r.Colors, r.Colors, r.N, r.Elapsed.Round(time.Microsecond))
	fmt.Fprintf(w, "sparse Hessian times a random vector against compile.HVP: largest relative difference %.1e\n", r.MaxDiff)
	if r.MaxDiff > 1e-12 {
		return fmt.Errorf("the sparse Hessian disagrees with the Hessian–vector product by %.1e", r.MaxDiff)
	}
	return nil
}

package compile_test

import (
	"math"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// pdeResidual is a 1-D discretised boundary-value problem on n unknowns,
// u” = sin(u) with u = 0 at both ends: r_i = u_{i-1} − 2u_i + u_{i+1} −
// h²·sin(u_i), the end rows being u_0 and u_{n-1}. Its Jacobian is
// tridiagonal.
func pdeResidual(u *graph.Node) *graph.Node {
	n := u.Shape()[0]
	h := 1 / float64(n-1)
	left, mid, right := ops.Slice(u, 0, 0, n-2), ops.Slice(u, 0, 1, n-1), ops.Slice(u, 0, 2, n)
	inner := ops.Sub(ops.Add(ops.Sub(left, ops.Scale(mid, 2)), right), ops.Scale(ops.Sin(mid), h*h))
	return ops.Concat(0, ops.Slice(u, 0, 0, 1), inner, ops.Slice(u, 0, n-1, n))
}

func pdePoint(n int) []float64 {
	u := make([]float64, n)
	for i := range u {
		u[i] = math.Sin(3*float64(i)/float64(n)) + 0.1*math.Cos(float64(i))
	}
	return u
}

// runAt compiles outs and runs them with u fed u0.
func runAt(t testing.TB, u *graph.Node, u0 []float64, outs ...*graph.Node) [][]float64 {
	t.Helper()
	v, _ := graph.FromFloat64s(graph.Float64, u0, len(u0))
	return runNodes(t, vm.Feeds{u: v}, outs...)
}

// The stencil's Jacobian pattern is exactly tridiagonal (the end rows a
// single entry), it takes 3 colours, and the sparse Jacobian and Hessian
// of the sum of squares (pentadiagonal, 5 colours) equal the dense ones.
func TestSparseStencil(t *testing.T) {
	const n = 12
	g := graph.New()
	u := g.Input("u", graph.Float64, n)
	r := pdeResidual(u)
	p, err := compile.JacobianPattern(r, u)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		for j := range n {
			want := i == j || (i > 0 && i < n-1 && (j == i-1 || j == i+1))
			if p.Has(i, j) != want {
				t.Fatalf("pattern entry (%d, %d): %v, want %v", i, j, p.Has(i, j), want)
			}
		}
	}
	sj, err := compile.SparseJacobian(r, u)
	if err != nil {
		t.Fatal(err)
	}
	if sj.Colors != 3 {
		t.Errorf("the tridiagonal Jacobian took %d colours, want 3", sj.Colors)
	}
	dj, err := compile.Jacobian(r, u)
	if err != nil {
		t.Fatal(err)
	}
	f := ops.Sum(ops.Square(r))
	sh, err := compile.SparseHessian(f, u)
	if err != nil {
		t.Fatal(err)
	}
	if sh.Colors > 5 {
		t.Errorf("the Hessian took %d colours, want at most 5", sh.Colors)
	}
	dh, err := compile.Hessian(f, u)
	if err != nil {
		t.Fatal(err)
	}
	vals := runAt(t, u, pdePoint(n), sj.Values, dj, sh.Values, dh)
	for k, c := range []struct {
		sparse  *compile.Sparse
		s, want []float64
	}{{sj, vals[0], vals[1]}, {sh, vals[2], vals[3]}} {
		got := c.sparse.Pattern.Dense(c.s)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-12*max(1, math.Abs(c.want[i])) {
				t.Fatalf("case %d: entry %d: sparse %v, dense %v", k, i, got[i], c.want[i])
			}
			if c.want[i] != 0 && !c.sparse.Pattern.Has(i/n, i%n) {
				t.Fatalf("case %d: dense entry (%d, %d) = %v is outside the pattern", k, i/n, i%n, c.want[i])
			}
		}
	}
}

// BenchmarkSparseJacobian: the n = 10,000 stencil's residual, and its
// sparse Jacobian (3 JVPs and a gather), whose cost is compared with the
// residual's; a dense Jacobian would take 10,000 products.
func BenchmarkSparseJacobian(b *testing.B) {
	const n = 10000
	g := graph.New()
	u := g.Input("u", graph.Float64, n)
	r := pdeResidual(u)
	sj, err := compile.SparseJacobian(r, u)
	if err != nil {
		b.Fatal(err)
	}
	u0, _ := graph.FromFloat64s(graph.Float64, pdePoint(n), n)
	for _, c := range []struct {
		name string
		out  *graph.Node
	}{{"residual", r}, {"sparse-jacobian", sj.Values}} {
		b.Run(c.name, func(b *testing.B) {
			p, err := compile.Compile([]*graph.Node{c.out})
			if err != nil {
				b.Fatal(err)
			}
			m, err := vm.New(p, vm.WithThreads(1))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := m.Run(vm.Feeds{u: u0}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(sj.Colors), "colours")
		})
	}
}

// The pattern is tight for elementwise, broadcasting, reducing, slicing,
// padding and transposing graphs: at a generic point it is exactly the
// dense Jacobian's nonzeros.
func TestPatternIsTight(t *testing.T) {
	cases := []struct {
		name  string
		build func(x *graph.Node) *graph.Node
	}{
		{"elementwise", func(x *graph.Node) *graph.Node { return ops.Mul(ops.Tanh(x), ops.Exp(x)) }},
		{"broadcast", func(x *graph.Node) *graph.Node {
			return ops.Mul(ops.Reshape(x, 2, 3, 1), ops.Reshape(ops.Slice(x, 0, 0, 1), 1, 1, 1))
		}},
		{"reduce an axis", func(x *graph.Node) *graph.Node { return ops.Sum(ops.Square(ops.Reshape(x, 2, 3)), 1) }},
		{"transpose and pad", func(x *graph.Node) *graph.Node {
			return ops.Pad(ops.Transpose(ops.Sin(ops.Reshape(x, 2, 3)), 1, 0), 0, 1, 2)
		}},
		{"sum to a broadcast shape", func(x *graph.Node) *graph.Node {
			return ops.SumTo(ops.Square(ops.Reshape(x, 2, 3)), 1, 3)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", graph.Float64, 6)
			y := c.build(x)
			p, err := compile.JacobianPattern(y, x)
			if err != nil {
				t.Fatal(err)
			}
			j, err := compile.Jacobian(y, x)
			if err != nil {
				t.Fatal(err)
			}
			dense := runAt(t, x, []float64{0.3, -0.7, 1.1, 0.4, -0.2, 0.9}, j)[0]
			for e, v := range dense {
				if (v != 0) != p.Has(e/p.Columns, e%p.Columns) {
					t.Fatalf("entry (%d, %d): dense %v, in pattern %v", e/p.Columns, e%p.Columns, v, p.Has(e/p.Columns, e%p.Columns))
				}
			}
		})
	}
}

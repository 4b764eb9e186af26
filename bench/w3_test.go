package bench

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// W3: second derivatives of a two-layer tanh perceptron in float64,
// f(x) = sum(tanh(tanh(x·W1 + b1)·W2 + b2)) with x in R⁶⁴ and W1, W2 64×64:
// the Hessian–vector product H·v (compile.HVP: the JVP of the gradient
// along v, forward over reverse) and the full 64×64 Hessian
// (compile.Hessian: the JVPs of the gradient along all 64 unit vectors,
// as one batched sweep), both with respect to x. bench/torch/w3.py computes the
// same in PyTorch.

const w3Dim = 64

// w3Network is W3's function, its parameters' values, the point x0 and
// the direction v0.
type w3Network struct {
	x, v, f        *graph.Node
	column         bool // f written with column vectors: W·x, x of shape (64, 1)
	w1, b1, w2, b2 []float64
	x0, v0         []float64
}

func newW3Network() *w3Network { return newW3NetworkForm(false) }

// newW3NetworkForm is newW3Network with f written in row form (x·W, x a
// (1, 64) row) or, when column holds, in column form as textbooks write
// it (Wᵀ·x with x reshaped to (64, 1)): the same function, so the same
// derivatives.
func newW3NetworkForm(column bool) *w3Network {
	scale := 1 / math.Sqrt(w3Dim)
	n := &w3Network{
		w1: uniform(31, w3Dim*w3Dim, scale),
		b1: uniform(32, w3Dim, 0.1),
		w2: uniform(33, w3Dim*w3Dim, scale),
		b2: uniform(34, w3Dim, 0.1),
		x0: uniform(35, w3Dim, 1),
		v0: uniform(36, w3Dim, 1),
	}
	n.column = column
	g := graph.New()
	n.x = g.Input("x", graph.Float64, 1, w3Dim)
	n.v = g.Input("v", graph.Float64, 1, w3Dim)
	n.f = n.function(n.x)
	return n
}

// function builds W3's function of x, a (1, 64) node, in x's graph.
func (n *w3Network) function(x *graph.Node) *graph.Node {
	if n.column {
		return n.columnFunction(x)
	}
	g := x.Graph()
	w1 := g.Const(mustDense(graph.Float64, n.w1, w3Dim, w3Dim))
	b1 := g.Const(mustDense(graph.Float64, n.b1, w3Dim))
	w2 := g.Const(mustDense(graph.Float64, n.w2, w3Dim, w3Dim))
	b2 := g.Const(mustDense(graph.Float64, n.b2, w3Dim))
	h := ops.Tanh(ops.Add(ops.MatMul(x, w1), b1))
	return ops.Sum(ops.Tanh(ops.Add(ops.MatMul(h, w2), b2)))
}

// columnFunction builds W3's function in column form: x reshaped to
// (64, 1), the weights transposed, the biases (64, 1) columns.
func (n *w3Network) columnFunction(x *graph.Node) *graph.Node {
	g := x.Graph()
	w1t := g.Const(mustDense(graph.Float64, transposed(n.w1, w3Dim), w3Dim, w3Dim))
	b1 := g.Const(mustDense(graph.Float64, n.b1, w3Dim, 1))
	w2t := g.Const(mustDense(graph.Float64, transposed(n.w2, w3Dim), w3Dim, w3Dim))
	b2 := g.Const(mustDense(graph.Float64, n.b2, w3Dim, 1))
	xc := ops.Reshape(x, w3Dim, 1)
	h := ops.Tanh(ops.Add(ops.MatMul(w1t, xc), b1))
	return ops.Sum(ops.Tanh(ops.Add(ops.MatMul(w2t, h), b2)))
}

// transposed returns the d×d row-major matrix a transposed.
func transposed(a []float64, d int) []float64 {
	t := make([]float64, len(a))
	for i := range d {
		for j := range d {
			t[j*d+i] = a[i*d+j]
		}
	}
	return t
}

// w3Quantities are what W3 measures, by name: the gradient (the unit of
// cost), the Hessian–vector product by forward over reverse (compile.HVP)
// and by reverse over reverse (the gradient of ⟨∇f, v⟩), and the Hessian.
var w3Quantities = []string{"grad", "hvp", "hvp-rev", "hessian"}

// machine compiles the named quantity (the HVP or the Hessian) on a
// machine with the given threads; it returns the node computed too.
func (n *w3Network) machine(tb testing.TB, quantity string, threads int) (*vm.Machine, vm.Feeds, *graph.Node) {
	tb.Helper()
	prog, feeds, out := n.program(tb, quantity)
	return newMachine(tb, prog, threads), feeds, out
}

// program compiles the named quantity; it returns the program's feeds and
// the node computed too.
func (n *w3Network) program(tb testing.TB, quantity string) (*compile.Program, vm.Feeds, *graph.Node) {
	tb.Helper()
	var out *graph.Node
	var err error
	switch quantity {
	case "grad":
		var g []*graph.Node
		g, err = compile.Grad(n.f, n.x)
		if err == nil {
			out = g[0]
		}
	case "hvp":
		out, err = compile.HVP(n.f, n.x, n.v)
	case "hvp-rev":
		var g, hv []*graph.Node
		g, err = compile.Grad(n.f, n.x)
		if err == nil {
			hv, err = compile.Grad(ops.Sum(ops.Mul(g[0], n.v)), n.x)
		}
		if err == nil {
			out = hv[0]
		}
	default:
		out, err = compile.Hessian(n.f, n.x)
	}
	if err != nil {
		tb.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{out})
	if err != nil {
		tb.Fatal(err)
	}
	feeds := vm.Feeds{n.x: mustDense(graph.Float64, n.x0, 1, w3Dim)}
	if quantity == "hvp" || quantity == "hvp-rev" {
		feeds[n.v] = mustDense(graph.Float64, n.v0, 1, w3Dim)
	}
	return prog, feeds, out
}

// closedFormHessian is W3's Hessian by hand. With z1 = xW1 + b1,
// h = tanh(z1), d = 1 − h², z2 = hW2 + b2, t = tanh(z2), a = 1 − t² and
// g = W2·a (∂f/∂h): ∂f/∂x = W1·(d ⊙ g), and H = W1·M·W1ᵀ with
// M[i][m] = δᵢₘ·(−2hᵢdᵢgᵢ) + dᵢdₘ·Σₖ W2[i][k]·W2[m][k]·(−2tₖaₖ).
func (n *w3Network) closedFormHessian() []float64 {
	const d = w3Dim
	h, dh := make([]float64, d), make([]float64, d)
	for i := range d {
		z := n.b1[i]
		for j := range d {
			z += n.x0[j] * n.w1[j*d+i]
		}
		h[i] = math.Tanh(z)
		dh[i] = 1 - h[i]*h[i]
	}
	s := make([]float64, d) // −2tₖaₖ
	a := make([]float64, d)
	for k := range d {
		z := n.b2[k]
		for i := range d {
			z += h[i] * n.w2[i*d+k]
		}
		t := math.Tanh(z)
		a[k] = 1 - t*t
		s[k] = -2 * t * a[k]
	}
	m := make([]float64, d*d)
	for i := range d {
		g := 0.0
		for k := range d {
			g += n.w2[i*d+k] * a[k]
		}
		m[i*d+i] = -2 * h[i] * dh[i] * g
		for j := range d {
			c := 0.0
			for k := range d {
				c += n.w2[i*d+k] * n.w2[j*d+k] * s[k]
			}
			m[i*d+j] += dh[i] * dh[j] * c
		}
	}
	hess := make([]float64, d*d)
	for j := range d {
		for l := range d {
			v := 0.0
			for i := range d {
				for k := range d {
					v += n.w1[j*d+i] * m[i*d+k] * n.w1[l*d+k]
				}
			}
			hess[j*d+l] = v
		}
	}
	return hess
}

// TestW3 checks W3's Hessian against its closed form and its
// Hessian–vector product against that Hessian times v, with f in row
// form and in column form.
func TestW3(t *testing.T) {
	for _, column := range []bool{false, true} {
		t.Run(fmt.Sprintf("column=%v", column), func(t *testing.T) { testW3(t, newW3NetworkForm(column)) })
	}
}

func testW3(t *testing.T, n *w3Network) {
	want := n.closedFormHessian()
	hv := make([]float64, w3Dim)
	for j := range w3Dim {
		for l := range w3Dim {
			hv[j] += want[j*w3Dim+l] * n.v0[l]
		}
	}
	expected := map[string][]float64{"hvp": hv, "hvp-rev": hv, "hessian": want}
	for _, q := range w3Quantities {
		if expected[q] == nil {
			continue
		}
		m, feeds, out := n.machine(t, q, 1)
		if err := m.Run(feeds); err != nil {
			t.Fatal(err)
		}
		got, err := m.Value(out)
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, q, graph.Float64s(got), expected[q], 1e-12)
		m.Close()
	}
}

// BenchmarkW3 times one run of W3's Hessian–vector product and of its full
// Hessian, on 1 and GOMAXPROCS threads, in µs; hessian-column is the
// Hessian of f written with column vectors.
func BenchmarkW3(b *testing.B) {
	n, col := newW3Network(), newW3NetworkForm(true)
	for _, q := range append(w3Quantities, "hessian-column") {
		net, quantity := n, q
		if q == "hessian-column" {
			net, quantity = col, "hessian"
		}
		for _, threads := range benchThreads() {
			b.Run(fmt.Sprintf("f64/%s/threads=%d", q, threads), func(b *testing.B) {
				m, feeds, _ := net.machine(b, quantity, threads)
				defer m.Close()
				benchRuns(b, m, feeds)
				reportTime(b, 1e3, "us/op")
			})
		}
	}
}

// BenchmarkW3Ratios measures W3's targets as ratios to the gradient on a
// shared machine, where other work slows a run now and then: each round
// times the gradient, the Hessian–vector product and the Hessian one
// after another (one thread), and the ratios reported are the medians of
// the rounds' ratios, which a burst of other work slows all of. The
// last ratio is the Hessian of f written with column vectors (W·x, x of
// shape (64, 1)) to the Hessian of its row form.
func BenchmarkW3Ratios(b *testing.B) {
	n, col := newW3Network(), newW3NetworkForm(true)
	nets := []*w3Network{n, n, n, col}
	quantities := []string{"grad", "hvp", "hessian", "hessian"}
	reps := []int{100, 100, 10, 10} // runs a round, about the same time each
	runs := make([]func(), len(quantities))
	for i, q := range quantities {
		m, feeds, _ := nets[i].machine(b, q, 1)
		defer m.Close()
		runs[i] = func() {
			if err := m.Run(feeds); err != nil {
				b.Fatal(err)
			}
		}
	}
	var hvp, hessian, column []float64
	for b.Loop() {
		var per [4]float64
		for i, run := range runs {
			start := time.Now()
			for range reps[i] {
				run()
			}
			per[i] = float64(time.Since(start)) / float64(reps[i])
		}
		hvp, hessian = append(hvp, per[1]/per[0]), append(hessian, per[2]/per[0])
		column = append(column, per[3]/per[2])
	}
	b.ReportMetric(median(hvp), "hvp/grad")
	b.ReportMetric(median(hessian), "hessian/grad")
	b.ReportMetric(median(column), "colhess/rowhess")
}

// median returns the middle of xs (sorting them).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}

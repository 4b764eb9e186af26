package vm_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// hamiltonian is a Hamiltonian network: H(q, p) = Σ tanh(q·W)²/2 + Σ p²
// over a batch of rows q, p (n, d), with W (d, h). Its loss fits the
// force −∂H/∂q to targets f: mean((∂H/∂q + f)²), so the forward graph
// holds a gradient, built by compile.Grad.
type hamiltonian struct {
	w       *graph.Node
	d, h    int
	initial []float64
}

func newHamiltonian(g *graph.Graph, d, h int) hamiltonian {
	rng := rand.New(rand.NewPCG(3, 4))
	v := make([]float64, d*h)
	for i := range v {
		v[i] = rng.Float64() - 0.5
	}
	t, _ := graph.FromFloat64s(graph.Float64, v, d, h)
	return hamiltonian{w: g.Param("w", t), d: d, h: h, initial: v}
}

// build returns ∂H/∂q and the loss for inputs q, p and f.
func (m hamiltonian) build(q, p, f *graph.Node) (dHdq, loss *graph.Node, err error) {
	h := ops.Add(ops.Scale(ops.Sum(ops.Square(ops.Tanh(ops.MatMul(q, m.w)))), 0.5), ops.Sum(ops.Square(p)))
	grads, err := compile.Grad(h, q)
	if err != nil {
		return nil, nil, err
	}
	return grads[0], ops.Mean(ops.Square(ops.Add(grads[0], f))), nil
}

// force is ∂H/∂q by hand: row i is Σ_k tanh(a_k)(1 − tanh²(a_k)) W[j][k]
// with a = q_i·W.
func (m hamiltonian) force(w, q []float64, n int) []float64 {
	out := make([]float64, n*m.d)
	for i := range n {
		for k := range m.h {
			a := 0.0
			for j := range m.d {
				a += q[i*m.d+j] * w[j*m.h+k]
			}
			s := math.Tanh(a)
			for j := range m.d {
				out[i*m.d+j] += s * (1 - s*s) * w[j*m.h+k]
			}
		}
	}
	return out
}

// loss is the loss by hand.
func (m hamiltonian) loss(w, q, f []float64, n int) float64 {
	sum := 0.0
	for i, g := range m.force(w, q, n) {
		sum += (g + f[i]) * (g + f[i])
	}
	return sum / float64(n*m.d)
}

// A forward graph holding a gradient (compile.Grad of the Hamiltonian)
// runs at any batch size: the gradient is derived again for each, and a
// training step through it (a second derivative) matches finite
// differences of the loss by hand.
func TestRunnerReplaysGradientsInTheForwardGraph(t *testing.T) {
	const d, h, built, lr = 3, 4, 8, 0.5
	g := graph.New()
	m := newHamiltonian(g, d, h)
	q, p, f := g.Input("q", graph.Float64, built, d), g.Input("p", graph.Float64, built, d), g.Input("f", graph.Float64, built, d)
	dHdq, loss, err := m.build(q, p, f)
	if err != nil {
		t.Fatal(err)
	}
	train := func(outputs []*graph.Node) (map[*graph.Node]*graph.Node, error) {
		return sgdUpdates(outputs[0], lr, m.w)
	}
	r, err := vm.NewRunner([]*graph.Node{loss, dHdq}, nil, train, vm.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	w := append([]float64(nil), m.initial...)
	for _, n := range []int{built, 5, built, 5} {
		qs, ps, fs := rows(rng, n, d), rows(rng, n, d), rows(rng, n, d)
		if err := r.Run(vm.Feeds{q: qs, p: ps, f: fs}); err != nil {
			t.Fatalf("batch %d: %v", n, err)
		}
		qv, fv := graph.Float64s(qs), graph.Float64s(fs)
		got, err := r.Scalar(loss)
		if want := m.loss(w, qv, fv, n); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("batch %d: loss %v, %v, want %v", n, got, err, want)
		}
		force, err := r.Value(dHdq)
		if err != nil {
			t.Fatalf("batch %d: %v", n, err)
		}
		for i, want := range m.force(w, qv, n) {
			if got := graph.Float(force, i); math.Abs(got-want) > 1e-12 {
				t.Errorf("batch %d: ∂H/∂q[%d] = %v, want %v", n, i, got, want)
				break
			}
		}
		// The step: w − lr·∂loss/∂w, the derivative by central differences.
		const eps = 1e-6
		next := make([]float64, len(w))
		for i := range w {
			plus, minus := append([]float64(nil), w...), append([]float64(nil), w...)
			plus[i] += eps
			minus[i] -= eps
			next[i] = w[i] - lr*(m.loss(plus, qv, fv, n)-m.loss(minus, qv, fv, n))/(2*eps)
		}
		trained, err := r.Machine().Get(m.w)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range next {
			if got := graph.Float(trained, i); math.Abs(got-want) > 1e-7 {
				t.Errorf("batch %d: trained w[%d] = %v, want %v", n, i, got, want)
			}
		}
		w = graph.Float64s(trained)
	}
	if r.Sizes() != 2 {
		t.Errorf("the runner has programs for %d sizes, want 2", r.Sizes())
	}
}

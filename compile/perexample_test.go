package compile_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Per-example gradients of a two-layer network's cross-entropy equal B
// separate gradient runs, one example each, to rounding: a one-example
// product of a row by a matrix takes gemm's matrix–vector path (dot
// products, or axpys onto the bias where the matmuladd pass fuses it),
// the batch's is one blocked matrix product, and the two may sum in
// another order.
func TestPerExampleGradients(t *testing.T) {
	const tol = 1e-15
	const B, in, hidden, classes = 5, 4, 6, 3
	rng := rand.New(rand.NewPCG(4, 4))
	values := func(shape ...int) []float64 {
		v := make([]float64, graph.ShapeSize(shape))
		for i := range v {
			v[i] = rng.Float64() - 0.5
		}
		return v
	}
	w1v, b1v, w2v := values(in, hidden), values(hidden), values(hidden, classes)
	xv, yv := values(B, in), values(B, classes)
	params := func(g *graph.Graph) []*graph.Node {
		mk := func(name string, v []float64, shape ...int) *graph.Node {
			d, _ := graph.FromFloat64s(graph.Float64, v, shape...)
			return g.Param(name, d)
		}
		return []*graph.Node{mk("w1", w1v, in, hidden), mk("b1", b1v, hidden), mk("w2", w2v, hidden, classes)}
	}
	model := func(p []*graph.Node, x, y *graph.Node) *graph.Node {
		h := ops.Tanh(ops.Add(ops.MatMul(x, p[0]), p[1]))
		return ops.Sum(ops.Square(ops.Sub(ops.MatMul(h, p[2]), y)))
	}

	g := graph.New()
	p := params(g)
	x, y := g.Input("x", graph.Float64, B, in), g.Input("y", graph.Float64, B, classes)
	per, err := compile.PerExampleGradients(func(ex []*graph.Node) *graph.Node { return model(p, ex[0], ex[1]) }, []*graph.Node{x, y}, p)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := compile.Compile(per)
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		t.Fatal(err)
	}
	xd, _ := graph.FromFloat64s(graph.Float64, xv, B, in)
	yd, _ := graph.FromFloat64s(graph.Float64, yv, B, classes)
	if err := m.Run(vm.Feeds{x: xd, y: yd}); err != nil {
		t.Fatal(err)
	}

	// The reference: one example at a time, in a graph of batch 1.
	rg := graph.New()
	rp := params(rg)
	rx, ry := rg.Input("x", graph.Float64, 1, in), rg.Input("y", graph.Float64, 1, classes)
	grads, err := compile.Grad(model(rp, rx, ry), rp...)
	if err != nil {
		t.Fatal(err)
	}
	rprog, err := compile.Compile(grads)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := vm.New(rprog)
	if err != nil {
		t.Fatal(err)
	}
	for b := range B {
		xb, _ := graph.FromFloat64s(graph.Float64, xv[b*in:(b+1)*in], 1, in)
		yb, _ := graph.FromFloat64s(graph.Float64, yv[b*classes:(b+1)*classes], 1, classes)
		if err := rm.Run(vm.Feeds{rx: xb, ry: yb}); err != nil {
			t.Fatal(err)
		}
		for k := range p {
			want, _ := rm.Value(grads[k])
			got, _ := m.Value(per[k])
			n := want.Shape().TotalSize()
			w, gv := graph.Float64s(want), graph.Float64s(got)[b*n:(b+1)*n]
			for i := range w {
				if d := math.Abs(w[i] - gv[i]); !(d <= tol*max(1, math.Abs(w[i]))) {
					t.Fatalf("example %d, parameter %d, entry %d: %v, want %v (tolerance %g)", b, k, i, gv[i], w[i], tol)
				}
			}
		}
	}
	if s := per[0].Shape(); len(s) != 3 || s[0] != B || s[1] != in || s[2] != hidden {
		t.Errorf("shape %v, want (%d, %d, %d)", s, B, in, hidden)
	}
	if _, err := compile.PerExampleGradients(func([]*graph.Node) *graph.Node { return x }, []*graph.Node{x}, p); err == nil {
		t.Error("a non-scalar loss: no error")
	}
}

// BenchmarkPerExampleGradients times the per-example gradients of a
// two-layer network (32 inputs, 64 tanh units, 10 outputs) for 64
// examples, on one thread.
func BenchmarkPerExampleGradients(b *testing.B) {
	const B, in, hidden, classes = 64, 32, 64, 10
	rng := rand.New(rand.NewPCG(5, 5))
	g := graph.New()
	param := func(name string, shape ...int) *graph.Node {
		v := make([]float64, graph.ShapeSize(shape))
		for i := range v {
			v[i] = rng.Float64() - 0.5
		}
		d, _ := graph.FromFloat64s(graph.Float64, v, shape...)
		return g.Param(name, d)
	}
	p := []*graph.Node{param("w1", in, hidden), param("b1", hidden), param("w2", hidden, classes)}
	x, y := g.Input("x", graph.Float64, B, in), g.Input("y", graph.Float64, B, classes)
	per, err := compile.PerExampleGradients(func(ex []*graph.Node) *graph.Node {
		h := ops.Tanh(ops.Add(ops.MatMul(ex[0], p[0]), p[1]))
		return ops.Sum(ops.Square(ops.Sub(ops.MatMul(h, p[2]), ex[1])))
	}, []*graph.Node{x, y}, p)
	if err != nil {
		b.Fatal(err)
	}
	prog, err := compile.Compile(per)
	if err != nil {
		b.Fatal(err)
	}
	m, err := vm.New(prog, vm.WithThreads(1))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	feeds := vm.Feeds{x: graph.NewDense(graph.Float64, B, in), y: graph.NewDense(graph.Float64, B, classes)}
	for b.Loop() {
		if err := m.Run(feeds); err != nil {
			b.Fatal(err)
		}
	}
}

package ops_test

import (
	"math"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// condStepBranches are a step's branches: tanh(c·w + x) and sin(c·x) − w.
func condStepBranches(w *graph.Node) (then, els ops.CondBranch) {
	then = func(o []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Tanh(ops.Add(ops.Mul(o[0], w), o[1]))}
	}
	els = func(o []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Sub(ops.Sin(ops.Mul(o[0], o[1])), w)}
	}
	return then, els
}

// A Cond in a Scan body, its predicate a sequence, computes what the loop
// unrolled with each step's branch picked by hand computes: values,
// gradients, second derivatives and forward-mode tangents.
func TestCondInScanMatchesUnrolled(t *testing.T) {
	preds := []int64{1, 0, 0, 1, 0}
	xv := []float64{0.5, -0.3, 0.8, 0.1, -0.6, 0.9, 0.2, 0.4, -0.7, -0.2}
	build := func(loop bool) ([]*graph.Node, vm.Feeds) {
		g := graph.New()
		h0 := g.Param("h0", f64(t, []float64{0.3, -0.4}, 2))
		w := g.Param("w", f64(t, []float64{0.7, 1.2}, 2))
		xs := g.Param("xs", f64(t, xv, 5, 2))
		then, els := condStepBranches(w)
		var final *graph.Node
		feeds := vm.Feeds{}
		if loop {
			p := g.Input("preds", graph.Int64, 5)
			pv, _ := graph.FromInt64s(graph.Int64, preds, 5)
			feeds[p] = pv
			f, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return ops.Cond(x[0], then, els, []*graph.Node{c[0], x[1]}), nil
			}, []*graph.Node{h0}, []*graph.Node{p, xs})
			final = f[0]
		} else {
			final = h0
			for s, p := range preds {
				branch := els
				if p != 0 {
					branch = then
				}
				final = branch([]*graph.Node{final, ops.Reshape(ops.Slice(xs, 0, s, s+1), 2)})[0]
			}
		}
		loss := ops.Sum(ops.Mul(final, final))
		grads, err := compile.Grad(loss, h0, w, xs)
		if err != nil {
			t.Fatal(err)
		}
		second, err := compile.Grad(ops.Sum(ops.Square(grads[1])), h0, w)
		if err != nil {
			t.Fatal(err)
		}
		tangent := g.Const(f64(t, []float64{0.5, -1}, 2))
		jvp, err := compile.JVP([]*graph.Node{loss, grads[0]}, []*graph.Node{w}, []*graph.Node{tangent})
		if err != nil {
			t.Fatal(err)
		}
		return append(append(append([]*graph.Node{loss}, grads...), second...), jvp...), feeds
	}
	outs, feeds := build(true)
	got := run(t, outs, feeds)
	routs, _ := build(false)
	want := run(t, routs, nil)
	names := []string{"loss", "d/dh0", "d/dw", "d/dxs", "second d/dh0", "second d/dw", "tangent of the loss", "tangent of d/dh0"}
	for i := range want {
		for j := range want[i] {
			if math.Abs(got[i][j]-want[i][j]) > 1e-13*math.Max(1, math.Abs(want[i][j])) {
				t.Fatalf("%s: the loop gives %v, unrolled %v", names[i], got[i], want[i])
			}
		}
	}
}

// A machine runs a Cond and its gradient, in a loop or not, without
// allocating.
func TestCondRunsWithoutAllocating(t *testing.T) {
	g := graph.New()
	pred := g.Input("pred", graph.Float64)
	ps := g.Input("ps", graph.Float64, 6)
	w := g.Param("w", f64(t, []float64{0.7, 1.2}, 2))
	h0 := g.Param("h0", f64(t, []float64{0.3, -0.4}, 2))
	xs := g.Input("xs", graph.Float64, 6, 2)
	then, els := condStepBranches(w)
	y := ops.Cond(pred, then, els, []*graph.Node{h0, w})[0]
	final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return ops.Cond(x[0], then, els, []*graph.Node{c[0], x[1]}), nil
	}, []*graph.Node{h0}, []*graph.Node{ps, xs})
	loss := ops.Add(ops.Sum(y), ops.Sum(final[0]))
	grads, err := compile.Grad(loss, w, h0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile.Compile(append([]*graph.Node{loss}, grads...))
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	feeds := vm.Feeds{pred: f64(t, []float64{1}), ps: f64(t, []float64{1, 0, 1, 1, 0, 0}, 6),
		xs: f64(t, []float64{0.5, -0.3, 0.8, 0.1, -0.6, 0.9, 0.2, 0.4, -0.7, -0.2, 0.3, 0.1}, 6, 2)}
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(5, func() { _ = m.Run(feeds) }); a != 0 {
		t.Errorf("%v allocations per run, want 0", a)
	}
}

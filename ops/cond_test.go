package ops_test

import (
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// condBranches are x·w + 1 (then) and x² − w (else), by hand below.
func condBranches(w *graph.Node) (then, els ops.CondBranch) {
	g := w.Graph()
	then = func(x []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Add(ops.Mul(x[0], w), g.Scalar(1, graph.Float64))}
	}
	els = func(x []*graph.Node) []*graph.Node { return []*graph.Node{ops.Sub(ops.Square(x[0]), w)} }
	return then, els
}

// A Cond computes the selected branch, on a machine (each branch compiled)
// and folded from constants (interpreted) alike, for float and integer
// predicates.
func TestCondValuesByHand(t *testing.T) {
	g := graph.New()
	pred := g.Input("pred", graph.Float64)
	ipred := g.Input("ipred", graph.Int32)
	x := g.Input("x", graph.Float64, 3)
	w := g.Param("w", f64(t, []float64{2, -1, 0.5}, 3))
	then, els := condBranches(w)
	y := ops.Cond(pred, then, els, []*graph.Node{x})[0]
	iy := ops.Cond(ipred, then, els, []*graph.Node{x})[0]
	xv := f64(t, []float64{1, 2, 3}, 3)
	wantThen, wantElse := []float64{3, -1, 2.5}, []float64{-1, 5, 8.5}
	for _, c := range []struct {
		p    float64
		want []float64
	}{{1, wantThen}, {-0.5, wantThen}, {0, wantElse}} {
		ip, _ := graph.FromInt64s(graph.Int32, []int64{int64(c.p * 2)})
		vals := run(t, []*graph.Node{y, iy}, vm.Feeds{pred: f64(t, []float64{c.p}), ipred: ip, x: xv})
		for i := range c.want {
			if vals[0][i] != c.want[i] || vals[1][i] != c.want[i] {
				t.Fatalf("pred %v: got %v and %v, want %v", c.p, vals[0], vals[1], c.want)
			}
		}
	}
	for _, p := range []float64{1, 0} {
		cg := graph.New()
		cw := cg.Const(f64(t, []float64{2, -1, 0.5}, 3))
		ct, ce := condBranches(cw)
		cy := ops.Cond(cg.Scalar(p, graph.Float64), ct, ce, []*graph.Node{cg.Const(xv)})[0]
		prog, err := compile.Compile([]*graph.Node{cy})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(prog.Instructions()); n != 0 {
			t.Fatalf("a Cond of constants compiles to %d instructions, want 0 (folded)", n)
		}
		want := wantThen
		if p == 0 {
			want = wantElse
		}
		vals := run(t, []*graph.Node{cy}, nil)
		for i := range want {
			if vals[0][i] != want[i] {
				t.Fatalf("folded, pred %v: got %v, want %v", p, vals[0], want)
			}
		}
	}
}

// countOp is the identity, counting its runs; with fail set it fails
// instead.
type countOp struct {
	runs *atomic.Int64
	fail bool
}

func (countOp) Name() string                             { return "Count" }
func (countOp) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }
func (op countOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	op.runs.Add(1)
	if op.fail {
		return errors.New("the untaken branch ran")
	}
	graph.CopyValues(out, in[0])
	return nil
}

// Only the branch the predicate selects runs: the other counts no run
// and its failing op is never reached, on a machine and interpreted.
func TestCondRunsOnlyTheTakenBranch(t *testing.T) {
	var thenRuns, elseRuns atomic.Int64
	build := func(g *graph.Graph, pred, x *graph.Node) *graph.Node {
		return ops.Cond(pred, func(o []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Sin(graph.Apply(countOp{runs: &thenRuns}, o[0]))}
		}, func(o []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Cos(graph.Apply(countOp{runs: &elseRuns, fail: true}, o[0]))}
		}, []*graph.Node{x})[0]
	}
	g := graph.New()
	pred := g.Input("pred", graph.Float64)
	x := g.Input("x", graph.Float64, 2)
	y := build(g, pred, x)
	xv := f64(t, []float64{0.5, -1}, 2)
	for k := range 3 {
		vals := run(t, []*graph.Node{y}, vm.Feeds{pred: f64(t, []float64{1}), x: xv})
		if vals[0][0] != math.Sin(0.5) || vals[0][1] != math.Sin(-1) {
			t.Fatalf("got %v, want sin of %v", vals[0], xv.Float64s())
		}
		if thenRuns.Load() != int64(k+1) || elseRuns.Load() != 0 {
			t.Fatalf("after %d runs the then branch ran %d times, the else branch %d", k+1, thenRuns.Load(), elseRuns.Load())
		}
	}
	p, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	err = m.Run(vm.Feeds{pred: f64(t, []float64{0}), x: xv})
	if err == nil || !strings.Contains(err.Error(), "else branch") || !strings.Contains(err.Error(), "the untaken branch ran") {
		t.Fatalf("running the else branch: got %v, want its op's error", err)
	}

	// Interpreted: constants fold, running the taken branch only.
	thenRuns.Store(0)
	elseRuns.Store(0)
	cg := graph.New()
	cy := build(cg, cg.Scalar(2, graph.Float64), cg.Const(xv))
	if vals := run(t, []*graph.Node{cy}, nil); vals[0][1] != math.Sin(-1) {
		t.Fatalf("folded: got %v", vals[0])
	}
	if thenRuns.Load() != 1 || elseRuns.Load() != 0 {
		t.Fatalf("folded: the then branch ran %d times, the else branch %d", thenRuns.Load(), elseRuns.Load())
	}
}

// A first-order gradient runs only the taken branch's gradient, and the
// values the other branch alone captured get zero.
func TestCondGradientOfTheTakenBranch(t *testing.T) {
	g := graph.New()
	pred := g.Input("pred", graph.Float64)
	x := g.Param("x", f64(t, []float64{0.5, -1}, 2))
	a := g.Param("a", f64(t, []float64{2, 3}, 2))
	b := g.Param("b", f64(t, []float64{-1, 4}, 2))
	y := ops.Cond(pred, func(o []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Mul(ops.Square(o[0]), a)}
	}, func(o []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Mul(ops.Exp(o[0]), b)}
	}, []*graph.Node{x})[0]
	grads, err := compile.Grad(ops.Sum(y), x, a, b)
	if err != nil {
		t.Fatal(err)
	}
	// then: d/dx = 2·x·a, d/da = x², d/db = 0; else: d/dx = e^x·b, 0, e^x.
	vals := run(t, grads, vm.Feeds{pred: f64(t, []float64{1})})
	want := [][]float64{{2, -6}, {0.25, 1}, {0, 0}}
	for i := range want {
		for j := range want[i] {
			if math.Abs(vals[i][j]-want[i][j]) > 1e-15 {
				t.Fatalf("then: gradients %v, want %v", vals, want)
			}
		}
	}
	vals = run(t, grads, vm.Feeds{pred: f64(t, []float64{0})})
	e0, e1 := math.Exp(0.5), math.Exp(-1)
	want = [][]float64{{-e0, 4 * e1}, {0, 0}, {e0, e1}}
	for i := range want {
		for j := range want[i] {
			if math.Abs(vals[i][j]-want[i][j]) > 1e-15 {
				t.Fatalf("else: gradients %v, want %v", vals, want)
			}
		}
	}
}

func TestCondErrors(t *testing.T) {
	same := func(o []*graph.Node) []*graph.Node { return o }
	cases := []struct {
		name  string
		build func(g *graph.Graph) []*graph.Node
		want  string
	}{
		{"outputs of other shapes, as many nodes returned as a branch gives", func(g *graph.Graph) []*graph.Node {
			x := g.Input("x", graph.Float64, 3)
			outs := ops.Cond(g.Input("p", graph.Float64), func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{o[0], o[0], o[0]}
			}, func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{o[0], o[0], ops.Concat(0, o[0], o[0])}
			}, []*graph.Node{x})
			return outs[2:] // indexing the third output does not panic
		}, "the then branch returns output 2 of type float64(3), the else branch of type float64(6)"},
		{"a predicate of several values, as many nodes returned as the branches give", func(g *graph.Graph) []*graph.Node {
			pair := func(o []*graph.Node) []*graph.Node { return []*graph.Node{o[0], o[0]} }
			return ops.Cond(g.Input("p", graph.Float64, 2), pair, pair, []*graph.Node{g.Input("x", graph.Float64, 3)})[1:]
		}, "pred has type float64(2): it must hold one value"},
		{"outputs of other shapes", func(g *graph.Graph) []*graph.Node {
			x := g.Input("x", graph.Float64, 3)
			return ops.Cond(g.Input("p", graph.Float64), same, func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Concat(0, o[0], o[0])}
			}, []*graph.Node{x})
		}, "the then branch returns output 0 of type float64(3), the else branch of type float64(6)"},
		{"outputs of other dtypes", func(g *graph.Graph) []*graph.Node {
			x := g.Input("x", graph.Float64, 3)
			return ops.Cond(g.Input("p", graph.Float64), same, func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Cast(o[0], graph.Float32)}
			}, []*graph.Node{x})
		}, "the then branch returns output 0 of type float64(3), the else branch of type float32(3)"},
		{"another number of outputs", func(g *graph.Graph) []*graph.Node {
			x := g.Input("x", graph.Float64, 3)
			return ops.Cond(g.Input("p", graph.Float64), same, func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{o[0], o[0]}
			}, []*graph.Node{x})
		}, "the then branch returns 1 outputs, the else branch 2"},
		{"no outputs", func(g *graph.Graph) []*graph.Node {
			none := func([]*graph.Node) []*graph.Node { return nil }
			return ops.Cond(g.Input("p", graph.Float64), none, none, nil)
		}, "the branches return no outputs"},
		{"a predicate of several values", func(g *graph.Graph) []*graph.Node {
			return ops.Cond(g.Input("p", graph.Float64, 2), same, same, []*graph.Node{g.Input("x", graph.Float64, 3)})
		}, "pred has type float64(2): it must hold one value"},
		{"nil predicate", func(g *graph.Graph) []*graph.Node {
			return ops.Cond(nil, same, same, []*graph.Node{g.Input("x", graph.Float64, 3)})
		}, "pred is nil"},
		{"nil operand", func(g *graph.Graph) []*graph.Node {
			return ops.Cond(g.Input("p", graph.Float64), same, same, []*graph.Node{nil})
		}, "operand 0 is nil"},
		{"nil branch", func(g *graph.Graph) []*graph.Node {
			return ops.Cond(g.Input("p", graph.Float64), same, nil, []*graph.Node{g.Input("x", graph.Float64, 3)})
		}, "a branch is nil"},
		{"a branch panics", func(g *graph.Graph) []*graph.Node {
			return ops.Cond(g.Input("p", graph.Float64), same, func([]*graph.Node) []*graph.Node { panic("boom") },
				[]*graph.Node{g.Input("x", graph.Float64, 3)})
		}, "else branch: panicked: boom"},
		{"a branch fails to build", func(g *graph.Graph) []*graph.Node {
			return ops.Cond(g.Input("p", graph.Float64), func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.MatMul(o[0], o[0])}
			}, same, []*graph.Node{g.Input("x", graph.Float64, 3)})
		}, "then branch: MatMul at cond_test.go:"},
		{"a branch makes an input", func(g *graph.Graph) []*graph.Node {
			return ops.Cond(g.Input("p", graph.Float64), func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Add(o[0], o[0].Graph().Input("stray", graph.Float64, 3))}
			}, same, []*graph.Node{g.Input("x", graph.Float64, 3)})
		}, `then branch makes input input "stray" #1 float64(3): feed values as operands`},
		{"a branch returns a node of another graph", func(g *graph.Graph) []*graph.Node {
			other := graph.New().Input("o", graph.Float64, 3)
			return ops.Cond(g.Input("p", graph.Float64), same, func([]*graph.Node) []*graph.Node {
				return []*graph.Node{other}
			}, []*graph.Node{g.Input("x", graph.Float64, 3)})
		}, "else branch returns input \"o\" #0 float64(3), a node of an unrelated graph"},
		{"unrelated graphs", func(g *graph.Graph) []*graph.Node {
			return ops.Cond(g.Input("p", graph.Float64), same, same, []*graph.Node{graph.New().Input("x", graph.Float64, 3)})
		}, "pred and operands belong to unrelated graphs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			outs := c.build(g)
			if len(outs) == 0 || outs[0].Err() == nil {
				t.Fatalf("no error")
			}
			err := g.Err()
			if err == nil || !strings.Contains(err.Error(), "nabla: Cond: ") || !strings.Contains(err.Error(), c.want) ||
				!strings.Contains(err.Error(), "cond_test.go:") {
				t.Fatalf("error %v, want one from Cond containing %q and the caller's file", err, c.want)
			}
		})
	}
}

// A Cond goes through DOT export, profiles and NaN checks like any op: a
// NaN made in the taken branch is reported naming the branch and its op.
func TestCondWithTheTools(t *testing.T) {
	g := graph.New()
	pred := g.Input("pred", graph.Float64)
	x := g.Input("x", graph.Float64, 2)
	w := g.Param("w", f64(t, []float64{2, 3}, 2))
	y := ops.Cond(pred, func(o []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Log(ops.Mul(o[0], w))}
	}, func(o []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Mul(o[0], w)}
	}, []*graph.Node{x})[0]
	grads, err := compile.Grad(ops.Sum(y), w)
	if err != nil {
		t.Fatal(err)
	}
	var dot strings.Builder
	if err := graph.WriteDot(&dot, g, graph.DotOptions{}); err != nil || !strings.Contains(dot.String(), "Cond") {
		t.Fatalf("graph DOT: %v\n%s", err, dot.String())
	}
	p, err := compile.Compile([]*graph.Node{y, grads[0]})
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p, vm.WithNaNCheck(), vm.WithProfile())
	if err != nil {
		t.Fatal(err)
	}
	one := f64(t, []float64{1})
	if err := m.Run(vm.Feeds{pred: one, x: f64(t, []float64{2, 3}, 2)}); err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := m.Profile().WriteTable(&table, 5); err != nil || !strings.Contains(table.String(), "Cond") {
		t.Fatalf("profile: %v\n%s", err, table.String())
	}
	if err := m.Run(vm.Feeds{pred: f64(t, []float64{0}), x: f64(t, []float64{-2, 3}, 2)}); err != nil {
		t.Fatalf("the else branch makes no NaN: %v", err)
	}
	err = m.Run(vm.Feeds{pred: one, x: f64(t, []float64{-2, 3}, 2)})
	if err == nil || !strings.Contains(err.Error(), "Log") || !strings.Contains(err.Error(), "then branch") {
		t.Fatalf("NaN in the then branch: got %v, want an error naming Log and the branch", err)
	}
}

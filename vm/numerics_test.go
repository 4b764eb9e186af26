package vm_test

import (
	"math"
	"regexp"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The NaN/Inf guard stops at the node that first computes a NaN or an
// infinity and names it and the line that built it.
func TestNaNCheckNumerics(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(x *graph.Node) *graph.Node
		x     []float64
		want  string
	}{
		{"log(-1)", func(x *graph.Node) *graph.Node { return ops.Log(x).SetName("bad") }, []float64{-1, 1}, `Log "bad"`},
		{"0/0", func(x *graph.Node) *graph.Node { return ops.Div(x, x).SetName("bad") }, []float64{0, 1}, `Div "bad"`},
		{"exp overflow", func(x *graph.Node) *graph.Node { return ops.Exp(x).SetName("bad") }, []float64{1000, 1}, `Exp "bad"`},
		{"cross-entropy with an infinite logit", func(x *graph.Node) *graph.Node {
			labels := x.Graph().Const(dense(t, graph.Float64, []int{1}, 0))
			return ops.CrossEntropy(ops.Reshape(ops.Scale(x, math.Inf(1)), 1, 2), labels).SetName("bad")
		}, []float64{1, 1}, "output element 0 is"},
	} {
		g := graph.New()
		x := g.Input("x", graph.Float64, 2)
		y := c.build(x)
		p, err := compile.Compile([]*graph.Node{y})
		if err != nil {
			t.Fatalf("case %s: %v", c.name, err)
		}
		m, err := vm.New(p, vm.WithNaNCheck())
		if err != nil {
			t.Fatal(err)
		}
		err = m.Run(vm.Feeds{x: dense(t, graph.Float64, []int{2}, c.x...)})
		wantErr(t, c.name, err, c.want)
		if err != nil && !regexp.MustCompile(`built at numerics_test\.go:\d+`).MatchString(err.Error()) {
			t.Errorf("case %s: %v does not name the line that built the node", c.name, err)
		}
	}
}

// Softmax, log-softmax and cross-entropy stay finite at logits of ±1e4 in
// both dtypes, and match their limits: softmax is one-hot, log-softmax is
// 0 and -2e4, the loss of the right class is 0 and of the wrong one 2e4.
func TestExtremeLogits(t *testing.T) {
	for _, dtype := range []graph.Type{graph.TypeOf(graph.Float32), graph.TypeOf(graph.Float64)} {
		g := graph.New()
		x := g.Input("x", dtype.DType, 2, 2)
		labels := g.Const(dense(t, dtype.DType, []int{2}, 0, 1))
		outs := []*graph.Node{ops.Softmax(x, -1), ops.LogSoftmax(x, -1), ops.CrossEntropy(x, labels)}
		p, err := compile.Compile(outs)
		if err != nil {
			t.Fatal(err)
		}
		m, err := vm.New(p, vm.WithNaNCheck())
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Run(vm.Feeds{x: dense(t, dtype.DType, []int{2, 2}, 1e4, -1e4, 1e4, -1e4)}); err != nil {
			t.Fatalf("%v: %v", dtype.DType, err)
		}
		want := [][]float64{{1, 0, 1, 0}, {0, -2e4, 0, -2e4}, {0, 2e4}}
		for i, o := range outs {
			v, err := m.Value(o)
			if err != nil {
				t.Fatal(err)
			}
			got := graph.Float64s(v)
			for j := range got {
				if got[j] != want[i][j] {
					t.Errorf("%v %v: got %v, want %v", dtype.DType, o, got, want[i])
					break
				}
			}
		}
	}
}

// Feed errors name the caller's line, as build errors do.
func TestFeedErrorsNameTheCaller(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	p, err := compile.Compile([]*graph.Node{ops.Neg(x)})
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	for name, feeds := range map[string]vm.Feeds{
		"missing":     {},
		"wrong shape": {x: dense(t, graph.Float64, []int{3}, 1, 2, 3)},
		"nil tensor":  {x: nil},
	} {
		err := m.Run(feeds)
		if err == nil || !regexp.MustCompile(`at numerics_test\.go:\d+$`).MatchString(err.Error()) {
			t.Errorf("case %s: got %v, want it to end with this file's line", name, err)
		}
	}
}

// A NaN the compiler computed by folding log(-1) is blamed on the Log, not
// on the op that reads it.
func TestNaNCheckBlamesTheFoldedOp(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64)
	c := ops.Log(g.Scalar(-1, graph.Float64)).SetName("folded")
	y := ops.Add(x, c).SetName("consumer")
	p, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p, vm.WithNaNCheck())
	if err != nil {
		t.Fatal(err)
	}
	err = m.Run(vm.Feeds{x: dense(t, graph.Float64, nil, 1)})
	wantErr(t, "folded log(-1)", err, `nabla: Log (node Log "folded"`)
	wantErr(t, "folded log(-1)", err, "numerics_test.go:")
}

// An empty value with a huge dimension, (1<<40, 0), runs at once: no
// kernel loops over the outer dimensions of an output with no elements,
// at run time or when folding constants. A kernel that did would run for
// hours, and go test's -timeout ends it: no clock is read here, so a busy
// machine cannot fail the test.
func TestEmptyOutputsWithHugeDimensions(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 1<<40, 0)
	c := g.Const(graph.NewDense(graph.Float64, 1<<40, 0))
	outs := []*graph.Node{ops.Softmax(x, -1), ops.LogSoftmax(ops.Exp(c), 0)}
	p, err := compile.Compile(outs)
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(vm.Feeds{x: graph.NewDense(graph.Float64, 1<<40, 0)}); err != nil {
		t.Fatal(err)
	}
}

package ops_test

import (
	"math"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// FixedPoint, and Root's matrix-free derivatives, of an x of rank 8:
// their loops carry x flat (a carry of rank 8 cannot be stacked over the
// steps; FixedPoint refused it, naming its While, and Root's gradient
// failed in Root's "solve"). x* = 2c for x = x/2 + c, so dΣx*/dc = 2;
// u* = c/2 for 2u − c = 0, so dΣu*/dc = ½.
func TestRootsOfRankEight(t *testing.T) {
	shape := []int{2, 2, 2, 2, 2, 2, 2, 1} // 128 elements: matrix-free by default
	n := 128
	cv := make([]float64, n)
	for i := range cv {
		cv[i] = float64(i%7) - 3
	}
	g := graph.New()
	c := g.Param("c", f64(t, cv, shape...))
	fixed := ops.FixedPoint(func(x *graph.Node) *graph.Node { return ops.Add(ops.Scale(x, 0.5), c) }, g.Const(graph.NewDenseOf(c.Type())), 1e-14, 200)
	root := ops.Root(func(u *graph.Node) *graph.Node { return ops.Sub(ops.Scale(u, 2), c) }, g.Const(graph.NewDenseOf(c.Type())),
		func(F ops.RootFunc, u0 *graph.Node) *graph.Node { return ops.Scale(c, 0.5) })
	d, err := compile.Grad(ops.Add(ops.Sum(fixed), ops.Sum(root)), c)
	if err != nil {
		t.Fatal(err)
	}
	dRoot, err := compile.Grad(ops.Sum(root), c)
	if err != nil {
		t.Fatal(err)
	}
	got := run(t, []*graph.Node{fixed, root, d[0], dRoot[0]}, nil)
	for i, ci := range cv {
		for _, v := range []struct {
			what      string
			got, want float64
		}{{"x*", got[0][i], 2 * ci}, {"u*", got[1][i], ci / 2}, {"d(Σx* + Σu*)/dc", got[2][i], 2.5}, {"dΣu*/dc", got[3][i], 0.5}} {
			if math.Abs(v.got-v.want) > 1e-9 {
				t.Fatalf("element %d: %s = %v, want %v", i, v.what, v.got, v.want)
			}
		}
	}
}

// FixedPoint's loop, which carries x flat, follows a vm.Runner's batch
// size: x* = 2θ for x = x/2 + θ, from each batch's x0, at every size.
func TestFixedPointAtEveryBatchSize(t *testing.T) {
	g := graph.New()
	x0 := g.Input("x0", graph.Float64, 4, 3)
	theta := g.Param("theta", f64(t, []float64{1, -2, 0.5}, 3))
	x := ops.FixedPoint(func(x *graph.Node) *graph.Node { return ops.Add(ops.Scale(x, 0.5), theta) }, x0, 1e-14, 200)
	r, err := vm.NewRunner([]*graph.Node{x}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int{4, 2, 5} {
		v := graph.NewDenseOf(graph.TypeOf(graph.Float64, b, 3))
		for i := range b * 3 {
			graph.SetFloat(v, i, float64(i))
		}
		if err := r.Run(vm.Feeds{x0: v}); err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
		got, err := r.Value(x)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(graph.Float64s(got)); n != 3*b {
			t.Fatalf("batch %d: %d elements, want %d", b, n, 3*b)
		}
		for i, e := range graph.Float64s(got) {
			if want := 2 * []float64{1, -2, 0.5}[i%3]; math.Abs(e-want) > 1e-12 {
				t.Fatalf("batch %d: element %d is %v, want %v", b, i, e, want)
			}
		}
	}
}

// Root and FixedPoint of an x of no elements: their gradient with
// respect to what F reads is zeros (nothing depends on it), in either way
// of solving; it failed in Concat's name, forming a Jacobian of no rows.
func TestRootsOfNoElements(t *testing.T) {
	for _, solve := range rootSolves {
		for _, shape := range [][]int{{0}, {2, 0}, {0, 3}} {
			g := graph.New()
			theta := g.Param("theta", f64(t, []float64{1, 2, 3}, 3))
			empty := g.Const(graph.NewDenseOf(graph.TypeOf(graph.Float64, shape...)))
			F := func(x *graph.Node) *graph.Node { return ops.Sub(x, ops.Mul(ops.Sum(theta), x)) }
			fixed := ops.FixedPoint(func(x *graph.Node) *graph.Node { return ops.Mul(ops.Sum(theta), x) }, empty, 1e-12, 10, solve.opts...)
			root := ops.Root(F, empty, func(_ ops.RootFunc, x0 *graph.Node) *graph.Node { return x0 }, solve.opts...)
			d, err := compile.Grad(ops.Add(ops.Sum(fixed), ops.Sum(root)), theta)
			if err != nil {
				t.Fatalf("%s %v: %v", solve.name, shape, err)
			}
			if got := run(t, d, nil)[0]; len(got) != 3 || got[0] != 0 || got[1] != 0 || got[2] != 0 {
				t.Fatalf("%s %v: the gradient is %v, want zeros", solve.name, shape, got)
			}
		}
	}
}

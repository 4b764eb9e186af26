package compile_test

import (
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/optable"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// vmapRoots are per-example functions of an example x (2,) and a shared
// w (2,) holding a Root (u = √(x/w), the root of u²w − x) or a FixedPoint
// (u = x/(1 − w/2), the fixed point of uw/2 + x, iterated in a While that
// takes a number of steps of its own for each example), differentiated
// densely or matrix-free.
var vmapRoots = []struct {
	name string
	f    func(ex []*graph.Node) []*graph.Node
}{
	{"Root/dense", vmapRoot(false)},
	{"Root/matrix-free", vmapRoot(false, ops.DenseUpTo(0))},
	{"FixedPoint/dense", vmapRoot(true)},
	{"FixedPoint/matrix-free", vmapRoot(true, ops.DenseUpTo(0))},
}

func vmapRoot(fixed bool, opts ...ops.RootOption) func(ex []*graph.Node) []*graph.Node {
	return func(ex []*graph.Node) []*graph.Node {
		x, w := ex[0], ex[1]
		if fixed {
			T := func(u *graph.Node) *graph.Node { return ops.Add(ops.Scale(ops.Mul(u, w), 0.5), x) }
			return []*graph.Node{ops.FixedPoint(T, x, 1e-14, 500, opts...)}
		}
		F := func(u *graph.Node) *graph.Node { return ops.Sub(ops.Mul(ops.Mul(u, u), w), x) }
		solve := func(_ ops.RootFunc, x0 *graph.Node) *graph.Node { return ops.Sqrt(ops.Div(x0, w)) }
		return []*graph.Node{ops.Root(F, x, solve, opts...)}
	}
}

// Vmap of a function holding a Root or a FixedPoint, then Grad (and
// JVP) of the result: the values, the gradients and the tangents equal B
// separate runs of the function (bit for bit; the shared w's gradient,
// summed over the examples, and the tangents to 1e-12), and the
// gradients central differences. The matrix-free gradient
// failed ("input w … belongs to another graph": it built F again from
// the Go function, reading the nodes of Vmap's traced graph), and the
// dense one was zeros (the loop over the examples cut F's graph off the
// solution).
func TestVmapRootGrad(t *testing.T) {
	cv := optable.TensorOf([]int{vmapBatch, 2}, 1, 2, 3, 4, 5, 6)
	wv := optable.TensorOf([]int{2}, 0.5, 1.5)
	dx, dw := optable.TensorOf([]int{vmapBatch, 2}, 0.3, -0.2, 0.5, 0.1, -0.4, 0.7), optable.TensorOf([]int{2}, -0.1, 0.2)
	for _, c := range vmapRoots {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			x, w := g.Input("x", graph.Float64, vmapBatch, 2), g.Input("w", graph.Float64, 2)
			ys, err := compile.Vmap(c.f, []*graph.Node{x, w}, []int{0, compile.NotBatched}, nil)
			if err != nil {
				t.Fatal(err)
			}
			d, err := compile.Grad(ops.Sum(ys[0]), x, w)
			if err != nil {
				t.Fatal(err)
			}
			tan, err := compile.JVP(ys, []*graph.Node{x, w}, []*graph.Node{g.Const(dx), g.Const(dw)})
			if err != nil {
				t.Fatal(err)
			}
			got := runVmapped(t, slices.Concat(ys, d, tan), vm.Feeds{x: cv, w: wv})
			var gw *tensor.Dense
			for b := range vmapBatch {
				want := separateRootRun(t, c.f, rowOf(t, cv, b), wv, rowOf(t, dx, b), dw)
				for k, what := range []string{"value", "gradient"} {
					if row := rowOf(t, got[k], b); !sameBitsDense(row, want[k]) {
						t.Errorf("example %d: %s %v, separately %v", b, what, graph.Float64s(row), graph.Float64s(want[k]))
					}
				}
				if row := rowOf(t, got[3], b); !closeDense(row, want[3], 1e-12) {
					t.Errorf("example %d: tangent %v, separately %v", b, graph.Float64s(row), graph.Float64s(want[3]))
				}
				if gw == nil {
					gw = want[2]
				} else {
					gw = sumDense(t, gw, want[2])
				}
			}
			if !closeDense(got[2], gw, 1e-12) {
				t.Errorf("the shared input's gradient is %v, the separate runs' sum %v", graph.Float64s(got[2]), graph.Float64s(gw))
			}
			fn := func(in []*graph.Node) *graph.Node { return vmapped(c.f, in, []int{0, compile.NotBatched}) }
			if err := gradcheck.Check(fn, []*tensor.Dense{cv, wv}, gradcheck.Options{}); err != nil {
				t.Error(err)
			}
		})
	}
}

// separateRootRun is f's value, its gradients with respect to x and w and
// its tangent along (dx, dw) at one example, computed without Vmap.
func separateRootRun(t *testing.T, f func([]*graph.Node) []*graph.Node, xv, wv, dx, dw *tensor.Dense) []*tensor.Dense {
	t.Helper()
	g := graph.New()
	x, w := g.Input("x", graph.Float64, 2), g.Input("w", graph.Float64, 2)
	y := f([]*graph.Node{x, w})[0]
	d, err := compile.Grad(ops.Sum(y), x, w)
	if err != nil {
		t.Fatal(err)
	}
	tan, err := compile.JVP([]*graph.Node{y}, []*graph.Node{x, w}, []*graph.Node{g.Const(dx), g.Const(dw)})
	if err != nil {
		t.Fatal(err)
	}
	return runVmapped(t, slices.Concat([]*graph.Node{y}, d, tan), vm.Feeds{x: xv, w: wv})
}

// sumDense is a + b, elementwise.
func sumDense(t *testing.T, a, b *tensor.Dense) *tensor.Dense {
	t.Helper()
	x, y := graph.Float64s(a), graph.Float64s(b)
	s := make([]float64, len(x))
	for i := range s {
		s[i] = x[i] + y[i]
	}
	d, err := graph.FromFloat64s(a.Dtype(), s, a.Shape()...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

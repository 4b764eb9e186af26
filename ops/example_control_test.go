package ops_test

import (
	"fmt"
	"log"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A Cond runs one branch, chosen at run time, and differentiates through
// it: |x|·w as x·w or −x·w, with the gradient with respect to w.
func ExampleCond() {
	g := graph.New()
	x := g.Input("x", graph.Float64)
	wv, _ := graph.FromFloat64s(graph.Float64, []float64{3})
	w := g.Param("w", wv)
	zero := g.Scalar(0, graph.Float64)
	y := ops.Cond(ops.Greater(x, zero), func(o []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Mul(o[0], w)}
	}, func(o []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Neg(ops.Mul(o[0], w))}
	}, []*graph.Node{x})[0]
	grads, err := compile.Grad(y, w)
	if err != nil {
		log.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{y, grads[0]})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range []float64{2, -5} {
		xv, _ := graph.FromFloat64s(graph.Float64, []float64{v})
		if err := m.Run(vm.Feeds{x: xv}); err != nil {
			log.Fatal(err)
		}
		yv, _ := m.Value(y)
		gv, _ := m.Value(grads[0])
		fmt.Printf("x=%v: y=%v dy/dw=%v\n", v, yv.Float64s()[0], gv.Float64s()[0])
	}
	// Output:
	// x=2: y=6 dy/dw=2
	// x=-5: y=15 dy/dw=5
}

// A While loop halves x until it is at most 1, at most 10 times: the
// number of steps depends on x, and the derivative is that of the steps
// taken (2⁻ⁿ).
func ExampleWhile() {
	g := graph.New()
	x := g.Input("x", graph.Float64)
	one := g.Scalar(1, graph.Float64)
	final, steps := ops.While(func(c []*graph.Node) *graph.Node {
		return ops.Greater(c[0], one)
	}, func(c []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Scale(c[0], 0.5)}
	}, []*graph.Node{x}, ops.MaxSteps(10))
	grads, err := compile.Grad(final[0], x)
	if err != nil {
		log.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{final[0], steps, grads[0]})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range []float64{0.5, 3, 100} {
		xv, _ := graph.FromFloat64s(graph.Float64, []float64{v})
		if err := m.Run(vm.Feeds{x: xv}); err != nil {
			log.Fatal(err)
		}
		fv, _ := m.Value(final[0])
		sv, _ := m.Value(steps)
		gv, _ := m.Value(grads[0])
		fmt.Printf("x=%v: %v after %v steps, derivative %v\n", v, fv.Float64s()[0], sv.Int64s()[0], gv.Float64s()[0])
	}
	// Output:
	// x=0.5: 0.5 after 0 steps, derivative 1
	// x=3: 0.75 after 2 steps, derivative 0.25
	// x=100: 0.78125 after 7 steps, derivative 0.0078125
}

// Root finds x = ∛a by Newton's iteration in a While loop and
// differentiates it by the implicit function theorem, not through the
// iterations: dx/da = 1/(3x²).
func ExampleRoot() {
	g := graph.New()
	av, _ := graph.FromFloat64s(graph.Float64, []float64{8})
	a := g.Param("a", av)
	cube := func(x *graph.Node) *graph.Node { return ops.Sub(ops.Mul(ops.Square(x), x), a) }
	tol := g.Scalar(1e-13, graph.Float64)
	x := ops.Root(cube, a, func(F ops.RootFunc, x0 *graph.Node) *graph.Node {
		final, _ := ops.While(func(c []*graph.Node) *graph.Node {
			return ops.Greater(ops.Abs(F(c[0])), tol)
		}, func(c []*graph.Node) []*graph.Node { // x − F(x)/F'(x)
			return []*graph.Node{ops.Sub(c[0], ops.Div(F(c[0]), ops.Scale(ops.Square(c[0]), 3)))}
		}, []*graph.Node{x0}, ops.MaxSteps(50))
		return final[0]
	})
	grads, err := compile.Grad(ops.Sum(x), a)
	if err != nil {
		log.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{x, grads[0]})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Run(nil); err != nil {
		log.Fatal(err)
	}
	xv, _ := m.Value(x)
	dv, _ := m.Value(grads[0])
	fmt.Printf("x = %.12f, dx/da = %.12f\n", graph.Float64s(xv)[0], graph.Float64s(dv)[0])
	// Output:
	// x = 2.000000000000, dx/da = 0.083333333333
}

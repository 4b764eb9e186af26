package compile_test

import (
	"fmt"
	"log"
	"math"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The first and second derivatives of x³ at 1.3: 3x² = 5.07 and 6x = 7.8.
// A gradient is a node like any other, so it can be differentiated again.
func ExampleGrad() {
	g := graph.New()
	x := g.Input("x", graph.Float64) // a scalar
	dy, err := compile.Grad(ops.PowConst(x, 3), x)
	if err != nil {
		log.Fatal(err)
	}
	d2y, err := compile.Grad(dy[0], x)
	if err != nil {
		log.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{dy[0], d2y[0]})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{1.3})
	if err := m.Run(vm.Feeds{x: xv}); err != nil {
		log.Fatal(err)
	}
	v1, _ := m.Value(dy[0])
	v2, _ := m.Value(d2y[0])
	fmt.Printf("dy/dx %.4f, d²y/dx² %.4f\n", v1.Float64s()[0], v2.Float64s()[0])
	// Output:
	// dy/dx 5.0700, d²y/dx² 7.8000
}

// The Hessian of log-sum-exp, diag(p) − p·pᵀ where p = softmax(x), at
// x = (0, 0, ln 2), where p = (1/4, 1/4, 1/2).
func ExampleHessian() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	f := ops.LogSumExp(x)
	h, err := compile.Hessian(f, x)
	if err != nil {
		log.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{h})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{0, 0, math.Ln2}, 3)
	if err := m.Run(vm.Feeds{x: xv}); err != nil {
		log.Fatal(err)
	}
	hv, _ := m.Value(h)
	fmt.Printf("%v %.4f\n", h.Type(), hv.Float64s())
	// Output:
	// float64(3,3) [0.1875 -0.0625 -0.1250 -0.0625 0.1875 -0.1250 -0.1250 -0.1250 0.2500]
}

// A Hessian–vector product without forming the Hessian: for log-sum-exp at
// x = (0, 0, ln 2) and v = (1, 0, −1), it is the Hessian's first column
// minus its last.
func ExampleHVP() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	v := g.Input("v", graph.Float64, 3)
	hvp, err := compile.HVP(ops.LogSumExp(x), x, v)
	if err != nil {
		log.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{hvp})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{0, 0, math.Ln2}, 3)
	vv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 0, -1}, 3)
	if err := m.Run(vm.Feeds{x: xv, v: vv}); err != nil {
		log.Fatal(err)
	}
	out, _ := m.Value(hvp)
	fmt.Printf("%.4f\n", out.Float64s())
	// Output:
	// [0.3125 0.0625 -0.3750]
}

// One step of gradient descent, as one program: each Run computes the loss
// and then applies the update w ← w − 0.1·∇w.
func ExampleCompile() {
	g := graph.New()
	w0, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2}, 2)
	w := g.Param("w", w0)
	target := g.Input("target", graph.Float64, 2)
	loss := ops.Sum(ops.Square(ops.Sub(w, target)))
	grads, err := compile.Grad(loss, w)
	if err != nil {
		log.Fatal(err)
	}
	step := map[*graph.Node]*graph.Node{w: ops.Sub(w, ops.Scale(grads[0], 0.1))}
	prog, err := compile.Compile([]*graph.Node{loss}, compile.WithUpdates(step))
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	tv, _ := graph.FromFloat64s(graph.Float64, []float64{0, 4}, 2)
	if err := m.Run(vm.Feeds{target: tv}); err != nil {
		log.Fatal(err)
	}
	lv, _ := m.Value(loss)
	wv, _ := m.Get(w)
	fmt.Printf("loss %.4f, w %.4f\n", lv.Float64s()[0], wv.Float64s())
	// Output:
	// loss 5.0000, w [0.8000 2.4000]
}

// The Jacobian of y = x·sum(x): ∂yᵢ/∂xⱼ = δᵢⱼ·sum(x) + xᵢ, here at x = (1, 2).
func ExampleJacobian() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := ops.Mul(x, ops.Sum(x))
	jac, err := compile.Jacobian(y, x)
	if err != nil {
		log.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{jac})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2}, 2)
	if err := m.Run(vm.Feeds{x: xv}); err != nil {
		log.Fatal(err)
	}
	jv, _ := m.Value(jac)
	fmt.Printf("%v %.4f\n", jac.Type(), jv.Float64s())
	// Output:
	// float64(2,2) [4.0000 1.0000 2.0000 5.0000]
}

// What common-subexpression elimination buys: tanh(x) built twice is
// computed once.
func ExampleWithoutPass() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	y := ops.Mul(ops.Tanh(x), ops.Tanh(x))
	with, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		log.Fatal(err)
	}
	// fuse computes the elementwise ops in one instruction; without cse,
	// it computes tanh twice.
	noCSE, err := compile.Compile([]*graph.Node{y}, compile.WithoutPass("cse"))
	if err != nil {
		log.Fatal(err)
	}
	neither, err := compile.Compile([]*graph.Node{y}, compile.WithoutPass("cse"), compile.WithoutPass("fuse"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("every pass:", with.Instructions()[0].Name())
	fmt.Println("without cse:", noCSE.Instructions()[0].Name())
	fmt.Println("without cse and fuse:", len(neither.Instructions()), "instructions")
	// Output:
	// every pass: Fused(Tanh,Mul)
	// without cse: Fused(Tanh,Tanh,Mul)
	// without cse and fuse: 3 instructions
}

// The gradient of f(x) = Σ sin(xᵢ)·wᵢ at three points at once: Vmap
// batches the gradient's graph, built for one point, over the rows of xs;
// the weights w are shared. Each row is cos(x)·w.
func ExampleVmap() {
	g := graph.New()
	xs := g.Input("xs", graph.Float64, 3, 2) // three points of R²
	w := g.Input("w", graph.Float64, 2)
	grads, err := compile.Vmap(func(in []*graph.Node) []*graph.Node {
		x, w := in[0], in[1]
		grad, err := compile.Grad(ops.Sum(ops.Mul(ops.Sin(x), w)), x)
		if err != nil {
			log.Fatal(err)
		}
		return grad
	}, []*graph.Node{xs, w}, []int{0, compile.NotBatched}, nil)
	if err != nil {
		log.Fatal(err)
	}
	prog, err := compile.Compile(grads)
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{0, 0, math.Pi, 0, 0, math.Pi / 2}, 3, 2)
	wv, _ := graph.FromFloat64s(graph.Float64, []float64{2, 3}, 2)
	if err := m.Run(vm.Feeds{xs: xv, w: wv}); err != nil {
		log.Fatal(err)
	}
	v, _ := m.Value(grads[0])
	for b := range 3 {
		fmt.Printf("%.1f\n", v.Float64s()[2*b:2*b+2])
	}
	// Output:
	// [2.0 3.0]
	// [-2.0 3.0]
	// [2.0 0.0]
}

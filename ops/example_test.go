package ops_test

import (
	"fmt"
	"log"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A matrix product: (2,3)·(3,2) → (2,2).
func ExampleMatMul() {
	g := graph.New()
	a := g.Input("a", graph.Float64, 2, 3)
	b := g.Input("b", graph.Float64, 3, 2)
	c := ops.MatMul(a, b)
	prog, err := compile.Compile([]*graph.Node{c})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	av, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	bv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 0, 0, 1, 1, -1}, 3, 2)
	if err := m.Run(vm.Feeds{a: av, b: bv}); err != nil {
		log.Fatal(err)
	}
	cv, _ := m.Value(c)
	fmt.Printf("%v %.4f\n", c.Type(), cv.Float64s())
	// Output:
	// float64(2,2) [4.0000 -1.0000 10.0000 -1.0000]
}

// Elementwise ops broadcast as NumPy does: a (3) row is added to every row
// of a (2,3) matrix, and a scalar to every element.
func ExampleAdd() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	bias := g.Input("bias", graph.Float64, 3)
	y := ops.Add(ops.Add(x, bias), g.Scalar(0.5, graph.Float64))
	prog, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	bv, _ := graph.FromFloat64s(graph.Float64, []float64{10, 20, 30}, 3)
	if err := m.Run(vm.Feeds{x: xv, bias: bv}); err != nil {
		log.Fatal(err)
	}
	yv, _ := m.Value(y)
	fmt.Printf("%v %.4f\n", y.Type(), yv.Float64s())
	// Output:
	// float64(2,3) [11.5000 22.5000 33.5000 14.5000 25.5000 36.5000]
}

// Softmax along the last axis: each row becomes probabilities summing to 1.
// Large logits do not overflow.
func ExampleSoftmax() {
	g := graph.New()
	x := g.Input("x", graph.Float32, 2, 3)
	p := ops.Softmax(x, -1)
	prog, err := compile.Compile([]*graph.Node{p})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	xv, _ := graph.FromFloat64s(graph.Float32, []float64{1, 2, 3, 0, 0, 1000}, 2, 3)
	if err := m.Run(vm.Feeds{x: xv}); err != nil {
		log.Fatal(err)
	}
	pv, _ := m.Value(p)
	fmt.Printf("%.4f\n", graph.Float64s(pv))
	// Output:
	// [0.0900 0.2447 0.6652 0.0000 0.0000 1.0000]
}

// Sum over some axes removes them from the shape; over none, it sums
// everything into a scalar.
func ExampleSum() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	outs := []*graph.Node{ops.Sum(x, 0), ops.Sum(x, -1), ops.Sum(x)}
	prog, err := compile.Compile(outs)
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	if err := m.Run(vm.Feeds{x: xv}); err != nil {
		log.Fatal(err)
	}
	for _, s := range outs {
		v, _ := m.Value(s)
		fmt.Printf("%v %.4f\n", s.Type(), v.Float64s())
	}
	// Output:
	// float64(3) [5.0000 7.0000 9.0000]
	// float64(2) [6.0000 15.0000]
	// float64() [21.0000]
}

// The softmax cross-entropy of two examples over three classes, with the
// labels as class indices, and its mean as a loss.
func ExampleCrossEntropy() {
	g := graph.New()
	logits := g.Input("logits", graph.Float64, 2, 3)
	labels := g.Input("labels", graph.Float64, 2)
	losses := ops.CrossEntropy(logits, labels) // one per example
	loss := ops.Mean(losses)
	prog, err := compile.Compile([]*graph.Node{losses, loss})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	lv, _ := graph.FromFloat64s(graph.Float64, []float64{2, 1, 0, 0, 0, 0}, 2, 3)
	yv, _ := graph.FromFloat64s(graph.Float64, []float64{0, 2}, 2)
	if err := m.Run(vm.Feeds{logits: lv, labels: yv}); err != nil {
		log.Fatal(err)
	}
	v, _ := m.Value(losses)
	mean, _ := m.Value(loss)
	fmt.Printf("losses %.4f, mean %.4f\n", v.Float64s(), mean.Float64s()[0])
	// Output:
	// losses [0.4076 1.0986], mean 0.7531
}

// Max pooling a 4×4 image with 2×2 windows, and the gradient of the
// pooled sum, which goes to each window's maximum.
func ExampleMaxPool2D() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 1, 1, 4, 4)
	y := ops.MaxPool2D(x, ops.PoolOptions{Kernel: []int{2}})
	grads, err := compile.Grad(ops.Sum(y), x)
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
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{
		1, 5, 2, 0,
		3, 4, 8, 1,
		0, 2, 1, 1,
		7, 1, 3, 6,
	}, 1, 1, 4, 4)
	if err := m.Run(vm.Feeds{x: xv}); err != nil {
		log.Fatal(err)
	}
	yv, _ := m.Value(y)
	gv, _ := m.Value(grads[0])
	fmt.Println(y.Type(), yv.Float64s())
	fmt.Println(gv.Float64s())
	// Output:
	// float64(1,1,2,2) [5 8 7 6]
	// [0 1 0 0 0 0 1 0 0 0 0 0 1 0 0 1]
}

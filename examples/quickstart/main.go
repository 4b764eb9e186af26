// Command quickstart builds a small graph, differentiates it and runs it:
// the README's first example.
package main

import (
	"fmt"
	"log"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

func main() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3) // fed at each run
	w0, _ := graph.FromFloat64s(graph.Float64, []float64{0.5, -1, 2}, 3)
	W := g.Param("W", w0)                                // lives in the machine
	loss := ops.Sum(ops.Square(ops.Tanh(ops.Mul(x, W)))) // sum(tanh(x·W)²)
	grads, err := compile.Grad(loss, W)                  // more graph nodes
	check(err)                                           // shape errors name the op and line
	prog, err := compile.Compile([]*graph.Node{loss, grads[0]})
	check(err)
	m, err := vm.New(prog)
	check(err)
	in, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3}, 3)
	check(m.Run(vm.Feeds{x: in}))
	l, _ := m.Value(loss)
	dW, _ := m.Value(grads[0])
	fmt.Printf("loss %.4f\ndloss/dW %.4f\n", l.Float64s()[0], dW.Float64s())
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

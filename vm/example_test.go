package vm_test

import (
	"fmt"
	"log"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A machine keeps its parameters between runs and takes new inputs at
// each: y = w·x with w = (1, 2), for two values of x.
func ExampleMachine_Run() {
	g := graph.New()
	w0, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2}, 2)
	w := g.Param("w", w0)
	x := g.Input("x", graph.Float64, 2)
	y := ops.Mul(w, x)
	prog, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range []float64{1, 10} {
		xv, _ := graph.FromFloat64s(graph.Float64, []float64{v, -v}, 2)
		if err := m.Run(vm.Feeds{x: xv}); err != nil {
			log.Fatal(err)
		}
		yv, _ := m.Value(y) // the machine's buffer: read it before the next Run
		fmt.Printf("x %.4f: y %.4f\n", xv.Float64s(), yv.Float64s())
	}
	// Output:
	// x [1.0000 -1.0000]: y [1.0000 -2.0000]
	// x [10.0000 -10.0000]: y [10.0000 -20.0000]
}

// A training machine and an evaluation machine share a parameter: the
// evaluator sees what each training step does to it.
func ExampleSharingParams() {
	g := graph.New()
	w0, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2}, 2)
	w := g.Param("w", w0)
	halve := map[*graph.Node]*graph.Node{w: ops.Scale(w, 0.5)} // a stand-in for an optimiser step
	train, err := compile.Compile(nil, compile.WithUpdates(halve))
	if err != nil {
		log.Fatal(err)
	}
	eval, err := compile.Compile([]*graph.Node{ops.Sum(w)})
	if err != nil {
		log.Fatal(err)
	}
	trainer, err := vm.New(train)
	if err != nil {
		log.Fatal(err)
	}
	evaluator, err := vm.New(eval, vm.SharingParams(trainer))
	if err != nil {
		log.Fatal(err)
	}
	if err := trainer.Run(nil); err != nil {
		log.Fatal(err)
	}
	wv, _ := evaluator.Get(w)
	fmt.Printf("w seen by the evaluator: %.4f\n", wv.Float64s())
	// Output:
	// w seen by the evaluator: [0.5000 1.0000]
}

// With WithNaNCheck a run stops at the first NaN or infinity, naming the
// node that made it and where it was built.
func ExampleWithNaNCheck() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := ops.Sum(ops.Log(x))
	prog, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog, vm.WithNaNCheck())
	if err != nil {
		log.Fatal(err)
	}
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{1, -1}, 2)
	fmt.Println(m.Run(vm.Feeds{x: xv}))
	// Output:
	// nabla: Log (node Log #1 float64(2)): output element 1 is NaN (built at example_test.go:79)
}

// A machine made with WithProfile times every instruction; Profile says
// what ran, how often and for how long (times vary, so they are not shown
// here; WriteTable prints them).
func ExampleMachine_Profile() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 3)
	w := g.Input("w", graph.Float64, 3, 2)
	y := ops.Sum(ops.Tanh(ops.MatMul(x, w)))
	prog, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog, vm.WithProfile())
	if err != nil {
		log.Fatal(err)
	}
	feeds := vm.Feeds{x: graph.NewDense(graph.Float64, 4, 3), w: graph.NewDense(graph.Float64, 3, 2)}
	for range 3 {
		if err := m.Run(feeds); err != nil {
			log.Fatal(err)
		}
	}
	p := m.Profile()
	fmt.Println(len(p.Entries), "instructions")
	for _, e := range p.Entries {
		fmt.Printf("%-6s %-12v runs %d\n", e.Op, e.Type, e.Runs)
	}
	// Output:
	// 3 instructions
	// MatMul float64(4,2) runs 3
	// Tanh   float64(4,2) runs 3
	// Sum    float64()    runs 3
}

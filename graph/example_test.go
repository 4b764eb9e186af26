package graph_test

import (
	"fmt"
	"log"
	"os"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Build y = tanh(x·W + 1): every node's dtype and shape are known as soon
// as it is built.
func Example() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 3) // a batch of 4 rows, fed at each run
	w0 := graph.NewDense(graph.Float64, 3, 2)
	W := g.Param("W", w0)             // lives in the machine across runs
	one := g.Scalar(1, graph.Float64) // a constant
	y := ops.Tanh(ops.Add(ops.MatMul(x, W), one))
	for _, n := range g.Nodes() {
		fmt.Println(n) // op or kind, name, ID and type
	}
	fmt.Println("output:", y)
	// Output:
	// input "x" #0 float64(4,3)
	// param "W" #1 float64(3,2)
	// const #2 float64()
	// MatMul #3 float64(4,2)
	// Add #4 float64(4,2)
	// Tanh #5 float64(4,2)
	// output: Tanh #5 float64(4,2)
}

// A shape mistake does not panic: the graph records the first error, with
// the line that made it, and every node built on the bad one is poisoned.
func ExampleGraph_Err() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 3)
	W := g.Input("W", graph.Float64, 4, 2) // should be (3, 2)
	h := ops.MatMul(x, W)                  // the error names this line
	y := ops.Sum(ops.Tanh(h))              // short-circuits on the poisoned h
	fmt.Println(y)
	fmt.Println(g.Err())
	// Output:
	// <poisoned node>
	// nabla: MatMul: shapes (4,3) and (4,2) do not align (3 != 4) at example_test.go:45
}

// Scopes group nodes, as nn modules and differentiation do; DOT export
// draws each scope as a cluster.
func ExampleGraph_Scope() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	endEncoder := g.Scope("encoder")
	endLayer := g.Scope("layer1")
	h := ops.Tanh(x)
	endLayer()
	y := ops.Sum(h)
	endEncoder()
	z := ops.Square(y)
	for _, n := range []*graph.Node{x, h, y, z} {
		fmt.Printf("%-6s scope %q\n", n.OpName(), n.Scope().Path())
	}
	// Output:
	// input  scope ""
	// Tanh   scope "encoder/layer1"
	// Sum    scope "encoder"
	// Square scope ""
}

// addOne is a custom op: x + 1 elementwise, in either float dtype.
type addOne struct{}

func (addOne) Name() string { return "AddOne" }

// Type checks the input and says the output has its type.
func (addOne) Type(in []graph.Type) (graph.Type, error) {
	if _, err := graph.CheckInputs(in, 1); err != nil {
		return graph.Type{}, err
	}
	return in[0], nil
}

// Forward writes x + 1 into out, which the machine allocated.
func (addOne) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	for i := range out.Len() {
		graph.SetFloat(out, i, graph.Float(in[0], i)+1)
	}
	return nil
}

// Enter a custom op into a graph with Apply, and run it.
func ExampleApply() {
	g := graph.New()
	x := g.Input("x", graph.Float32, 3)
	y := graph.Apply(addOne{}, x)
	fmt.Println(y)
	prog, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	in, _ := graph.FromFloat64s(graph.Float32, []float64{1, 2.5, -4}, 3)
	if err := m.Run(vm.Feeds{x: in}); err != nil {
		log.Fatal(err)
	}
	out, _ := m.Value(y)
	fmt.Printf("%.4f\n", graph.Float64s(out))
	// Output:
	// AddOne #1 float32(3)
	// [2.0000 3.5000 -3.0000]
}

// Draw a small graph as Graphviz DOT; `dot -Tsvg` renders it.
func ExampleWriteDot() {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	y := ops.Sum(ops.Square(x)).SetName("y")
	if err := graph.WriteDot(os.Stdout, g, graph.DotOptions{Outputs: []*graph.Node{y}}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// digraph nabla {
	// 	n0 [label="x\ninput\nfloat64(3)", shape=invhouse, style=filled, fillcolor="#cfe2ff"];
	// 	n1 [label="Square\nfloat64(3)", shape=ellipse];
	// 	n2 [label="y\nSum\nfloat64()", shape=doubleoctagon, style=filled, fillcolor="#f8d7da"];
	// 	n0 -> n1;
	// 	n1 -> n2;
	// }
}

package ops_test

import (
	"fmt"
	"log"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Integer labels pick each example's loss, and a cast turns integers into
// values arithmetic takes; mixing dtypes without one is a build error.
func ExampleCast() {
	g := graph.New()
	logits := g.Input("logits", graph.Float32, 2, 3)
	labels := g.Input("labels", graph.Int64, 2)
	loss := ops.CrossEntropy(logits, labels)
	scaled := ops.Mul(loss, ops.Cast(labels, graph.Float32)) // loss_i · label_i

	bad := graph.New()
	ops.Add(bad.Input("x", graph.Float32, 2), bad.Input("k", graph.Int64, 2))
	fmt.Println(bad.Err() != nil)

	prog, err := compile.Compile([]*graph.Node{loss, scaled})
	if err != nil {
		log.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		log.Fatal(err)
	}
	lv, _ := graph.FromFloat64s(graph.Float32, []float64{0, 0, 0, 0, 1, 0}, 2, 3)
	iv, _ := graph.FromInt64s(graph.Int64, []int64{2, 1}, 2)
	if err := m.Run(vm.Feeds{logits: lv, labels: iv}); err != nil {
		log.Fatal(err)
	}
	l, _ := m.Value(loss)
	s, _ := m.Value(scaled)
	fmt.Printf("%.4f %.4f\n", l.Float32s(), s.Float32s())
	// Output:
	// true
	// [1.0986 0.5514] [2.1972 0.5514]
}

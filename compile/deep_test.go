package compile_test

import (
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A deep chain builds, differentiates, compiles, runs and exports to DOT
// without recursion deep enough to overflow a stack. NABLA_DEEP_CHAIN sets
// the length (10⁶ for a million-node chain; the default keeps the test
// quick).
func TestDeepChain(t *testing.T) {
	n := 20000
	if s := os.Getenv("NABLA_DEEP_CHAIN"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	lap := func(what string) {
		t.Logf("%s: %v", what, time.Since(start))
		start = time.Now()
	}
	g := graph.New()
	x := g.Param("x", graph.NewDense(graph.Float64, 4))
	y := x
	for range n {
		y = ops.Sin(y)
	}
	loss := ops.Sum(y)
	lap("build")
	grads, err := compile.Grad(loss, x)
	if err != nil {
		t.Fatal(err)
	}
	lap("Grad")
	p, err := compile.Compile([]*graph.Node{loss, grads[0]})
	if err != nil {
		t.Fatal(err)
	}
	lap("Compile")
	m, err := vm.New(p, vm.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(nil); err != nil {
		t.Fatal(err)
	}
	lap("vm.New and Run")
	if err := graph.WriteDot(io.Discard, g, graph.DotOptions{}); err != nil {
		t.Fatal(err)
	}
	lap("graph.WriteDot")
	if n > 20000 {
		return // compile.WriteDot's time grows faster than the program
	}
	if err := compile.WriteDot(io.Discard, p); err != nil {
		t.Fatal(err)
	}
	lap("compile.WriteDot")
}

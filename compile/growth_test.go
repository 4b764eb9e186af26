package compile_test

import (
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Rebuilding and differentiating the loss at every step, on one graph,
// is reported once; compiling a graph built once, as often as one likes,
// is not.
func TestGrowthWarning(t *testing.T) {
	var warnings []string
	saved := compile.Warn
	compile.Warn = func(msg string) { warnings = append(warnings, msg) }
	defer func() { compile.Warn = saved }()

	g := graph.New()
	x := g.Input("x", graph.Float64, 8)
	w := g.Param("w", graph.NewDense(graph.Float64, 8))
	step := func() *graph.Node { // what a PyTorch-style loop builds each step
		loss := ops.Sum(ops.Square(ops.Tanh(ops.Mul(x, w))))
		grads, err := compile.Grad(loss, w)
		if err != nil {
			t.Fatal(err)
		}
		return ops.Sub(w, ops.Scale(grads[0], 0.1))
	}
	once := step()
	for range 20 {
		if _, err := compile.Compile([]*graph.Node{once}); err != nil {
			t.Fatal(err)
		}
	}
	if len(warnings) != 0 {
		t.Fatalf("define-once loop: got warnings %q", warnings)
	}
	for range 200 {
		if _, err := compile.Compile([]*graph.Node{step()}); err != nil {
			t.Fatal(err)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "docs/define-once.md") {
		t.Fatalf("rebuild loop: got warnings %q, want one pointing to docs/define-once.md", warnings)
	}
}

package compile_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// TestSweepFindsAreErrors holds what TestCompileSweep found, each with the
// exact error: nil options and patterns panicked; Backward built on output
// gradients that do not fit, failing in an op's name; a nil node was
// "nabla: nil node", naming neither the function nor the line; a Jacobian
// above rank 8 was Reshape's error.
func TestSweepFindsAreErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(g *graph.Graph) error
		want  string
	}{
		{"grad with a nil option", func(g *graph.Graph) error {
			x := g.Input("x", graph.Float64, 3)
			_, err := compile.GradWith(ops.Sum(x), []*graph.Node{x}, nil)
			return err
		}, ""},
		{"backward of a gradient of another shape", func(g *graph.Graph) error {
			x := g.Input("x", graph.Float64, 3, 3)
			_, err := compile.Backward(ops.Tanh(x), []*graph.Node{ops.Sum(x)}, []bool{true})
			return err
		}, "nabla: Backward: output gradient 0 has type float64(), want output 0's float64(3,3)"},
		{"backward without output gradients", func(g *graph.Graph) error {
			x := g.Input("x", graph.Float64, 3)
			_, err := compile.Backward(ops.Tanh(x), nil, []bool{true})
			return err
		}, "nabla: Backward: 0 output gradients for the 1 outputs of Tanh #1 float64(3)"},
		{"backward of a leaf", func(g *graph.Graph) error {
			x := g.Input("x", graph.Float64, 3)
			_, err := compile.Backward(x, []*graph.Node{x}, nil)
			return err
		}, `nabla: Backward: input "x" #0 float64(3) is not an op's node: it has no gradient rule`},
		{"pattern of a nil node", func(g *graph.Graph) error {
			_, err := compile.JacobianPattern(nil, g.Input("x", graph.Float64, 3))
			return err
		}, "nabla: JacobianPattern: nil node"},
		{"hvp along nil", func(g *graph.Graph) error {
			x := g.Input("x", graph.Float64, 3)
			_, err := compile.HVP(ops.Sum(ops.Square(x)), x, nil)
			return err
		}, "nabla: HVP: v is nil"},
		{"per-example gradients of a nil parameter", func(g *graph.Graph) error {
			_, err := compile.PerExampleGradients(func(ex []*graph.Node) *graph.Node { return ops.Sum(ex[0]) },
				[]*graph.Node{g.Input("x", graph.Float64, 4, 3)}, []*graph.Node{nil})
			return err
		}, "nabla: PerExampleGradients: params 0 is nil"},
		{"jacobian of rank 10", func(g *graph.Graph) error {
			y := g.Input("y", graph.Float64, 1, 1, 1, 1, 1, 1, 2, 2)
			_, err := compile.Jacobian(y, g.Input("x", graph.Float64, 3, 3))
			return err
		}, `nabla: Jacobian: the Jacobian of input "y" #0 float64(1,1,1,1,1,1,2,2) with respect to input "x" #1 float64(3,3) has rank 10, above the supported 8`},
		{"hessian of rank 10", func(g *graph.Graph) error {
			x := g.Input("x", graph.Float64, 1, 1, 1, 2, 2)
			_, err := compile.Hessian(ops.Sum(x), x)
			return err
		}, `nabla: Hessian: the Hessian of Sum #1 float64() with respect to input "x" #0 float64(1,1,1,2,2) has rank 10, above the supported 8`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.build(graph.New())
			switch {
			case c.want == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case c.want == "":
			case err == nil:
				t.Errorf("no error, want %q", c.want)
			case !strings.HasPrefix(err.Error(), c.want) || !strings.Contains(err.Error(), " at sweepfinds_test.go:"):
				t.Errorf("got  %q\nwant %q ... at sweepfinds_test.go:…", err, c.want)
			}
		})
	}
	// A malformed pattern has no colours (it indexed past its slices).
	for _, p := range []*compile.Pattern{nil, {Rows: 2, Columns: 2, RowStart: []int{0, 5}}, {Rows: 1, Columns: 1, RowStart: []int{0, 1}, Cols: []int{3}}} {
		if colors, n := compile.ColorColumns(p); colors != nil || n != 0 {
			t.Errorf("ColorColumns(%+v) = %v, %d, want nil, 0", p, colors, n)
		}
	}
	p := &compile.Pattern{Rows: 2, Columns: 2, RowStart: []int{0, 1, 2}, Cols: []int{0, 1}} // diagonal: one colour
	if colors, n := compile.ColorColumns(p); n != 1 || len(colors) != 2 || colors[0] != 0 || colors[1] != 0 {
		t.Errorf("ColorColumns of the diagonal = %v, %d, want [0 0], 1", colors, n)
	}
}

// Backward with no output gradient (each nil) gives no gradient and builds
// nothing, as differentiation does for an op no gradient reaches (Sum's
// Backward built a Reshape of the nil gradient, and its error named
// Reshape); for a multi-output op too.
func TestBackwardOfNoOutputGradient(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return []*graph.Node{ops.Sin(c[0]), c[1]}, nil
	},
		[]*graph.Node{x, ops.Sum(x)}, nil, ops.Steps(2))
	for _, n := range []*graph.Node{ops.Sum(x), final[0]} {
		before := g.Len()
		grads, err := compile.Backward(n, make([]*graph.Node, len(n.Outputs())), trues(len(n.Inputs())))
		if err != nil || len(grads) != len(n.Inputs()) || slices.ContainsFunc(grads, func(gr *graph.Node) bool { return gr != nil }) {
			t.Fatalf("%v: got %v, %v; want %d nil gradients", n, grads, err, len(n.Inputs()))
		}
		if g.Len() != before || g.Err() != nil {
			t.Fatalf("%v: built %d nodes, the graph's error is %v", n, g.Len()-before, g.Err())
		}
	}
}

func trues(n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = true
	}
	return b
}

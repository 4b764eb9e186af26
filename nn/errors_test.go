package nn_test

import (
	"fmt"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/site"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
)

// lineAt is the file:line delta lines below the line calling it.
var lineAt = site.At

// requireError fails t unless n carries exactly want, and its graph too.
func requireError(t *testing.T, n *graph.Node, g *graph.Graph, want string) {
	t.Helper()
	if n == nil || n.Err() == nil || n.Err().Error() != want {
		t.Fatalf("got %v (%v), want the error %q", n, n.Err(), want)
	}
	if err := g.Err(); err == nil || err.Error() != want {
		t.Fatalf("the graph's error is %v, want %q", err, want)
	}
}

// Every loss's mean over an empty batch is its own error, naming the loss
// and the line calling it (not Mean's); ReduceSum takes the empty batch.
func TestLossEmptyBatchNamesTheLoss(t *testing.T) {
	empty := func(g *graph.Graph, name string) *graph.Node { return g.Input(name, graph.Float64, 3, 0) }
	for _, c := range []struct {
		name  string
		build func(g *graph.Graph, opts ...nn.LossOption) (*graph.Node, string)
	}{
		{"BCELoss", func(g *graph.Graph, o ...nn.LossOption) (*graph.Node, string) {
			return nn.BCELoss(empty(g, "x"), empty(g, "y"), o...), lineAt(0)
		}},
		{"BCEWithLogitsLoss", func(g *graph.Graph, o ...nn.LossOption) (*graph.Node, string) {
			return nn.BCEWithLogitsLoss(empty(g, "x"), empty(g, "y"), o...), lineAt(0)
		}},
		{"GaussianNLLLoss", func(g *graph.Graph, o ...nn.LossOption) (*graph.Node, string) {
			return nn.GaussianNLLLoss(empty(g, "x"), empty(g, "y"), empty(g, "v"), o...), lineAt(0)
		}},
		{"HuberLoss", func(g *graph.Graph, o ...nn.LossOption) (*graph.Node, string) {
			return nn.HuberLoss(empty(g, "x"), empty(g, "y"), o...), lineAt(0)
		}},
		{"KLDivLoss", func(g *graph.Graph, o ...nn.LossOption) (*graph.Node, string) {
			return nn.KLDivLoss(empty(g, "x"), empty(g, "y"), o...), lineAt(0)
		}},
		{"MarginRankingLoss", func(g *graph.Graph, o ...nn.LossOption) (*graph.Node, string) {
			return nn.MarginRankingLoss(empty(g, "x1"), empty(g, "x2"), empty(g, "y"), o...), lineAt(0)
		}},
		{"PoissonNLLLoss", func(g *graph.Graph, o ...nn.LossOption) (*graph.Node, string) {
			return nn.PoissonNLLLoss(empty(g, "x"), empty(g, "y"), o...), lineAt(0)
		}},
		{"SmoothL1Loss", func(g *graph.Graph, o ...nn.LossOption) (*graph.Node, string) {
			return nn.SmoothL1Loss(empty(g, "x"), empty(g, "y"), o...), lineAt(0)
		}},
		{"HingeEmbeddingLoss", func(g *graph.Graph, o ...nn.LossOption) (*graph.Node, string) {
			return nn.HingeEmbeddingLoss(empty(g, "x"), empty(g, "y"), o...), lineAt(0)
		}},
		{"SoftMarginLoss", func(g *graph.Graph, o ...nn.LossOption) (*graph.Node, string) {
			return nn.SoftMarginLoss(empty(g, "x"), empty(g, "y"), o...), lineAt(0)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			loss, line := c.build(g)
			requireError(t, loss, g, "nabla: nn."+c.name+": the mean of no losses is undefined (an empty batch: losses float64(3,0)): "+
				"WithReduction(ReduceSum) or ReduceNone takes it at "+line)
			g = graph.New()
			if sum, _ := c.build(g, nn.WithReduction(nn.ReduceSum)); sum.Err() != nil {
				t.Fatalf("ReduceSum of an empty batch: %v", sum.Err())
			}
		})
	}
	// BCEWithLogits is BCEWithLogitsLoss by its defaults, and says so.
	g := graph.New()
	loss, line := nn.BCEWithLogits(empty(g, "x"), empty(g, "y")), lineAt(0)
	requireError(t, loss, g, "nabla: nn.BCEWithLogitsLoss: the mean of no losses is undefined (an empty batch: losses float64(3,0)): "+
		"WithReduction(ReduceSum) or ReduceNone takes it at "+line)
}

// The functions composing ops report what the ops refuse in their own
// name, the op's and the caller's line.
func TestComposedErrorsNameTheFunction(t *testing.T) {
	g := graph.New()
	step := g.Input("step", graph.Float64, 2, 3)
	mask, line := nn.DropoutMask(step, 0.5, 1, graph.Float32, 4), lineAt(0)
	requireError(t, mask, g, "nabla: nn.DropoutMask: RandomUniform: step must be a scalar, got float64(2,3) at "+line)

	g = graph.New()
	mse, line := nn.MSE(g.Input("p", graph.Int64, 3), g.Input("y", graph.Float64, 3)), lineAt(0)
	requireError(t, mse, g, "nabla: nn.MSE: Sub: dtypes differ: int64(3) and float64(3): convert one with ops.Cast at "+line)

	g = graph.New()
	mse, line = nn.MSE(g.Input("p", graph.Float64, 0), g.Input("y", graph.Float64, 0)), lineAt(0)
	requireError(t, mse, g, "nabla: nn.MSE: Mean: mean over axes [0] of zero elements is undefined (inputs float64(0)) at "+line)

	g = graph.New()
	q := g.Input("q", graph.Float64, 1, 2, 4)
	att, line := nn.ScaledDotProductAttention(q, q, nil, nil, false), lineAt(0)
	requireError(t, att, g, "nabla: nn.ScaledDotProductAttention: v is nil at "+line)

	g = graph.New()
	q = g.Input("q", graph.Float64, 1, 2, 4)
	k := g.Input("k", graph.Float32, 1, 2, 4)
	att, line = nn.ScaledDotProductAttention(q, k, q, nil, true), lineAt(0)
	requireError(t, att, g, "nabla: nn.ScaledDotProductAttention: MatMul: dtypes differ: float64(1,2,4) and float32(1,2,4): "+
		"convert one with ops.Cast at "+line)
}

// A composed function given nodes of a body and of the graph enclosing it
// builds, as the ops do: the graphs are nested, not unrelated.
func TestComposedFunctionsInBodies(t *testing.T) {
	g := graph.New()
	y := g.Input("y", graph.Float64, 3)
	_, ys := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return c, []*graph.Node{nn.MSE(c[0], y), nn.MSE(y, c[0])}
	}, []*graph.Node{g.Input("x", graph.Float64, 3)}, nil, ops.Steps(2))
	if err := g.Err(); err != nil || ys[0].Err() != nil {
		t.Fatalf("MSE of a body's node and an enclosing graph's: %v", err)
	}
}

// A classification loss of scores with no classes (C = 0) is its own
// error: no label can name a class (it was OneHot's, which named neither
// the loss nor the shapes given).
func TestClassLossesRefuseNoClasses(t *testing.T) {
	for _, c := range []struct {
		name, what string
		loss       func(x, y *graph.Node) (*graph.Node, string)
	}{
		{"NLLLoss", "log-probabilities", func(x, y *graph.Node) (*graph.Node, string) { return nn.NLLLoss(x, y), lineAt(0) }},
		{"MultiMarginLoss", "scores", func(x, y *graph.Node) (*graph.Node, string) { return nn.MultiMarginLoss(x, y), lineAt(0) }},
	} {
		for _, shapes := range [][2][]int{{{0}, {}}, {{2, 0}, {2}}, {{0, 0}, {0}}} {
			g := graph.New()
			loss, line := c.loss(g.Input("x", graph.Float64, shapes[0]...), g.Input("y", graph.Int64, shapes[1]...))
			requireError(t, loss, g, fmt.Sprintf("nabla: nn.%s: the %s have shape %s: no classes, so no label can name one (want C ≥ 1) at %s",
				c.name, c.what, graph.ShapeString(shapes[0]), line))
		}
	}
}

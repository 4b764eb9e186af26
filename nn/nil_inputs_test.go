package nn_test

import (
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
)

// Every module's Forward (and a cell's Step, and attention's Attend) given
// a nil node reports it naming the module and the line calling it, where
// it said only "nabla: nil node".
func TestNilInputsNameTheModule(t *testing.T) {
	conv := ops.ConvOptions{}
	for _, c := range []struct {
		name  string // what the error must name
		build func(g *graph.Graph) (*graph.Node, string)
	}{
		{"nn.Tanh", func(*graph.Graph) (*graph.Node, string) { return nn.Tanh{}.Forward(nil), lineAt(0) }},
		{"nn.ReLU", func(*graph.Graph) (*graph.Node, string) { return nn.ReLU{}.Forward(nil), lineAt(0) }},
		{"nn.Sigmoid", func(*graph.Graph) (*graph.Node, string) { return nn.Sigmoid{}.Forward(nil), lineAt(0) }},
		{"nn.SiLU", func(*graph.Graph) (*graph.Node, string) { return nn.SiLU{}.Forward(nil), lineAt(0) }},
		{"nn.GELU", func(*graph.Graph) (*graph.Node, string) { return nn.GELU{}.Forward(nil), lineAt(0) }},
		{"nn.Flatten", func(*graph.Graph) (*graph.Node, string) { return nn.Flatten{}.Forward(nil), lineAt(0) }},
		{"nn.MaxPool2d", func(*graph.Graph) (*graph.Node, string) { return nn.MaxPool2d{}.Forward(nil), lineAt(0) }},
		{"nn.AvgPool2d", func(*graph.Graph) (*graph.Node, string) { return nn.AvgPool2d{}.Forward(nil), lineAt(0) }},
		{"nn.Linear", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewLinear(g, "fc", 3, 2, true).Forward(nil), lineAt(0)
		}},
		{"nn.Conv2d", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewConv2d(g, "c", 3, 2, []int{3, 3}, true, conv).Forward(nil), lineAt(0)
		}},
		{"nn.ConvTranspose2d", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewConvTranspose2d(g, "c", 3, 2, []int{3, 3}, true, conv).Forward(nil), lineAt(0)
		}},
		{"nn.Embedding", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewEmbedding(g, "e", 3, 2).Forward(nil), lineAt(0)
		}},
		{"nn.LayerNorm", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewLayerNorm(g, "ln", 3, 1e-5).Forward(nil), lineAt(0)
		}},
		{"nn.BatchNorm", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewBatchNorm1d(g, "bn", 3, 1e-5, 0.1).Forward(nil), lineAt(0)
		}},
		{"nn.Dropout", func(g *graph.Graph) (*graph.Node, string) { return nn.NewDropout(g, "d", 0.5).Forward(nil), lineAt(0) }},
		{"nn.MultiheadAttention", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewMultiheadAttention(g, "a", 4, 2, true).Forward(nil), lineAt(0)
		}},
		{"nn.MultiheadAttention", func(g *graph.Graph) (*graph.Node, string) {
			q := g.Input("q", graph.Float64, 1, 2, 4)
			return nn.NewMultiheadAttention(g, "a", 4, 2, true).Attend(q, nil, q, nil, false), lineAt(0)
		}},
		{"nn.TransformerBlock", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewTransformerBlock(g, "t", 4, 2, 8, 0, true).Forward(nil), lineAt(0)
		}},
		{"nn.Sequential", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewSequential("s", nn.NewLinear(g, "fc", 3, 2, true)).Forward(nil), lineAt(0)
		}},
		{"nn.RNN", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewRNN(g, "r", 3, 2, nn.RecurrentConfig{}).Forward(nil), lineAt(0)
		}},
		{"nn.LSTM", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewLSTM(g, "l", 3, 2, nn.RecurrentConfig{}).Forward(nil), lineAt(0)
		}},
		{"nn.GRU", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewGRU(g, "r", 3, 2, nn.RecurrentConfig{}).Forward(nil), lineAt(0)
		}},
		{"nn.RNNCell", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewRNNCell(g, "c", 3, 2, true, "tanh").Forward(nil), lineAt(0)
		}},
		{"nn.LSTMCell", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewLSTMCell(g, "c", 3, 2, true).Forward(nil), lineAt(0)
		}},
		{"nn.GRUCell", func(g *graph.Graph) (*graph.Node, string) {
			return nn.NewGRUCell(g, "c", 3, 2, true).Forward(nil), lineAt(0)
		}},
		{"nn.ScaledDotProductAttention", func(g *graph.Graph) (*graph.Node, string) {
			q := g.Input("q", graph.Float64, 1, 2, 4)
			return nn.ScaledDotProductAttention(nil, q, q, nil, false), lineAt(0)
		}},
		{"nn.MSE", func(g *graph.Graph) (*graph.Node, string) {
			return nn.MSE(g.Input("p", graph.Float64, 3), nil), lineAt(0)
		}},
		{"nn.HuberLoss", func(g *graph.Graph) (*graph.Node, string) {
			return nn.HuberLoss(nil, g.Input("y", graph.Float64, 3)), lineAt(0)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, line := c.build(graph.New())
			err := out.Err()
			if err == nil || !strings.HasPrefix(err.Error(), "nabla: "+c.name) || !strings.HasSuffix(err.Error(), " at "+line) ||
				!strings.Contains(err.Error(), " nil") || strings.Contains(err.Error(), "invalid") {
				t.Fatalf("got %v, want nabla: %s…nil… at %s", err, c.name, line)
			}
		})
	}
}

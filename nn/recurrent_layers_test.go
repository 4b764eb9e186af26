package nn_test

import (
	"math"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
)

// Layers that cannot fit are refused before any is built: MaxInt layers
// looped, failing one parameter after another (TestNNSweep hung on it).
func TestRecurrentLayersThatCannotFit(t *testing.T) {
	for _, layers := range []int{math.MaxInt, 1 << 40} {
		g := graph.New()
		nn.NewLSTM(g, "lstm", 3, 4, nn.RecurrentConfig{Layers: layers, Bidirectional: true})
		err := g.Err()
		want := "nabla: nn.NewLSTM: \"lstm\": "
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "layers of hidden size 4: ") ||
			!strings.Contains(err.Error(), "at recurrent_layers_test.go:") {
			t.Errorf("layers %d: got %v, want %q… layers of hidden size 4: … at recurrent_layers_test.go:…", layers, err, want)
		}
		if err != nil {
			t.Log(err)
		}
	}
}

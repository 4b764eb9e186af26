package nn

import (
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Constructors check a parameter's bytes against graph.MemoryLimit before
// allocating it: an 8 TiB layer is a build error, not a dead process.
func TestConstructorsRespectTheMemoryLimit(t *testing.T) {
	for name, build := range map[string]func(g *graph.Graph){
		"Linear":    func(g *graph.Graph) { NewLinear(g, "fc", 1<<20, 1<<20, true) },
		"Embedding": func(g *graph.Graph) { NewEmbedding(g, "emb", 1<<30, 1<<10) },
		"Conv2d": func(g *graph.Graph) {
			NewConv2d(g, "conv", 1<<14, 1<<14, []int{1 << 7, 1 << 7}, false, ops.ConvOptions{})
		},
		"overflow": func(g *graph.Graph) { NewLinear(g, "fc", 1<<40, 1<<40, false) },
	} {
		g := graph.New()
		build(g)
		err := g.Err()
		if err == nil || !(strings.Contains(err.Error(), "over the memory limit") || strings.Contains(err.Error(), "more elements than an int")) {
			t.Errorf("case %s: got %v, want a memory-limit error", name, err)
		}
	}
}

// A panicking initialiser is an error naming the module and parameter.
func TestPanickingInitIsAnError(t *testing.T) {
	g := graph.New()
	bad := func(*rand.Rand, *tensor.Dense, int, int) error { panic("bad init") }
	NewLinear(g, "fc", 2, 3, true, WithInit(bad))
	err := g.Err()
	if err == nil || !strings.Contains(err.Error(), `nn.NewLinear: "fc": weight: initialiser panicked: bad init`) {
		t.Errorf("got %v, want the Linear's weight initialiser named", err)
	}
}

package nn

import (
	"bytes"
	"math/rand/v2"
	"runtime"
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

// A checkpoint whose header claims more data than the file holds is an
// error after reading what is there, not an allocation of what is claimed;
// one that claims more than the memory limit is refused from the header.
func TestLoadRefusesTensorsLargerThanTheFile(t *testing.T) {
	for _, c := range []struct {
		header, want string
	}{
		{`{"a":{"dtype":"F64","shape":[1073741824],"data_offsets":[0,8589934592]}}`, "data truncated"},
		{`{"a":{"dtype":"F64","shape":[1099511627776],"data_offsets":[0,8796093022208]}}`, "over the memory limit"},
	} {
		file := rawFile(c.header, make([]byte, 64))
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		_, _, err := ReadSafetensors(bytes.NewReader(file))
		runtime.ReadMemStats(&ms)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %s: got %v, want an error containing %q", c.header, err, c.want)
		}
		if used := ms.TotalAlloc - before; used > 1<<20 {
			t.Errorf("case %s: a %d-byte file made the reader allocate %d bytes", c.header, len(file), used)
		}
	}
}

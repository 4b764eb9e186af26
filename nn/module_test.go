package nn

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// block exercises every place a parameter or child module may sit.
type block struct {
	Norm     *LayerNorm
	layers   []Module // unexported: must still be found
	Heads    map[string]*Linear
	ByIndex  map[int]*Linear
	Pair     [2]*Linear
	Scale    *graph.Node
	Count    *graph.Node `nn:",buffer"`
	Hidden   *graph.Node `nn:"-"`
	LNWeight *graph.Node
	Renamed  *graph.Node `nn:"gamma"`
	nested   struct{ Inner *Linear }
	any      any
	parent   *block       // a cycle back up the tree
	g        *graph.Graph // not a module: not followed
	cache    []float64
	x        *graph.Node // an op node, not a parameter
}

func (b *block) Forward(x *graph.Node) *graph.Node { return x }

func names(named []Named) []string {
	out := make([]string, len(named))
	for i, n := range named {
		out[i] = n.Name
	}
	return out
}

func scalarParam(g *graph.Graph, name string) *graph.Node {
	return g.Param(name, graph.NewDense(graph.Float64))
}

func TestParameterDiscovery(t *testing.T) {
	g := graph.New()
	lin := func(name string) *Linear { return NewLinear(g, name, 2, 3, true) }
	tied := lin("tied")
	b := &block{
		Norm:     NewLayerNorm(g, "norm", 3, 1e-5),
		layers:   []Module{lin("l0"), ReLU{}, NewSequential("seq", lin("l2"), nil), NewDropout(g, "drop", 0.5)},
		Heads:    map[string]*Linear{"zeta": lin("z"), "alpha": lin("a"), "mid": tied},
		ByIndex:  map[int]*Linear{10: lin("ten"), 2: lin("two")},
		Pair:     [2]*Linear{tied, NewLinear(g, "nobias", 2, 3, false)},
		Scale:    scalarParam(g, "scale"),
		Count:    scalarParam(g, "count"),
		Hidden:   scalarParam(g, "hidden"),
		LNWeight: scalarParam(g, "lnw"),
		Renamed:  scalarParam(g, "renamed"),
		any:      lin("any"),
		g:        g,
		cache:    make([]float64, 1000),
	}
	b.nested.Inner = lin("inner")
	b.parent = b
	b.x = graph.Apply(nil) // a poisoned node is skipped too

	want := []string{
		"scale", "ln_weight", "gamma", // the module's own come first, as in PyTorch
		"norm.weight", "norm.bias",
		"layers.0.weight", "layers.0.bias",
		"layers.2.l2.weight", "layers.2.l2.bias", // a Sequential names its layers by theirs
		"heads.alpha.weight", "heads.alpha.bias",
		"heads.mid.weight", "heads.mid.bias", // tied: found here first
		"heads.zeta.weight", "heads.zeta.bias",
		"by_index.2.weight", "by_index.2.bias", // numeric keys sort numerically
		"by_index.10.weight", "by_index.10.bias",
		"pair.1.weight",
		"nested.inner.weight", "nested.inner.bias",
		"any.weight", "any.bias",
	}
	require.Equal(t, want, names(NamedParameters(b)))
	require.Equal(t, []string{"count", "layers.3.step"}, names(NamedBuffers(b)))
	require.Equal(t, append(want, "count", "layers.3.step"), names(StateOf(b)))
	require.Len(t, Parameters(b), len(want))
	require.Equal(t, b.Scale, Parameters(b)[0])
	require.Equal(t, b.Count, Buffers(b)[0])

	var modules []string
	for _, m := range Modules(b) {
		modules = append(modules, m.Name)
	}
	require.Equal(t, []string{"", "norm", "layers.0", "layers.1", "layers.2", "layers.2.l2", "layers.3",
		"heads.alpha", "heads.mid", "heads.zeta", "by_index.2", "by_index.10", "pair.1",
		"nested.inner", "any"}, modules)
}

// A module held by value in a slice (a plain list, PyTorch's ModuleList
// pitfall) still has its parameters found.
type valueModule struct{ W *graph.Node }

func (v valueModule) Forward(x *graph.Node) *graph.Node { return x }

type list struct{ items []valueModule }

func (l list) Forward(x *graph.Node) *graph.Node { return x }

func TestDiscoveryThroughValues(t *testing.T) {
	g := graph.New()
	l := list{items: []valueModule{{scalarParam(g, "a")}, {scalarParam(g, "b")}}}
	require.Equal(t, []string{"items.0.w", "items.1.w"}, names(NamedParameters(l)))
	require.Empty(t, NamedParameters(nil))
	require.Empty(t, NamedParameters(ReLU{}))
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"Weight": "weight", "RunningMean": "running_mean", "LNWeight": "ln_weight",
		"W1": "w1", "layers": "layers", "HTTPServer2": "http_server2", "ByIndex": "by_index",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("case %q: got %q, want %q", in, got, want)
		}
	}
}

func TestFormat(t *testing.T) {
	g := graph.New()
	model := NewSequential("mlp",
		NewLinear(g, "fc1", 64, 32, true),
		Tanh{},
		NewDropout(g, "drop", 0.25),
		NewSequential("head", NewLinear(g, "fc2", 32, 10, false), Sigmoid{}),
		NewLayerNorm(g, "ln", 10, 1e-5),
		NewEmbedding(g, "emb", 7, 3),
	)
	require.NoError(t, g.Err())
	want := `Sequential(
  (fc1): Linear(in_features=64, out_features=32, bias=true)
  (1): Tanh()
  (drop): Dropout(p=0.25)
  (head): Sequential(
    (fc2): Linear(in_features=32, out_features=10, bias=false)
    (1): Sigmoid()
  )
  (ln): LayerNorm((10,), eps=1e-05, elementwise_affine=true)
  (emb): Embedding(7, 3)
)`
	require.Equal(t, want, model.String())
	require.Equal(t, "Linear(in_features=64, out_features=32, bias=true)", model.Layers[0].(*Linear).String())
	require.Equal(t, "<nil>", Format(nil))
	require.Equal(t, "Linear()", Format((*Linear)(nil)), "a nil module prints without panicking")
}

func TestModulesBuildInScopes(t *testing.T) {
	g := graph.New()
	model := NewSequential("mlp", NewLinear(g, "fc1", 2, 3, true), ReLU{})
	x := g.Input("x", graph.Float64, 4, 2)
	y := model.Forward(x)
	require.NoError(t, g.Err())
	require.Equal(t, "mlp/ReLU", y.Scope().Path())
	require.Equal(t, "mlp/fc1", y.Inputs()[0].Scope().Path())
	require.Equal(t, "LinearFunction", y.Inputs()[0].OpName())
	require.Equal(t, "fc1.weight", model.Layers[0].(*Linear).Weight.Name())
}

func TestConstructionErrors(t *testing.T) {
	for name, build := range map[string]func(g *graph.Graph){
		"linear size":    func(g *graph.Graph) { NewLinear(g, "l", 0, 3, true) },
		"linear init":    func(g *graph.Graph) { NewLinear(g, "l", 2, 3, true, WithInit(Uniform(1, 0))) },
		"linear dtype":   func(g *graph.Graph) { NewLinear(g, "l", 2, 3, true, WithDType(tensor.Int)) },
		"nil init":       func(g *graph.Graph) { NewLinear(g, "l", 2, 3, true, WithBiasInit(nil)) },
		"dropout p":      func(g *graph.Graph) { NewDropout(g, "d", 1.5) },
		"layernorm":      func(g *graph.Graph) { NewLayerNorm(g, "n", 0, 1e-5) },
		"embedding":      func(g *graph.Graph) { NewEmbedding(g, "e", 3, -1) },
		"layernorm size": func(g *graph.Graph) { NewLayerNorm(g, "n", 3, 1e-5).Forward(g.Input("x", graph.Float64, 2, 4)) },
		"nil layer":      func(g *graph.Graph) { NewSequential("s", nil).Forward(g.Input("x", graph.Float64, 2)) },
		"linear forward": func(g *graph.Graph) { NewLinear(g, "l", 2, 3, true).Forward(g.Input("x", graph.Float64, 4, 5)) },
	} {
		g := graph.New()
		build(g)
		require.Error(t, g.Err(), "case %s", name)
		require.Contains(t, g.Err().Error(), "module_test.go", "case %s: the error names the user's line", name)
	}
}

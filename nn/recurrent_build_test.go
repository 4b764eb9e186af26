package nn

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Bad settings and inputs are errors on the graph naming the module, never
// panics.
func TestRecurrentErrors(t *testing.T) {
	for _, c := range []struct {
		name, want string
		build      func(g *graph.Graph) *graph.Node
	}{
		{"bad size", "hidden size 0 and layers 1 must be positive", func(g *graph.Graph) *graph.Node {
			return NewLSTM(g, "lstm", 3, 0, RecurrentConfig{}).Forward(g.Input("x", graph.Float64, 2, 1, 3))
		}},
		{"bad layers", "layers -2 must be positive", func(g *graph.Graph) *graph.Node {
			return NewRNN(g, "rnn", 3, 4, RecurrentConfig{Layers: -2}).Forward(g.Input("x", graph.Float64, 2, 1, 3))
		}},
		{"bad nonlinearity", `nonlinearity "sigmoid"`, func(g *graph.Graph) *graph.Node {
			return NewRNN(g, "rnn", 3, 4, RecurrentConfig{Nonlinearity: "sigmoid"}).Forward(g.Input("x", graph.Float64, 2, 1, 3))
		}},
		{"GRU nonlinearity", "only an RNN has one", func(g *graph.Graph) *graph.Node {
			return NewGRU(g, "gru", 3, 4, RecurrentConfig{Nonlinearity: "relu"}).Forward(g.Input("x", graph.Float64, 2, 1, 3))
		}},
		{"cell nonlinearity", `nonlinearity "gelu"`, func(g *graph.Graph) *graph.Node {
			return NewRNNCell(g, "cell", 3, 4, true, "gelu").Forward(g.Input("x", graph.Float64, 2, 3))
		}},
		{"input features", "is not (T, N, 3)", func(g *graph.Graph) *graph.Node {
			return NewGRU(g, "gru", 3, 4, RecurrentConfig{}).Forward(g.Input("x", graph.Float64, 2, 1, 5))
		}},
		{"batch-first rank", "is not (N, T, 3) or (T, 3)", func(g *graph.Graph) *graph.Node {
			return NewGRU(g, "gru", 3, 4, RecurrentConfig{BatchFirst: true}).Forward(g.Input("x", graph.Float64, 2, 1, 1, 3))
		}},
		{"unbatched state", "initial state", func(g *graph.Graph) *graph.Node {
			out, _ := NewGRU(g, "gru", 3, 4, RecurrentConfig{}).Run(g.Input("x", graph.Float64, 5, 3), g.Input("h0", graph.Float64, 1, 2, 4))
			return out
		}},
		{"empty sequence", "the sequence is empty", func(g *graph.Graph) *graph.Node {
			return NewLSTM(g, "lstm", 3, 4, RecurrentConfig{}).Forward(g.Input("x", graph.Float64, 0, 2, 3))
		}},
		{"state shape", "initial state", func(g *graph.Graph) *graph.Node {
			out, _ := NewRNN(g, "rnn", 3, 4, RecurrentConfig{Layers: 2}).Run(g.Input("x", graph.Float64, 5, 2, 3), g.Input("h0", graph.Float64, 1, 2, 4))
			return out
		}},
		{"state dtype", "state", func(g *graph.Graph) *graph.Node {
			_, _, cn := NewLSTM(g, "lstm", 3, 4, RecurrentConfig{}).Run(g.Input("x", graph.Float64, 5, 2, 3), nil, g.Input("c0", graph.Float32, 1, 2, 4))
			return cn
		}},
		{"cell state", "state", func(g *graph.Graph) *graph.Node {
			h, _ := NewLSTMCell(g, "cell", 3, 4, true).Step(g.Input("x", graph.Float64, 2, 3), g.Input("h", graph.Float64, 3, 4), nil)
			return h
		}},
		{"cell input", "is not (N, 3) or (3)", func(g *graph.Graph) *graph.Node {
			return NewGRUCell(g, "cell", 3, 4, true).Forward(g.Input("x", graph.Float64, 2, 1, 3))
		}},
		{"nil module", "the module is nil", func(g *graph.Graph) *graph.Node {
			var m *LSTM
			return m.Forward(g.Input("x", graph.Float64, 2, 1, 3))
		}},
	} {
		g := graph.New()
		y := c.build(g)
		require.NotNil(t, graph.Poisoned(y), c.name)
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// Parameters are named, ordered and shaped as in PyTorch's state dicts,
// and start uniform in ±1/√hidden.
func TestRecurrentParameters(t *testing.T) {
	g := graph.New()
	m := NewGRU(g, "gru", 3, 4, RecurrentConfig{Layers: 2})
	var names []string
	for _, p := range NamedParameters(m) {
		names = append(names, p.Name)
		want := []int{12}
		switch {
		case strings.HasPrefix(p.Name, "weight_ih_l0"):
			want = []int{12, 3}
		case strings.HasPrefix(p.Name, "weight"):
			want = []int{12, 4}
		}
		require.Equal(t, want, p.Node.Shape(), p.Name)
		require.Equal(t, "gru."+p.Name, p.Node.Name())
		v := graph.Float64s(p.Node.Value())
		lo, hi := v[0], v[0]
		for _, x := range v {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		if lo < -0.5 || hi > 0.5 || hi-lo < 0.2 {
			t.Errorf("%s: values in [%v, %v], want spread over [-0.5, 0.5)", p.Name, lo, hi)
		}
	}
	require.Equal(t, []string{
		"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
		"weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1",
	}, names)
	cellNames := []string{}
	for _, p := range NamedParameters(NewLSTMCell(g, "cell", 3, 4, false)) {
		cellNames = append(cellNames, p.Name)
	}
	require.Equal(t, []string{"weight_ih", "weight_hh"}, cellNames)
}

// A recurrent module fixes no batch size in its graph: vm.Runner replays
// it for other sizes of the inputs' leading axis (the batch when
// batch-first, the steps otherwise), and the outputs are those of the
// module built for that size.
func TestRecurrentAnyBatchSize(t *testing.T) {
	for _, bf := range []bool{true, false} {
		cfg := RecurrentConfig{Layers: 2, BatchFirst: bf, Bidirectional: true}
		build := func(lead int) (*graph.Node, *graph.Node) {
			g := graph.New()
			x := g.Input("x", graph.Float64, lead, 4, 3)
			out, hn, cn := NewLSTM(g, "lstm", 3, 2, cfg).Run(x, nil, nil)
			return x, ops.Concat(0, ops.Reshape(out, -1), ops.Reshape(hn, -1), ops.Reshape(cn, -1))
		}
		x2, y2 := build(2)
		r, err := vm.NewRunner([]*graph.Node{y2}, nil, nil)
		require.NoError(t, err)
		x5 := sines(t, 0.2, 1, 5, 4, 3)
		require.NoError(t, r.Run(vm.Feeds{x2: x5}))
		got, err := r.Value(y2)
		require.NoError(t, err)
		x, y := build(5)
		want, err := vm.Eval(vm.Feeds{x: x5}, y)
		require.NoError(t, err)
		assertClose(t, fmt.Sprintf("batch first %t", bf), graph.Float64s(got), graph.Float64s(want[0]), 1e-12)
	}
}

// Dropout between layers acts in training mode only: in evaluation mode the
// module gives the outputs of the same module without dropout, in training
// mode it drops elements of the first layer's outputs, with a fresh mask at
// each run, and its checkpointed state stays PyTorch's.
func TestRecurrentDropout(t *testing.T) {
	cfg := RecurrentConfig{Layers: 2, BatchFirst: true, Bidirectional: true}
	build := func(g *graph.Graph, p float64) *LSTM {
		c := cfg
		c.Dropout = p
		return NewLSTM(g, "lstm", 3, 4, c)
	}
	g := graph.New()
	m := build(g, 0.5)
	require.Equal(t, "LSTM(3, 4, num_layers=2, batch_first=True, dropout=0.5, bidirectional=True)", Format(m))
	require.Len(t, StateOf(m), 16)
	x := g.Input("x", graph.Float64, 2, 5, 3)
	train := m.Forward(x)
	SetTraining(m, false)
	eval := m.Forward(x)
	plain := build(g, 0).Forward(x)
	require.NoError(t, g.Err())

	mach := machine(t, []*graph.Node{train, eval, plain}, StateUpdates(m))
	feeds := vm.Feeds{x: sines(t, 0.1, 1, 2, 5, 3)}
	require.NoError(t, mach.Run(feeds))
	first := value(t, mach, train)
	assertClose(t, "evaluation", value(t, mach, eval), value(t, mach, plain), 0)
	require.NotEqual(t, value(t, mach, plain), first)
	require.NoError(t, mach.Run(feeds))
	require.NotEqual(t, first, value(t, mach, train), "the mask is the same at the next step")

	bad := graph.New()
	NewGRU(bad, "gru", 3, 4, RecurrentConfig{Layers: 2, Dropout: 1.5})
	require.ErrorContains(t, bad.Err(), "drop probability 1.5")
}

// TestRecurrentLoopProducts asserts that the product in a layer's loop
// reads the recurrent weight untransposed (W_hhᵀ, transposed once before
// the loop: a product with B transposed would pack the same matrix again
// at every step), and that the gradient's loop runs only the two products
// of the derivative, not the forward product again (the loop carries it).
func TestRecurrentLoopProducts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(g *graph.Graph, x *graph.Node) (*graph.Node, Module)
	}{
		{"RNN", func(g *graph.Graph, x *graph.Node) (*graph.Node, Module) {
			m := NewRNN(g, "rnn", 3, 4, RecurrentConfig{})
			return m.Forward(x), m
		}},
		{"LSTM", func(g *graph.Graph, x *graph.Node) (*graph.Node, Module) {
			m := NewLSTM(g, "lstm", 3, 4, RecurrentConfig{})
			return m.Forward(x), m
		}},
		{"GRU", func(g *graph.Graph, x *graph.Node) (*graph.Node, Module) {
			m := NewGRU(g, "gru", 3, 4, RecurrentConfig{})
			return m.Forward(x), m
		}},
	} {
		g := graph.New()
		out, m := tc.build(g, g.Input("x", graph.Float64, 5, 2, 3))
		require.NoError(t, out.Err(), tc.name)
		grads, err := compile.Grad(ops.Sum(out), Parameters(m)...)
		require.NoError(t, err, tc.name)
		bodies := map[string][]*graph.Subgraph{}
		seen := map[graph.MultiOp]bool{}
		walkNodes(grads, func(n *graph.Node) {
			if op, _ := n.MultiOp(); op != nil && !seen[op] && strings.HasPrefix(op.Name(), "Scan") {
				seen[op] = true
				bodies[op.Name()] = append(bodies[op.Name()], op.(graph.SubgraphOp).Subgraphs()...)
			}
		})
		require.Len(t, bodies["Scan"], 1, tc.name)
		require.Len(t, bodies["Scan(reverse)"], 1, tc.name)
		var products []ops.MatMulOp
		walkNodes(bodies["Scan"][0].Outputs, func(n *graph.Node) {
			if mm, ok := n.Op().(ops.MatMulOp); ok {
				products = append(products, mm)
			}
		})
		require.Equal(t, []ops.MatMulOp{{}}, products, "%s: the loop's products", tc.name)
		products = nil
		walkNodes(bodies["Scan(reverse)"][0].Outputs, func(n *graph.Node) {
			if mm, ok := n.Op().(ops.MatMulOp); ok {
				products = append(products, mm)
			}
		})
		require.Len(t, products, 2, "%s: the gradient loop's products", tc.name)
	}
}

// walkNodes calls f once on every node that the nodes from are computed
// from, them included.
func walkNodes(from []*graph.Node, f func(*graph.Node)) {
	seen := map[*graph.Node]bool{}
	var visit func(n *graph.Node)
	visit = func(n *graph.Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		f(n)
		for _, in := range n.Inputs() {
			visit(in)
		}
	}
	for _, n := range from {
		visit(n)
	}
}

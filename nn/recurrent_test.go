package nn

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// recurrentFixtures reads testdata/recurrent/io.safetensors (see
// testdata/recurrent_torch.py).
func recurrentFixtures(t *testing.T) (map[string]*tensor.Dense, map[string]string) {
	t.Helper()
	f, err := os.Open("testdata/recurrent/io.safetensors")
	require.NoError(t, err)
	defer f.Close()
	io, meta, err := ReadSafetensors(f)
	require.NoError(t, err)
	return io, meta
}

// loadTorchState loads testdata/recurrent/<name>.safetensors, a PyTorch
// state dict, strictly into m's parameters in store.
func loadTorchState(t *testing.T, name string, store ParamStore, m Module) {
	t.Helper()
	f, err := os.Open("testdata/recurrent/" + name + ".safetensors")
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, Load(f, store, StateOf(m)), name)
}

// recurrentRun builds a module or cell's outputs from x and the initial
// states (nil for zeros), in the order PyTorch returns them.
type recurrentRun func(x, h0, c0 *graph.Node) []*graph.Node

func TestRecurrentMatchesPyTorch(t *testing.T) {
	io, meta := recurrentFixtures(t)
	for _, c := range []struct {
		name string
		cfg  RecurrentConfig
		lstm bool
		make func(g *graph.Graph, cfg RecurrentConfig) (Module, recurrentRun)
	}{
		{"rnn_l1", RecurrentConfig{}, false, rnnUnderTest},
		{"rnn_l2", RecurrentConfig{Layers: 2}, false, rnnUnderTest},
		{"rnn_relu_l2", RecurrentConfig{Layers: 2, Nonlinearity: "relu"}, false, rnnUnderTest},
		{"lstm_l1", RecurrentConfig{}, true, lstmUnderTest},
		{"lstm_l2", RecurrentConfig{Layers: 2}, true, lstmUnderTest},
		{"lstm_nobias_l1", RecurrentConfig{NoBias: true}, true, lstmUnderTest},
		{"gru_l1", RecurrentConfig{}, false, gruUnderTest},
		{"gru_l2", RecurrentConfig{Layers: 2}, false, gruUnderTest},
		{"rnn_bi_l1", RecurrentConfig{Bidirectional: true}, false, rnnUnderTest},
		{"lstm_bi_l2", RecurrentConfig{Layers: 2, Bidirectional: true}, true, lstmUnderTest},
		{"gru_bi_l2", RecurrentConfig{Layers: 2, Bidirectional: true}, false, gruUnderTest},
	} {
		for _, bf := range []int{0, 1, 2} { // 2: unbatched, batch_first set
			for _, init := range []int{0, 1} {
				key := fmt.Sprintf("%s/bf%d/init%d/", c.name, bf, init)
				if bf == 2 {
					key = fmt.Sprintf("%s/unbatched/init%d/", c.name, init)
				}
				cfg := c.cfg
				cfg.BatchFirst = bf > 0
				g := graph.New()
				m, run := c.make(g, cfg)
				require.Equal(t, meta[fmt.Sprintf("%s/bf%d.repr", c.name, min(bf, 1))], Format(m), key)
				outs := []string{"out", "h_n"}
				if c.lstm {
					outs = append(outs, "c_n")
				}
				checkRecurrent(t, key, io, g, m, c.name, run, init == 1, c.lstm, outs)
			}
		}
	}
}

func TestRecurrentCellsMatchPyTorch(t *testing.T) {
	io, meta := recurrentFixtures(t)
	for _, c := range []struct {
		name string
		lstm bool
		make func(g *graph.Graph) (Module, recurrentRun)
	}{
		{"rnncell", false, func(g *graph.Graph) (Module, recurrentRun) {
			m := NewRNNCell(g, "", 3, 4, true, "tanh")
			return m, func(x, h, _ *graph.Node) []*graph.Node { return []*graph.Node{m.Step(x, h)} }
		}},
		{"rnncell_relu", false, func(g *graph.Graph) (Module, recurrentRun) {
			m := NewRNNCell(g, "", 3, 4, true, "relu")
			return m, func(x, h, _ *graph.Node) []*graph.Node { return []*graph.Node{m.Step(x, h)} }
		}},
		{"lstmcell", true, func(g *graph.Graph) (Module, recurrentRun) {
			m := NewLSTMCell(g, "", 3, 4, true)
			return m, func(x, h, c *graph.Node) []*graph.Node {
				h, c = m.Step(x, h, c)
				return []*graph.Node{h, c}
			}
		}},
		{"grucell", false, func(g *graph.Graph) (Module, recurrentRun) {
			m := NewGRUCell(g, "", 3, 4, true)
			return m, func(x, h, _ *graph.Node) []*graph.Node { return []*graph.Node{m.Step(x, h)} }
		}},
	} {
		for _, key := range []string{"init0/", "init1/", "unbatched/init0/", "unbatched/init1/"} {
			init := strings.HasSuffix(key, "init1/")
			key = c.name + "/" + key
			g := graph.New()
			m, run := c.make(g)
			require.Equal(t, meta[c.name+".repr"], Format(m), key)
			outs := []string{"h"}
			if c.lstm {
				outs = append(outs, "c")
			}
			checkRecurrent(t, key, io, g, m, c.name, run, init, c.lstm, outs)
		}
	}
}

// checkRecurrent runs m, loaded with PyTorch's weights, on the fixture's
// inputs under key and compares its outputs with PyTorch's to 1e-12.
func checkRecurrent(t *testing.T, key string, io map[string]*tensor.Dense, g *graph.Graph, m Module, name string, run recurrentRun, init, lstm bool, outs []string) {
	t.Helper()
	input := func(what string) *graph.Node {
		v, ok := io[key+what]
		require.True(t, ok, key+what)
		return g.Input(what, graph.Float64, v.Shape()...)
	}
	feeds := vm.Feeds{}
	x := input("x")
	feeds[x] = io[key+"x"]
	var h0, c0 *graph.Node
	if init {
		h0 = input("h0")
		feeds[h0] = io[key+"h0"]
		if lstm {
			c0 = input("c0")
			feeds[c0] = io[key+"c0"]
		}
	}
	ys := run(x, h0, c0)
	require.NoError(t, g.Err(), key)
	mach := machine(t, ys, nil)
	loadTorchState(t, name, mach, m)
	require.NoError(t, mach.Run(feeds), key)
	for i, what := range outs {
		want := io[key+what]
		require.Equal(t, []int(want.Shape()), ys[i].Shape(), key+what)
		assertClose(t, key+what, value(t, mach, ys[i]), graph.Float64s(want), 1e-12)
	}
}

func rnnUnderTest(g *graph.Graph, cfg RecurrentConfig) (Module, recurrentRun) {
	m := NewRNN(g, "", 3, 4, cfg)
	return m, func(x, h0, _ *graph.Node) []*graph.Node {
		out, hn := m.Run(x, h0)
		return []*graph.Node{out, hn}
	}
}

func lstmUnderTest(g *graph.Graph, cfg RecurrentConfig) (Module, recurrentRun) {
	m := NewLSTM(g, "", 3, 4, cfg)
	return m, func(x, h0, c0 *graph.Node) []*graph.Node {
		out, hn, cn := m.Run(x, h0, c0)
		return []*graph.Node{out, hn, cn}
	}
}

func gruUnderTest(g *graph.Graph, cfg RecurrentConfig) (Module, recurrentRun) {
	m := NewGRU(g, "", 3, 4, cfg)
	return m, func(x, h0, _ *graph.Node) []*graph.Node {
		out, hn := m.Run(x, h0)
		return []*graph.Node{out, hn}
	}
}

// In float32 the modules give float64's outputs to float32's precision.
func TestRecurrentFloat32(t *testing.T) {
	run := func(dtype tensor.Dtype) []float64 {
		g := graph.New()
		m := NewLSTM(g, "lstm", 3, 4, RecurrentConfig{Layers: 2, Bidirectional: true}, WithDType(dtype))
		x := g.Input("x", dtype, 6, 2, 3)
		out, hn, cn := m.Run(x, nil, nil)
		xs, err := graph.FromFloat64s(dtype, graph.Float64s(sines(t, 0.5, 1, 6, 2, 3)), 6, 2, 3)
		require.NoError(t, err)
		vals, err := vm.Eval(vm.Feeds{x: xs}, out, hn, cn)
		require.NoError(t, err)
		var all []float64
		for _, v := range vals {
			all = append(all, graph.Float64s(v)...)
		}
		return all
	}
	assertClose(t, "float32", run(graph.Float32), run(graph.Float64), 1e-5)
}

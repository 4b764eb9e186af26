package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// cellKind is the recurrence a cell or layer computes.
type cellKind uint8

const (
	cellTanh cellKind = iota // Elman: h' = tanh(W_ih x + b_ih + W_hh h + b_hh)
	cellReLU                 // the same with ReLU
	cellLSTM
	cellGRU
)

// gates is how many blocks of hidden rows the weights stack: PyTorch's
// i,f,g,o for the LSTM and r,z,n for the GRU.
func (k cellKind) gates() int {
	switch k {
	case cellLSTM:
		return 4
	case cellGRU:
		return 3
	}
	return 1
}

// states is how many tensors the recurrence carries: (h, c) for the LSTM,
// h for the others.
func (k cellKind) states() int {
	if k == cellLSTM {
		return 2
	}
	return 1
}

// nonlinearity reads an Elman cell's nonlinearity, PyTorch's "tanh" (also
// the empty string) or "relu".
func nonlinearity(name string) (cellKind, error) {
	switch name {
	case "", "tanh":
		return cellTanh, nil
	case "relu":
		return cellReLU, nil
	}
	return 0, fmt.Errorf("nonlinearity %q: want \"tanh\" or \"relu\"", name)
}

// RecurrentWeights are the parameters of one recurrent cell or layer, laid
// out as PyTorch's: the gates' weights stacked by rows in PyTorch's order
// (i,f,g,o for the LSTM, r,z,n for the GRU, one block for an Elman RNN).
type RecurrentWeights struct {
	WeightIH *graph.Node // (gates·hidden, in)
	WeightHH *graph.Node // (gates·hidden, hidden)
	BiasIH   *graph.Node // (gates·hidden), or nil without biases
	BiasHH   *graph.Node // (gates·hidden), or nil without biases
}

// recurrentWeights makes the parameters of a cell or layer from in to
// hidden features, named with suffix ("weight_ih" + suffix), uniform in
// ±1/√hidden as in PyTorch unless the builder's options say otherwise.
func (b *builder) recurrentWeights(kind cellKind, in, hidden int, bias bool, suffix string) RecurrentWeights {
	rows := kind.gates() * hidden
	w := RecurrentWeights{
		WeightIH: b.param("weight_ih"+suffix, b.o.weightInit, hidden, rows, rows, in),
		WeightHH: b.param("weight_hh"+suffix, b.o.weightInit, hidden, rows, rows, hidden),
	}
	if bias {
		w.BiasIH = b.param("bias_ih"+suffix, b.o.biasInit, hidden, rows, rows)
		w.BiasHH = b.param("bias_hh"+suffix, b.o.biasInit, hidden, rows, rows)
	}
	return w
}

// recurrentBuilder starts the parameters of a recurrent module: PyTorch
// draws every weight and bias uniformly in ±1/√hidden.
func recurrentBuilder(g *graph.Graph, kind, name string, hidden int, opts []Option) *builder {
	bound := 1 / math.Sqrt(float64(max(hidden, 1)))
	return newBuilder(g, kind, name, Uniform(-bound, bound), Uniform(-bound, bound), opts)
}

// project returns the input's part of the gates for x (…, in): x·W_ihᵀ +
// b_ih + b_hh, but for the GRU's b_hn, which its n gate scales by r. A
// layer projects its whole sequence at once, outside the loop, so the
// biases are added once, not at every step.
func (w RecurrentWeights) project(kind cellKind, x *graph.Node) *graph.Node {
	bias := w.BiasIH
	if bias != nil && w.BiasHH != nil {
		bhh := w.BiasHH
		if kind == cellGRU { // b_hr, b_hz, and 0 for b_hn
			third := bhh.Shape()[0] / 3
			bhh = ops.Pad(ops.Slice(bhh, 0, 0, 2*third), 0, 0, third)
		}
		bias = ops.Add(bias, bhh)
	}
	xp := ops.MatMulT(x, w.WeightIH, false, true) // a batch of sequences by one matrix
	if bias == nil {
		return xp
	}
	return ops.Add(xp, bias)
}

// recurrentT is W_hhᵀ (hidden, gates·hidden), the recurrent weight as a
// layer's loop reads it. The layer transposes it once, before the loop:
// each step's product then reads it where it is stored, where with W_hh
// every step would repack the same matrix.
func (w RecurrentWeights) recurrentT() *graph.Node { return ops.Transpose(w.WeightHH) }

// step is one step of the recurrence from the projected input xp (N,
// gates·hidden) (see project), the state, h (N, hidden) or (h, c) for the
// LSTM, and gh = h·W_hhᵀ, to the new state:
//
//	Elman: h' = act(xp + gh)
//	LSTM:  i,f,g,o = σ,σ,tanh,σ(xp + gh); c' = f·c + i·g; h' = o·tanh(c')
//	GRU:   r,z = σ(xp_rz + gh_rz); n = tanh(xp_n + r·(gh_n + b_hn))
//	       h' = (1-z)·n + z·h
func (w RecurrentWeights) step(kind cellKind, xp, gh *graph.Node, state []*graph.Node) []*graph.Node {
	h := state[0]
	hidden := w.WeightHH.Shape()[1]
	gate := func(v *graph.Node, k int) *graph.Node { return ops.Slice(v, 1, k*hidden, (k+1)*hidden) }
	if kind == cellGRU {
		r := ops.Sigmoid(ops.Add(gate(xp, 0), gate(gh, 0)))
		z := ops.Sigmoid(ops.Add(gate(xp, 1), gate(gh, 1)))
		hn := gate(gh, 2)
		if w.BiasHH != nil {
			hn = ops.Add(hn, ops.Slice(w.BiasHH, 0, 2*hidden, 3*hidden))
		}
		n := ops.Tanh(ops.Add(gate(xp, 2), ops.Mul(r, hn)))
		return []*graph.Node{ops.Add(n, ops.Mul(z, ops.Sub(h, n)))}
	}
	gates := ops.Add(gh, xp)
	switch kind {
	case cellTanh:
		return []*graph.Node{ops.Tanh(gates)}
	case cellReLU:
		return []*graph.Node{ops.ReLU(gates)}
	}
	i, f := ops.Sigmoid(gate(gates, 0)), ops.Sigmoid(gate(gates, 1))
	g, o := ops.Tanh(gate(gates, 2)), ops.Sigmoid(gate(gates, 3))
	c := ops.Add(ops.Mul(f, state[1]), ops.Mul(i, g))
	return []*graph.Node{ops.Mul(o, ops.Tanh(c)), c}
}

// cell is what the three cells share: their kind, sizes and name.
type cell struct {
	kind       cellKind
	in, hidden int
	bias       bool
	name       string
	typeName   string
}

// newCell makes a cell's parameters; a bad size or setting (bad, if not
// nil) is recorded on g and leaves the weights poisoned.
func newCell(g *graph.Graph, typeName, name string, kind cellKind, in, hidden int, bias bool, bad error, opts []Option) (RecurrentWeights, cell) {
	b := recurrentBuilder(g, typeName, name, hidden, opts)
	c := cell{kind: kind, in: in, hidden: hidden, bias: bias, name: b.name, typeName: typeName}
	switch {
	case bad != nil:
		return RecurrentWeights{WeightIH: b.fail("%v", bad)}, c
	case in <= 0 || hidden <= 0:
		return RecurrentWeights{WeightIH: b.fail("input size %d and hidden size %d must be positive", in, hidden)}, c
	}
	return b.recurrentWeights(kind, in, hidden, bias, ""), c
}

// run checks x (N, in) and the state (nil for zeros) and builds one step.
func (c *cell) run(w RecurrentWeights, x *graph.Node, state []*graph.Node) []*graph.Node {
	if p := firstPoisoned(append([]*graph.Node{x, w.WeightIH}, state...)); p != nil {
		return repeat(p, len(state))
	}
	if x == nil {
		return repeat(nilInput(w.WeightIH.Graph(), c.typeName, c.name), len(state))
	}
	defer x.Graph().Scope(c.name)()
	rank := x.Type().Rank()
	if rank < 1 || rank > 2 || x.Shape()[rank-1] != c.in {
		return repeat(fail(x, c.typeName, "%q: input %v is not (N, %d) or (%d)", c.name, x.Type(), c.in, c.in), len(state))
	}
	if rank == 1 { // unbatched, as PyTorch allows: a batch of one
		next := c.run(w, withBatchAxis(x, 0), unbatch(state, 0, withBatchAxis))
		return unbatch(next, 0, withoutBatchAxis)
	}
	full, err := zeroStates(x, state, 0, c.hidden, 0)
	if err != nil {
		return repeat(fail(x, c.typeName, "%q: %v", c.name, err), len(state))
	}
	return w.step(c.kind, w.project(c.kind, x), ops.MatMulT(full[0], w.WeightHH, false, true), full)
}

// zeroStates returns the states with nil ones replaced by zeros of x's
// dtype, (layers, N, hidden) or (N, hidden) when layers is 0, N being x's
// dimension batchAxis; or an error if a state has another type.
func zeroStates(x *graph.Node, state []*graph.Node, batchAxis, hidden, layers int) ([]*graph.Node, error) {
	shape := []int{x.Shape()[batchAxis], hidden}
	if layers > 0 {
		shape = append([]int{layers}, shape...)
	}
	want := graph.TypeOf(x.DType(), shape...)
	out := make([]*graph.Node, len(state))
	for i, s := range state {
		switch {
		case s == nil:
			out[i] = zeroState(x, batchAxis, hidden, layers)
		case !s.Type().Equal(want):
			return nil, fmt.Errorf("state %v is not %v", s.Type(), want)
		default:
			out[i] = s
		}
	}
	return out, nil
}

// firstPoisoned returns the first poisoned node of ns (nil ones skipped),
// or nil.
func firstPoisoned(ns []*graph.Node) *graph.Node {
	return graph.Poisoned(slices.DeleteFunc(slices.Clone(ns), func(n *graph.Node) bool { return n == nil })...)
}

// repeat returns n copies of node.
func repeat(node *graph.Node, n int) []*graph.Node {
	out := make([]*graph.Node, n)
	for i := range out {
		out[i] = node
	}
	return out
}

// Describe gives the cell's sizes, as PyTorch prints them.
func (c *cell) Describe() string {
	s := fmt.Sprintf("%d, %d", c.in, c.hidden)
	if !c.bias {
		s += ", bias=False"
	}
	if c.kind == cellReLU {
		s += ", nonlinearity=relu"
	}
	return s
}

// Name is the name the cell was made with, which prefixes its
// parameters' names.
func (c *cell) Name() string { return c.name }

// RNNCell is one step of an Elman recurrent network, PyTorch's
// nn.RNNCell: h' = tanh(W_ih x + b_ih + W_hh h + b_hh), or ReLU in place
// of tanh. Its parameters are weight_ih (hidden, in), weight_hh (hidden,
// hidden), bias_ih and bias_hh (hidden).
type RNNCell struct {
	RecurrentWeights
	cell
}

// NewRNNCell adds to g an RNNCell from in to hidden features, with biases
// when bias is true and the nonlinearity "tanh" (or "") or "relu".
// Parameters start uniform in ±1/√hidden, as in PyTorch. Bad settings are
// recorded on g.
func NewRNNCell(g *graph.Graph, name string, in, hidden int, bias bool, nonlin string, opts ...Option) *RNNCell {
	kind, err := nonlinearity(nonlin)
	w, c := newCell(g, "RNNCell", name, kind, in, hidden, bias, err, opts)
	return &RNNCell{w, c}
}

// Step returns the new hidden state (N, hidden) from x (N, in) and h (N,
// hidden), or zeros when h is nil. As in PyTorch, x may be unbatched, (in),
// with h and the result (hidden).
func (c *RNNCell) Step(x, h *graph.Node) *graph.Node {
	if c == nil || c.WeightIH == nil {
		return unmade(x, "RNNCell", "NewRNNCell")
	}
	return c.run(c.RecurrentWeights, x, []*graph.Node{h})[0]
}

// Forward is Step from a zero state.
func (c *RNNCell) Forward(x *graph.Node) *graph.Node { return c.Step(x, nil) }

// String prints the module as PyTorch does (see Format).
func (c *RNNCell) String() string { return Format(c) }

// LSTMCell is one step of a long short-term memory network, PyTorch's
// nn.LSTMCell, with the gates i,f,g,o stacked in that order in weight_ih
// (4·hidden, in), weight_hh (4·hidden, hidden), bias_ih and bias_hh.
type LSTMCell struct {
	RecurrentWeights
	cell
}

// NewLSTMCell adds to g an LSTMCell from in to hidden features, with
// biases when bias is true, uniform in ±1/√hidden as in PyTorch.
func NewLSTMCell(g *graph.Graph, name string, in, hidden int, bias bool, opts ...Option) *LSTMCell {
	w, c := newCell(g, "LSTMCell", name, cellLSTM, in, hidden, bias, nil, opts)
	return &LSTMCell{w, c}
}

// Step returns the new hidden and cell states (N, hidden) from x (N, in)
// and the states h and c, each zeros when nil; or unbatched, as RNNCell's.
func (c *LSTMCell) Step(x, h, cs *graph.Node) (hNext, cNext *graph.Node) {
	if c == nil || c.WeightIH == nil {
		p := unmade(x, "LSTMCell", "NewLSTMCell")
		return p, p
	}
	s := c.run(c.RecurrentWeights, x, []*graph.Node{h, cs})
	return s[0], s[1]
}

// Forward is the hidden state of Step from zero states.
func (c *LSTMCell) Forward(x *graph.Node) *graph.Node {
	h, _ := c.Step(x, nil, nil)
	return h
}

// String prints the module as PyTorch does (see Format).
func (c *LSTMCell) String() string { return Format(c) }

// GRUCell is one step of a gated recurrent unit, PyTorch's nn.GRUCell,
// with the gates r,z,n stacked in that order in weight_ih (3·hidden, in),
// weight_hh (3·hidden, hidden), bias_ih and bias_hh, and PyTorch's n gate
// n = tanh(W_in x + b_in + r·(W_hn h + b_hn)).
type GRUCell struct {
	RecurrentWeights
	cell
}

// NewGRUCell adds to g a GRUCell from in to hidden features, with biases
// when bias is true, uniform in ±1/√hidden as in PyTorch.
func NewGRUCell(g *graph.Graph, name string, in, hidden int, bias bool, opts ...Option) *GRUCell {
	w, c := newCell(g, "GRUCell", name, cellGRU, in, hidden, bias, nil, opts)
	return &GRUCell{w, c}
}

// Step returns the new hidden state (N, hidden) from x (N, in) and h (N,
// hidden), or zeros when h is nil; or unbatched, as RNNCell's.
func (c *GRUCell) Step(x, h *graph.Node) *graph.Node {
	if c == nil || c.WeightIH == nil {
		return unmade(x, "GRUCell", "NewGRUCell")
	}
	return c.run(c.RecurrentWeights, x, []*graph.Node{h})[0]
}

// Forward is Step from a zero state.
func (c *GRUCell) Forward(x *graph.Node) *graph.Node { return c.Step(x, nil) }

// String prints the module as PyTorch does (see Format).
func (c *GRUCell) String() string { return Format(c) }

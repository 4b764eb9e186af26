package nn

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// RecurrentConfig sets up an RNN, LSTM or GRU as PyTorch's constructor
// arguments do. The zero value is PyTorch's default: one layer, biases,
// time-major inputs, tanh.
type RecurrentConfig struct {
	Layers     int  // stacked layers (num_layers); 0 means 1
	BatchFirst bool // inputs and outputs are (N, T, ·) rather than (T, N, ·)
	NoBias     bool // no bias_ih and bias_hh (bias=False)
	// Bidirectional runs each layer forwards and backwards over the
	// sequence and joins the two directions' hidden states, (…, 2·hidden);
	// the backward direction's parameters end in "_reverse".
	Bidirectional bool
	Nonlinearity  string // the RNN's: "tanh" (also "") or "relu"
	// Dropout is the probability of dropping each element of every layer's
	// output but the last layer's, in training mode (see SetTraining), as
	// PyTorch's dropout. Its step counter (a buffer named "dropout.step"
	// in the graph) is not part of the module's checkpointed state, which
	// stays PyTorch's.
	Dropout float64
}

// recurrent is what RNN, LSTM and GRU share: layers of weights and the
// loop over time that runs them.
type recurrent struct {
	// Layers holds each layer's parameters: layer l's are weight_ih_l{l}
	// and so on, as in PyTorch's state dicts. A bidirectional module's
	// Layers[2l] is layer l's forward direction and Layers[2l+1] its
	// backward direction (weight_ih_l{l}_reverse, …).
	Layers     []RecurrentWeights
	drop       *Dropout // between layers, or nil
	kind       cellKind
	in, hidden int
	cfg        RecurrentConfig
	name       string
	typeName   string
}

// newRecurrent makes a module's layers; bad settings (bad, if not nil)
// are recorded on g and leave the first layer's weight poisoned.
func newRecurrent(g *graph.Graph, typeName, name string, kind cellKind, in, hidden int, cfg RecurrentConfig, bad error, opts []Option) recurrent {
	b := recurrentBuilder(g, typeName, name, hidden, opts)
	r := recurrent{kind: kind, in: in, hidden: hidden, cfg: cfg, name: b.name, typeName: typeName}
	if cfg.Layers == 0 {
		r.cfg.Layers = 1
	}
	switch {
	case bad != nil:
		r.Layers = []RecurrentWeights{{WeightIH: b.fail("%v", bad)}}
		return r
	case in <= 0 || hidden <= 0 || r.cfg.Layers < 0:
		r.Layers = []RecurrentWeights{{WeightIH: b.fail("input size %d, hidden size %d and layers %d must be positive", in, hidden, r.cfg.Layers)}}
		return r
	}
	// Each direction of a layer holds at least hidden² weights: refuse
	// layers that cannot fit before building any (MaxInt layers looped on).
	if _, err := graph.Bytes(graph.Float32, []int{r.cfg.Layers, r.directions(), hidden, hidden}, 0); err != nil {
		r.Layers = []RecurrentWeights{{WeightIH: b.fail("%d layers of hidden size %d: %v", r.cfg.Layers, hidden, err)}}
		return r
	}
	if cfg.Dropout != 0 {
		r.drop = NewDropout(g, join(b.name, "dropout"), cfg.Dropout, opts...)
	}
	for l := range r.cfg.Layers {
		if g != nil && g.Err() != nil {
			if len(r.Layers) == 0 { // the graph failed before: run reads the first layer
				r.Layers = []RecurrentWeights{{WeightIH: g.Fail(g.Err())}}
			}
			break // a layer failed: the rest would fail with it
		}
		width := in
		if l > 0 {
			width = r.directions() * hidden
		}
		for d := range r.directions() {
			r.Layers = append(r.Layers, b.recurrentWeights(kind, width, hidden, !cfg.NoBias, layerSuffix(l, d)))
		}
	}
	return r
}

// directions is 2 for a bidirectional module, 1 otherwise.
func (r *recurrent) directions() int {
	if r.cfg.Bidirectional {
		return 2
	}
	return 1
}

// layerSuffix ends the names of layer l's parameters in direction d:
// "_l0", or "_l0_reverse" for the backward direction.
func layerSuffix(l, d int) string {
	if d == 1 {
		return fmt.Sprintf("_l%d_reverse", l)
	}
	return fmt.Sprintf("_l%d", l)
}

// members names each layer's parameters as PyTorch does ("weight_ih_l0").
func (r *recurrent) members() []member {
	var out []member
	for i, w := range r.Layers {
		suffix := layerSuffix(i/r.directions(), i%r.directions())
		for _, p := range []struct {
			name string
			node *graph.Node
		}{{"weight_ih", w.WeightIH}, {"weight_hh", w.WeightHH}, {"bias_ih", w.BiasIH}, {"bias_hh", w.BiasHH}} {
			if p.node != nil && p.node.Kind() == graph.KindParam && p.node.Err() == nil {
				out = append(out, member{name: p.name + suffix, kind: memberParam, node: p.node})
			}
		}
	}
	return out
}

// run runs the layers over x, (T, N, in) or (N, T, in) with BatchFirst, or
// an unbatched (T, in) whose states and outputs have no batch axis either,
// from the initial states init (each (layers·directions, N, hidden), nil
// for zeros), and returns the last layer's outputs, (T, N,
// directions·hidden) or (N, T, directions·hidden), and each state's final
// value for every layer and direction, (layers·directions, N, hidden).
func (r *recurrent) run(x *graph.Node, init []*graph.Node) (out *graph.Node, final []*graph.Node) {
	states := len(init)
	if p := firstPoisoned(append([]*graph.Node{x, r.Layers[0].WeightIH}, init...)); p != nil {
		return p, repeat(p, states)
	}
	if x == nil {
		p := nilInput(r.Layers[0].WeightIH.Graph(), r.typeName, r.name)
		return p, repeat(p, states)
	}
	defer x.Graph().Scope(r.name)()
	failed := func(format string, args ...any) (*graph.Node, []*graph.Node) {
		p := fail(x, r.typeName, "%q: "+format, append([]any{r.name}, args...)...)
		return p, repeat(p, states)
	}
	layout := "(T, N, %d)"
	if r.cfg.BatchFirst {
		layout = "(N, T, %d)"
	}
	rank := x.Type().Rank()
	if rank < 2 || rank > 3 || x.Shape()[rank-1] != r.in {
		return failed("input %v is not "+layout+" or (T, %d)", x.Type(), r.in, r.in)
	}
	switch {
	case rank == 2: // unbatched, as PyTorch allows: a batch of one
		out, final = r.timeMajor(withBatchAxis(x, 1), unbatch(init, 1, withBatchAxis), failed)
		return withoutBatchAxis(out, 1), unbatch(final, 1, withoutBatchAxis)
	case r.cfg.BatchFirst:
		out, final = r.timeMajor(ops.Transpose(x, 1, 0, 2), init, failed)
		return ops.Transpose(out, 1, 0, 2), final
	}
	return r.timeMajor(x, init, failed)
}

// timeMajor runs the layers over x (T, N, in) from the initial states;
// see run.
func (r *recurrent) timeMajor(x *graph.Node, init []*graph.Node, failed func(string, ...any) (*graph.Node, []*graph.Node)) (out *graph.Node, final []*graph.Node) {
	if p := firstPoisoned(append([]*graph.Node{x}, init...)); p != nil {
		return p, repeat(p, len(init))
	}
	states := len(init)
	runs := len(r.Layers)
	if x.Shape()[0] == 0 {
		return failed("the sequence is empty")
	}
	init, err := zeroStates(x, init, 1, r.hidden, runs)
	if err != nil {
		return failed("initial %v", err)
	}
	finals := make([][]*graph.Node, states)
	dirs := r.directions()
	for l := 0; l < runs; l += dirs {
		outs := make([]*graph.Node, dirs)
		for d := range dirs {
			carry := make([]*graph.Node, states)
			for s, v := range init {
				carry[s] = ops.Reshape(ops.Slice(v, 0, l+d, l+d+1), -1, r.hidden)
			}
			last, ys := r.direction(r.Layers[l+d], x, carry, d == 1)
			for s, v := range last {
				finals[s] = append(finals[s], ops.Reshape(v, 1, -1, r.hidden))
			}
			outs[d] = ys
		}
		x = outs[0]
		if dirs == 2 {
			x = ops.Concat(2, outs...)
		}
		if r.drop != nil && l+dirs < runs {
			x = r.drop.Forward(x)
		}
	}
	final = make([]*graph.Node, states)
	for s, vs := range finals {
		final[s] = ops.Concat(0, vs...)
	}
	return x, final
}

// direction runs one layer's recurrence with weights w over x (T, N,
// width) from the state carry, from the last step to the first when
// reverse is true, and returns the final state and the hidden states (T,
// N, hidden). The input's part of every step is one product, outside the
// loop. The loop carries, besides the state, the recurrent product of its
// h, h·W_hhᵀ, which each step computes for the next from the h it makes:
// the gradient's steps then need no value of that product, and do not
// compute it again (they do the two products of its derivative). The
// loop keeps it for them (T·N·gates·hidden values), as PyTorch keeps the
// gates.
func (r *recurrent) direction(w RecurrentWeights, x *graph.Node, carry []*graph.Node, reverse bool) (last []*graph.Node, ys *graph.Node) {
	xp := w.project(r.kind, x)
	var opts []ops.ScanOption
	if reverse {
		opts = append(opts, ops.Reverse())
	}
	kind, whhT := r.kind, w.recurrentT()
	states := len(carry)
	init := append(slices.Clone(carry), ops.MatMul(carry[0], whhT))
	last, out := ops.Scan(func(carry, xs []*graph.Node) ([]*graph.Node, []*graph.Node) {
		next := w.step(kind, xs[0], carry[states], carry[:states])
		return append(next, ops.MatMul(next[0], whhT)), next[:1]
	}, init, []*graph.Node{xp}, opts...)
	return last[:states], out[0]
}

// Describe gives the module's settings as PyTorch prints them: defaults
// are left out.
func (r *recurrent) Describe() string {
	s := fmt.Sprintf("%d, %d", r.in, r.hidden)
	if r.cfg.Layers != 1 {
		s += fmt.Sprintf(", num_layers=%d", r.cfg.Layers)
	}
	if r.cfg.NoBias {
		s += ", bias=False"
	}
	if r.cfg.BatchFirst {
		s += ", batch_first=True"
	}
	if r.cfg.Dropout != 0 {
		s += fmt.Sprintf(", dropout=%v", r.cfg.Dropout)
	}
	if r.cfg.Bidirectional {
		s += ", bidirectional=True"
	}
	return s
}

// SetTraining switches the dropout between layers on (training) or off
// for the Forward and Run calls that follow.
func (r *recurrent) SetTraining(training bool) {
	if r.drop != nil {
		r.drop.SetTraining(training)
	}
}

// StateUpdates advances the dropout's step counter at each training run.
func (r *recurrent) StateUpdates() map[*graph.Node]*graph.Node {
	if r.drop == nil {
		return nil
	}
	return r.drop.StateUpdates()
}

// Name is the name the module was made with, which prefixes its
// parameters' names.
func (r *recurrent) Name() string { return r.name }

// RNN is a stack of Elman recurrent layers, PyTorch's nn.RNN: each layer
// runs h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh) (or ReLU) over the
// sequence and feeds its h_t to the next layer. Its parameters are
// weight_ih_l{l} (hidden, in), weight_hh_l{l} (hidden, hidden), bias_ih_l{l}
// and bias_hh_l{l} (hidden), so PyTorch's state dicts load unchanged.
type RNN struct{ recurrent }

// NewRNN adds to g an RNN from in to hidden features set up by cfg. As in
// PyTorch every parameter starts uniform in ±1/√hidden. Bad settings are
// recorded on g.
func NewRNN(g *graph.Graph, name string, in, hidden int, cfg RecurrentConfig, opts ...Option) *RNN {
	kind, err := nonlinearity(cfg.Nonlinearity)
	return &RNN{newRecurrent(g, "RNN", name, kind, in, hidden, cfg, err, opts)}
}

// Run runs the network over x, (T, N, in), or (N, T, in) with BatchFirst,
// from the hidden state h0 (layers, N, hidden), zeros when nil. It returns
// the last layer's hidden states at every step, (T, N, hidden) or (N, T,
// hidden), and every layer's last hidden state hn (layers, N, hidden), as
// PyTorch's (output, h_n). A bidirectional network's states are (2·layers,
// N, hidden), layer l's forward direction at 2l and its backward direction
// at 2l+1, and its outputs join both directions, (…, 2·hidden). As in
// PyTorch, x may be unbatched, (T, in), whatever BatchFirst says: then the
// states and outputs have no batch axis either.
func (r *RNN) Run(x, h0 *graph.Node) (out, hn *graph.Node) {
	if r == nil || len(r.Layers) == 0 {
		p := unmade(x, "RNN", "NewRNN")
		return p, p
	}
	out, final := r.run(x, []*graph.Node{h0})
	return out, final[0]
}

// Forward returns the output of Run from a zero state.
func (r *RNN) Forward(x *graph.Node) *graph.Node {
	out, _ := r.Run(x, nil)
	return out
}

// String prints the module as PyTorch does (see Format).
func (r *RNN) String() string { return Format(r) }

// LSTM is a stack of long short-term memory layers, PyTorch's nn.LSTM,
// with its parameters (the gates i,f,g,o stacked by rows: weight_ih_l{l}
// (4·hidden, in), weight_hh_l{l} (4·hidden, hidden), bias_ih_l{l} and
// bias_hh_l{l} (4·hidden)), so PyTorch's state dicts load unchanged.
type LSTM struct{ recurrent }

// NewLSTM adds to g an LSTM from in to hidden features set up by cfg (whose
// Nonlinearity must be empty). As in PyTorch every parameter starts uniform
// in ±1/√hidden.
func NewLSTM(g *graph.Graph, name string, in, hidden int, cfg RecurrentConfig, opts ...Option) *LSTM {
	return &LSTM{newRecurrent(g, "LSTM", name, cellLSTM, in, hidden, cfg, noNonlinearity(cfg), opts)}
}

// Run runs the network over x, (T, N, in), or (N, T, in) with BatchFirst,
// from the hidden and cell states h0 and c0 (layers, N, hidden), zeros
// when nil. It returns the last layer's hidden states at every step and
// every layer's last hidden and cell states, as PyTorch's (output, (h_n,
// c_n)); shapes as for RNN's Run.
func (r *LSTM) Run(x, h0, c0 *graph.Node) (out, hn, cn *graph.Node) {
	if r == nil || len(r.Layers) == 0 {
		p := unmade(x, "LSTM", "NewLSTM")
		return p, p, p
	}
	out, final := r.run(x, []*graph.Node{h0, c0})
	return out, final[0], final[1]
}

// Forward returns the output of Run from zero states.
func (r *LSTM) Forward(x *graph.Node) *graph.Node {
	out, _, _ := r.Run(x, nil, nil)
	return out
}

// String prints the module as PyTorch does (see Format).
func (r *LSTM) String() string { return Format(r) }

// GRU is a stack of gated recurrent unit layers, PyTorch's nn.GRU, with
// its parameters (the gates r,z,n stacked by rows: weight_ih_l{l}
// (3·hidden, in), weight_hh_l{l} (3·hidden, hidden), bias_ih_l{l} and
// bias_hh_l{l} (3·hidden)) and its n gate, tanh(W_in x + b_in + r·(W_hn h
// + b_hn)).
type GRU struct{ recurrent }

// NewGRU adds to g a GRU from in to hidden features set up by cfg (whose
// Nonlinearity must be empty). As in PyTorch every parameter starts uniform
// in ±1/√hidden.
func NewGRU(g *graph.Graph, name string, in, hidden int, cfg RecurrentConfig, opts ...Option) *GRU {
	return &GRU{newRecurrent(g, "GRU", name, cellGRU, in, hidden, cfg, noNonlinearity(cfg), opts)}
}

// Run runs the network over x, (T, N, in), or (N, T, in) with BatchFirst,
// from the hidden state h0 (layers, N, hidden), zeros when nil, and returns
// PyTorch's (output, h_n), as RNN's Run.
func (r *GRU) Run(x, h0 *graph.Node) (out, hn *graph.Node) {
	if r == nil || len(r.Layers) == 0 {
		p := unmade(x, "GRU", "NewGRU")
		return p, p
	}
	out, final := r.run(x, []*graph.Node{h0})
	return out, final[0]
}

// Forward returns the output of Run from a zero state.
func (r *GRU) Forward(x *graph.Node) *graph.Node {
	out, _ := r.Run(x, nil)
	return out
}

// String prints the module as PyTorch does (see Format).
func (r *GRU) String() string { return Format(r) }

// noNonlinearity refuses a nonlinearity for the LSTM and GRU, whose gates
// fix theirs.
func noNonlinearity(cfg RecurrentConfig) error {
	if cfg.Nonlinearity != "" {
		return fmt.Errorf("nonlinearity %q: only an RNN has one", cfg.Nonlinearity)
	}
	return nil
}

package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// randomDense returns a float64 tensor of the given shape uniform in ±1.
func randomDense(t *testing.T, r *rand.Rand, shape ...int) *tensor.Dense {
	v := make([]float64, graph.ShapeSize(shape))
	for i := range v {
		v[i] = 2*r.Float64() - 1
	}
	return dense(t, v, shape...)
}

// recurrentUnderTest is a small recurrent module whose weights, input and
// initial states are all function inputs, so that gradcheck varies them.
type recurrentUnderTest struct {
	kind                      cellKind
	steps, n, in, hidden, lay int
	batchFirst, bidirectional bool
}

// dirs is the number of directions.
func (c recurrentUnderTest) dirs() int {
	if c.bidirectional {
		return 2
	}
	return 1
}

func (c recurrentUnderTest) String() string {
	return fmt.Sprintf("kind %d, %d layers, batch first %t, bidirectional %t", c.kind, c.lay, c.batchFirst, c.bidirectional)
}

// inputs returns x, h0, c0 (for the LSTM) and each layer's four weights.
func (c recurrentUnderTest) inputs(t *testing.T) []*tensor.Dense {
	r := rand.New(rand.NewPCG(uint64(c.kind), uint64(c.lay)))
	x := randomDense(t, r, c.steps, c.n, c.in)
	if c.batchFirst {
		x = randomDense(t, r, c.n, c.steps, c.in)
	}
	vals := []*tensor.Dense{x}
	for range c.kind.states() {
		vals = append(vals, randomDense(t, r, c.lay*c.dirs(), c.n, c.hidden))
	}
	rows := c.kind.gates() * c.hidden
	for l := range c.lay * c.dirs() {
		width := c.in
		if l >= c.dirs() {
			width = c.dirs() * c.hidden
		}
		vals = append(vals, randomDense(t, r, rows, width), randomDense(t, r, rows, c.hidden), randomDense(t, r, rows), randomDense(t, r, rows))
	}
	return vals
}

// build makes the module with in's weights and returns its outputs and
// final states, flattened into one vector.
func (c recurrentUnderTest) build(in []*graph.Node) *graph.Node {
	g := in[0].Graph()
	cfg := RecurrentConfig{Layers: c.lay, BatchFirst: c.batchFirst, Bidirectional: c.bidirectional}
	r := newRecurrent(g, "rnn", "rnn", c.kind, c.in, c.hidden, cfg, nil, nil)
	states := c.kind.states()
	w := in[1+states:]
	for l := range r.Layers {
		r.Layers[l] = RecurrentWeights{WeightIH: w[4*l], WeightHH: w[4*l+1], BiasIH: w[4*l+2], BiasHH: w[4*l+3]}
	}
	out, final := r.run(in[0], in[1:1+states])
	parts := []*graph.Node{ops.Reshape(out, -1)}
	for _, f := range final {
		parts = append(parts, ops.Reshape(f, -1))
	}
	return ops.Concat(0, parts...)
}

var recurrentGradCases = []recurrentUnderTest{
	{kind: cellTanh, steps: 3, n: 2, in: 2, hidden: 3, lay: 2},
	{kind: cellReLU, steps: 3, n: 2, in: 3, hidden: 2, lay: 1, batchFirst: true},
	{kind: cellLSTM, steps: 3, n: 2, in: 2, hidden: 2, lay: 2, batchFirst: true},
	{kind: cellLSTM, steps: 4, n: 1, in: 3, hidden: 2, lay: 1},
	{kind: cellGRU, steps: 3, n: 2, in: 2, hidden: 2, lay: 2},
	{kind: cellGRU, steps: 3, n: 2, in: 3, hidden: 3, lay: 1, batchFirst: true},
	{kind: cellLSTM, steps: 3, n: 2, in: 2, hidden: 2, lay: 2, bidirectional: true},
	{kind: cellGRU, steps: 3, n: 1, in: 2, hidden: 2, lay: 1, batchFirst: true, bidirectional: true},
}

// TestRecurrentGradients checks the modules' first and second derivatives
// with respect to the input, the initial states and every weight against
// finite differences.
func TestRecurrentGradients(t *testing.T) {
	for _, c := range recurrentGradCases {
		t.Run(c.String(), func(t *testing.T) {
			checkGradients(t, c.build, c.inputs(t))
		})
	}
}

// TestRecurrentMatchesUnrolledCells compares the modules, whose loop is an
// ops.Scan, with the same recurrence unrolled from the cells' steps: their
// outputs, gradients and second derivatives (the gradient of ⟨∇f, v⟩)
// agree to 1e-12.
func TestRecurrentMatchesUnrolledCells(t *testing.T) {
	for _, c := range recurrentGradCases {
		t.Run(c.String(), func(t *testing.T) {
			vals := c.inputs(t)
			got := c.derivatives(t, vals, c.build)
			want := c.derivatives(t, vals, c.unrolled)
			for i := range want {
				assertClose(t, fmt.Sprintf("value %d", i), got[i], want[i], 1e-12)
			}
		})
	}
}

// unrolled is build's recurrence written as a Go loop over the cells'
// step, layer by layer and direction by direction, without Scan.
func (c recurrentUnderTest) unrolled(in []*graph.Node) *graph.Node {
	x := in[0]
	if c.batchFirst {
		x = ops.Transpose(x, 1, 0, 2)
	}
	states := c.kind.states()
	w := in[1+states:]
	finals := make([][]*graph.Node, states)
	for l := 0; l < c.lay*c.dirs(); l += c.dirs() {
		var outs []*graph.Node
		for d := range c.dirs() {
			i := l + d
			weights := RecurrentWeights{WeightIH: w[4*i], WeightHH: w[4*i+1], BiasIH: w[4*i+2], BiasHH: w[4*i+3]}
			cl := cell{kind: c.kind, in: x.Shape()[2], hidden: c.hidden, name: "cell"}
			state := make([]*graph.Node, states)
			for s := range state {
				state[s] = ops.Reshape(ops.Slice(in[1+s], 0, i, i+1), c.n, c.hidden)
			}
			ys := make([]*graph.Node, c.steps)
			for k := range c.steps {
				t := k
				if d == 1 {
					t = c.steps - 1 - k
				}
				xt := ops.Reshape(ops.Slice(x, 0, t, t+1), c.n, x.Shape()[2])
				state = cl.run(weights, xt, state)
				ys[t] = ops.Reshape(state[0], 1, c.n, c.hidden)
			}
			for s, v := range state {
				finals[s] = append(finals[s], ops.Reshape(v, 1, c.n, c.hidden))
			}
			outs = append(outs, ops.Concat(0, ys...))
		}
		x = ops.Concat(2, outs...)
	}
	if c.batchFirst {
		x = ops.Transpose(x, 1, 0, 2)
	}
	parts := []*graph.Node{ops.Reshape(x, -1)}
	for _, f := range finals {
		parts = append(parts, ops.Reshape(ops.Concat(0, f...), -1))
	}
	return ops.Concat(0, parts...)
}

// derivatives returns, for f = fn(inputs), f itself, the gradient of
// ⟨u, f⟩ with respect to every input, and the gradient of ⟨∇⟨u, f⟩, v⟩,
// for fixed random u and v.
func (c recurrentUnderTest) derivatives(t *testing.T, vals []*tensor.Dense, fn func([]*graph.Node) *graph.Node) [][]float64 {
	g := graph.New()
	in := make([]*graph.Node, len(vals))
	feeds := vm.Feeds{}
	for i, v := range vals {
		in[i] = g.Input(fmt.Sprint("in", i), graph.Float64, v.Shape()...)
		feeds[in[i]] = v
	}
	f := fn(in)
	require.NoError(t, g.Err())
	r := rand.New(rand.NewPCG(7, 7))
	u := g.Const(randomDense(t, r, f.Shape()...))
	grads, err := compile.Grad(ops.Sum(ops.Mul(u, f)), in...)
	require.NoError(t, err)
	var dot *graph.Node
	for i, gr := range grads {
		term := ops.Sum(ops.Mul(g.Const(randomDense(t, r, vals[i].Shape()...)), gr))
		if dot == nil {
			dot = term
		} else {
			dot = ops.Add(dot, term)
		}
	}
	second, err := compile.Grad(dot, in...)
	require.NoError(t, err)
	outs := append(append([]*graph.Node{f}, grads...), second...)
	out, err := vm.Eval(feeds, outs...)
	require.NoError(t, err)
	res := make([][]float64, len(out))
	for i, o := range out {
		res[i] = graph.Float64s(o)
	}
	return res
}

// A cell steps inside a Scan of one's own: an LSTMCell looped by ops.Scan
// gives the LSTM's outputs, with the same weights.
func TestCellInsideScan(t *testing.T) {
	g := graph.New()
	lstm := NewLSTM(g, "lstm", 3, 4, RecurrentConfig{})
	c := NewLSTMCell(g, "cell", 3, 4, true)
	c.RecurrentWeights = lstm.Layers[0]
	x := g.Input("x", graph.Float64, 5, 2, 3)
	want, hn, cn := lstm.Run(x, nil, nil)
	final, ys := ops.Scan(func(carry, xs []*graph.Node) ([]*graph.Node, []*graph.Node) {
		h, cs := c.Step(xs[0], carry[0], carry[1])
		return []*graph.Node{h, cs}, []*graph.Node{h}
	}, []*graph.Node{zeroState(x, 1, 4, 0), zeroState(x, 1, 4, 0)}, []*graph.Node{x})
	require.NoError(t, g.Err())
	out, err := vm.Eval(vm.Feeds{x: sines(t, 0.3, 1, 5, 2, 3)}, want, hn, cn, ys[0], final[0], final[1])
	require.NoError(t, err)
	for i := range 3 {
		assertClose(t, fmt.Sprint("output ", i), graph.Float64s(out[3+i]), graph.Float64s(out[i]), 1e-12)
	}
}

// A GRU followed by a Linear layer learns, with Adam, to output the running
// sum of its inputs: the optimiser finds the recurrent parameters by their
// PyTorch names and the loss falls.
func TestRecurrentTrains(t *testing.T) {
	g := graph.New()
	gru := NewGRU(g, "gru", 1, 8, RecurrentConfig{BatchFirst: true})
	head := NewLinear(g, "head", 8, 1, true)
	model := NewSequential("model", gru, head)
	x := g.Input("x", graph.Float64, 4, 6, 1)
	y := g.Input("y", graph.Float64, 4*6, 1)
	pred := head.Forward(ops.Reshape(gru.Forward(x), -1, 8))
	loss := MSE(pred, y)
	updates, err := TrainingUpdates(NewAdam(DefaultAdam().WithLR(0.02)), loss, model)
	require.NoError(t, err)
	m := machine(t, []*graph.Node{loss}, updates)
	xs := sines(t, 0.4, 0.5, 4, 6, 1)
	sums := make([]float64, 4*6)
	for i, v := range graph.Float64s(xs) {
		sums[i] = v
		if i%6 > 0 {
			sums[i] += sums[i-1]
		}
	}
	feeds := vm.Feeds{x: xs, y: dense(t, sums, 4*6, 1)}
	var first, last float64
	for step := range 150 {
		require.NoError(t, m.Run(feeds))
		last = value(t, m, loss)[0]
		if step == 0 {
			first = last
		}
	}
	if !(last < first/10) {
		t.Errorf("loss went from %v to %v in 150 steps, want a tenth or less", first, last)
	}
}

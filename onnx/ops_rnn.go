package onnx

import (
	"fmt"
	"strings"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
)

// Recurrent layers (RNN, GRU, LSTM), each direction an ops.Scan over the
// sequence: the input products of every step are one product before the
// loop; the body multiplies the hidden state by R and applies the gates.
func init() {
	register(map[string]importFunc{
		"RNN": func(c *nodeContext) ([]*graph.Node, error) { return recurrent(c, rnnCell, 1, "Tanh") },
		"GRU": func(c *nodeContext) ([]*graph.Node, error) { return recurrent(c, gruCell, 3, "Sigmoid", "Tanh") },
		"LSTM": func(c *nodeContext) ([]*graph.Node, error) {
			return recurrent(c, lstmCell, 4, "Sigmoid", "Tanh", "Tanh")
		},
	})
	// output_sequence (before opset 7) says whether Y is optional.
	rnn := attrs{"activations": rnnActivations, "direction": onlyStrings("forward", "reverse", "bidirectional"),
		"hidden_size": {}, "layout": onlyInts(0, 1).opsets(14, 0), "output_sequence": {to: 6}}
	accept(map[string]attrs{
		"RNN":  rnn,
		"GRU":  with(rnn, attrs{"linear_before_reset": {from: 3}}),
		"LSTM": with(rnn, attrs{"input_forget": onlyInts(0)}),
	})
}

// rnnActivations accepts the recurrent activations Import implements.
var rnnActivations = attrRule{check: func(c *nodeContext, a *onnxpb.AttributeProto) error {
	for _, name := range c.attrStrings(a.GetName()) {
		if activations[strings.ToLower(name)] == nil {
			return unsupported("activation %q (implemented: Sigmoid, Tanh, Relu, Softplus)", name)
		}
	}
	return nil
}}

// activation maps ONNX's names of recurrent activations to ops.
var activations = map[string]func(*graph.Node) *graph.Node{
	"sigmoid": ops.Sigmoid, "tanh": ops.Tanh, "relu": ops.ReLU, "softplus": ops.Softplus,
}

// cellWeights are one direction's weights: R (gates·H, H), the biases
// added inside the step (rb, GRU's hidden-gate bias; nil elsewhere), and
// LSTM's peepholes p (3·H) or nil.
type cellWeights struct {
	r, rb, p          *graph.Node
	f                 []func(*graph.Node) *graph.Node // the direction's activations
	hidden            int
	linearBeforeReset bool
}

// cell builds one step from this step's input products xw (B, gates·H),
// with both biases added except rb, and the carry (h, or h and c).
type cell func(w cellWeights, xw *graph.Node, carry []*graph.Node) []*graph.Node

// gate returns gate k of a (B, gates·H) product.
func gate(v *graph.Node, k, hidden int) *graph.Node { return ops.Slice(v, 1, k*hidden, (k+1)*hidden) }

func rnnCell(w cellWeights, xw *graph.Node, carry []*graph.Node) []*graph.Node {
	return []*graph.Node{w.f[0](ops.Add(xw, ops.MatMulT(carry[0], w.r, false, true)))}
}

func gruCell(w cellWeights, xw *graph.Node, carry []*graph.Node) []*graph.Node {
	h, H := carry[0], w.hidden
	hr := ops.MatMulT(h, ops.Slice(w.r, 0, 0, 2*H), false, true) // z and r
	z := w.f[0](ops.Add(gate(xw, 0, H), gate(hr, 0, H)))
	r := w.f[0](ops.Add(gate(xw, 1, H), gate(hr, 1, H)))
	rh := ops.Slice(w.r, 0, 2*H, 3*H)
	var pre *graph.Node
	if w.linearBeforeReset {
		pre = ops.Mul(r, ops.Add(ops.MatMulT(h, rh, false, true), w.rb))
	} else {
		pre = ops.Add(ops.MatMulT(ops.Mul(r, h), rh, false, true), w.rb)
	}
	candidate := w.f[1](ops.Add(gate(xw, 2, H), pre))
	return []*graph.Node{ops.Add(ops.Mul(ops.Sub(scalar(z, 1), z), candidate), ops.Mul(z, h))}
}

func lstmCell(w cellWeights, xw *graph.Node, carry []*graph.Node) []*graph.Node {
	h, c, H := carry[0], carry[1], w.hidden
	g := ops.Add(xw, ops.MatMulT(h, w.r, false, true)) // gates i, o, f, c
	peep := func(k int, state *graph.Node) *graph.Node {
		if w.p == nil {
			return gate(g, k, H)
		}
		return ops.Add(gate(g, k, H), ops.Mul(ops.Slice(w.p, 0, []int{0, 2, 1}[k]*H, ([]int{0, 2, 1}[k]+1)*H), state))
	}
	i := w.f[0](peep(0, c))
	f := w.f[0](peep(2, c))
	cNew := ops.Add(ops.Mul(f, c), ops.Mul(i, w.f[1](gate(g, 3, H))))
	o := w.f[0](peep(1, cNew))
	return []*graph.Node{ops.Mul(o, w.f[2](cNew)), cNew}
}

// recurrent imports a recurrent layer of the given gate count and
// default activations.
func recurrent(c *nodeContext, step cell, gates int, defaults ...string) ([]*graph.Node, error) {
	in, err := c.inputs(3)
	if err != nil {
		return nil, err
	}
	x, wAll, rAll := in[0], in[1], in[2]
	if x.Type().Rank() != 3 || wAll.Type().Rank() != 3 || rAll.Type().Rank() != 3 {
		return nil, fmt.Errorf("X %v, W %v and R %v: want rank 3", x.Type(), wAll.Type(), rAll.Type())
	}
	layout := c.attrInt("layout", 0)
	if layout != 0 {
		x = ops.Transpose(x, 1, 0, 2) // (seq, batch, input)
	}
	T, batch := x.Shape()[0], x.Shape()[1]
	H := c.attrInt("hidden_size", rAll.Shape()[2])
	dirs := map[string][]bool{"forward": {false}, "reverse": {true}, "bidirectional": {false, true}}[c.attrString("direction", "forward")]
	if dirs == nil {
		return nil, unsupported("direction %q", c.attrString("direction", ""))
	}
	if wAll.Shape()[0] != len(dirs) || wAll.Shape()[1] != gates*H || rAll.Shape()[1] != gates*H || rAll.Shape()[2] != H {
		return nil, fmt.Errorf("W %v and R %v do not fit %d directions of %d gates of hidden size %d", wAll.Type(), rAll.Type(), len(dirs), gates, H)
	}
	if lens := c.optional(4); lens != nil {
		v, err := c.known(4)
		if err != nil {
			return nil, err
		}
		for _, l := range denseInts(v) {
			if l != T {
				return nil, unsupported("sequence_lens %v shorter than the sequence (%d)", denseInts(v), T)
			}
		}
	}
	names := c.attrStrings("activations")
	if names == nil {
		for range dirs {
			names = append(names, defaults...)
		}
	}
	if len(names) != len(defaults)*len(dirs) {
		return nil, fmt.Errorf("activations %v: want %d", names, len(defaults)*len(dirs))
	}
	var ys, hs, cs []*graph.Node
	for d, reverse := range dirs {
		w := cellWeights{hidden: H, linearBeforeReset: gates == 3 && c.attrInt("linear_before_reset", 0) != 0}
		for _, name := range names[d*len(defaults) : (d+1)*len(defaults)] {
			f, ok := activations[strings.ToLower(name)]
			if !ok {
				return nil, unsupported("activation %q", name)
			}
			w.f = append(w.f, f)
		}
		dir := func(v *graph.Node) *graph.Node {
			s := v.Shape()
			return ops.Reshape(ops.Slice(v, 0, d, d+1), s[1:]...)
		}
		w.r = dir(rAll)
		xw := ops.MatMulT(ops.Reshape(x, T*batch, x.Shape()[2]), dir(wAll), false, true) // (T·B, gates·H)
		if b := c.optional(3); b != nil {
			bd := dir(b) // (2·gates·H): input biases, then hidden ones
			bias := ops.Add(ops.Slice(bd, 0, 0, gates*H), ops.Slice(bd, 0, gates*H, 2*gates*H))
			if gates == 3 { // GRU adds the hidden-gate bias of R inside the step
				bias = ops.Concat(0, ops.Slice(bias, 0, 0, 2*H), ops.Slice(bd, 0, 2*H, 3*H))
				w.rb = ops.Slice(bd, 0, 5*H, 6*H)
			}
			xw = ops.Add(xw, bias)
		} else if gates == 3 {
			w.rb = c.g().Const(graph.NewDense(x.DType(), H))
		}
		if p := c.optional(7); p != nil && gates == 4 {
			w.p = dir(p)
		}
		init := []*graph.Node{initialState(c, 5, d, batch, H)}
		if gates == 4 {
			init = append(init, initialState(c, 6, d, batch, H))
		}
		var opts []ops.ScanOption
		if reverse {
			opts = append(opts, ops.Reverse())
		}
		final, out := ops.Scan(func(carry, xs []*graph.Node) ([]*graph.Node, []*graph.Node) {
			next := step(w, xs[0], carry)
			return next, next[:1]
		}, init, []*graph.Node{ops.Reshape(xw, T, batch, gates*H)}, opts...)
		if len(final) == 0 || len(out) == 0 {
			return nil, c.g().Err()
		}
		ys = append(ys, ops.Reshape(out[0], T, 1, batch, H))
		hs = append(hs, ops.Reshape(final[0], 1, batch, H))
		if gates == 4 {
			cs = append(cs, ops.Reshape(final[1], 1, batch, H))
		}
	}
	y, yh := concat(1, ys), concat(0, hs)
	if layout != 0 {
		y, yh = ops.Transpose(y, 2, 0, 1, 3), ops.Transpose(yh, 1, 0, 2)
	}
	outs := []*graph.Node{y, yh}
	if gates == 4 {
		yc := concat(0, cs)
		if layout != 0 {
			yc = ops.Transpose(yc, 1, 0, 2)
		}
		outs = append(outs, yc)
	}
	return outs, nil
}

// concat joins one node or more along axis.
func concat(axis int, xs []*graph.Node) *graph.Node {
	if len(xs) == 1 {
		return xs[0]
	}
	return ops.Concat(axis, xs...)
}

// initialState is direction d's slice (B, H) of input i (initial_h or
// initial_c), or zeros.
func initialState(c *nodeContext, i, d, batch, hidden int) *graph.Node {
	v := c.optional(i)
	if v == nil {
		return c.g().Const(graph.NewDense(c.in[0].DType(), batch, hidden))
	}
	if c.attrInt("layout", 0) != 0 {
		v = ops.Transpose(v, 1, 0, 2)
	}
	return ops.Reshape(ops.Slice(v, 0, d, d+1), batch, hidden)
}

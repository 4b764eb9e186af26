package bench

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The same models are built twice, once with nabla and once with Gorgonia,
// from the same values: the differential tests compare their gradients and
// the benchmarks time them.

// uniform returns n seeded values uniform in [-scale, scale).
func uniform(seed uint64, n int, scale float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * (2*r.Float64() - 1)
	}
	return v
}

// mustDense makes a tensor of the given dtype from values whose count is
// known to match the shape (the callers size them from it).
func mustDense(dtype tensor.Dtype, vals []float64, shape ...int) *tensor.Dense {
	t, err := graph.FromFloat64s(dtype, vals, shape...)
	if err != nil {
		panic(err) // a bug in this package's own fixtures
	}
	return t
}

// mlpData is a two-layer perceptron's weights and one batch of inputs with
// one-hot targets.
type mlpData struct {
	in, hidden, out, batch int
	x, target              []float64
	w1, b1, w2, b2         []float64
}

func newMLPData(in, hidden, out, batch int, seed uint64) mlpData {
	d := mlpData{in: in, hidden: hidden, out: out, batch: batch}
	d.x = uniform(seed, batch*in, 1)
	d.w1 = uniform(seed+1, in*hidden, 1/math.Sqrt(float64(in)))
	d.b1 = uniform(seed+2, hidden, 0.1)
	d.w2 = uniform(seed+3, hidden*out, 1/math.Sqrt(float64(hidden)))
	d.b2 = uniform(seed+4, out, 0.1)
	d.target = make([]float64, batch*out)
	r := rand.New(rand.NewPCG(seed+5, 1))
	for i := range batch {
		d.target[i*out+r.IntN(out)] = 1
	}
	return d
}

// nablaMLP is loss = mean over the batch of the softmax cross-entropy of
// tanh(x·W1 + b1)·W2 + b2 against the targets.
type nablaMLP struct {
	g         *graph.Graph
	x, target *graph.Node
	params    []*graph.Node // W1, b1, W2, b2
	loss      *graph.Node
	feeds     vm.Feeds
}

func buildNablaMLP(dtype tensor.Dtype, d mlpData) *nablaMLP {
	g := graph.New()
	m := &nablaMLP{g: g}
	m.x = g.Input("x", dtype, d.batch, d.in)
	m.target = g.Input("target", dtype, d.batch, d.out)
	w1 := g.Param("W1", mustDense(dtype, d.w1, d.in, d.hidden))
	b1 := g.Param("b1", mustDense(dtype, d.b1, d.hidden))
	w2 := g.Param("W2", mustDense(dtype, d.w2, d.hidden, d.out))
	b2 := g.Param("b2", mustDense(dtype, d.b2, d.out))
	m.params = []*graph.Node{w1, b1, w2, b2}
	h := ops.Tanh(ops.Add(ops.MatMul(m.x, w1), b1))
	logits := ops.Add(ops.MatMul(h, w2), b2)
	m.loss = ops.Mean(ops.CrossEntropyOneHot(logits, m.target))
	m.feeds = vm.Feeds{
		m.x:      mustDense(dtype, d.x, d.batch, d.in),
		m.target: mustDense(dtype, d.target, d.batch, d.out),
	}
	return m
}

// trainingStep compiles one SGD step: a single program computing the loss
// and its gradients and writing param ← param − lr·grad.
func (m *nablaMLP) trainingStep(lr float64) (*vm.Machine, error) {
	grads, err := compile.Grad(m.loss, m.params...)
	if err != nil {
		return nil, err
	}
	updates := map[*graph.Node]*graph.Node{}
	for i, p := range m.params {
		updates[p] = ops.Sub(p, ops.Scale(grads[i], lr))
	}
	prog, err := compile.Compile([]*graph.Node{m.loss}, compile.WithUpdates(updates))
	if err != nil {
		return nil, err
	}
	return vm.New(prog)
}

// gorgoniaBuild runs a Gorgonia graph builder written with G.Must, turning
// its panics into an error.
func gorgoniaBuild(build func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gorgonia: %v", r)
		}
	}()
	build()
	return nil
}

// gorgoniaMLP is a perceptron in Gorgonia: the biases are added with
// BroadcastAdd and the cross-entropy is −mean(sum(log(softmax)·target)).
type gorgoniaMLP struct {
	g         *G.ExprGraph
	x, target *G.Node
	params    G.Nodes // W1, b1, W2, b2, ...
	loss      *G.Node
}

// denseLayer is one fully connected layer's values: w is (in, out), row
// major, and the layer computes x·w + b.
type denseLayer struct {
	in, out int
	w, b    []float64
}

// buildGorgoniaMLP is nablaMLP's model in Gorgonia.
func buildGorgoniaMLP(dtype tensor.Dtype, d mlpData) (*gorgoniaMLP, error) {
	return buildGorgoniaNet(dtype, d.batch, d.x, d.target, []denseLayer{
		{d.in, d.hidden, d.w1, d.b1},
		{d.hidden, d.out, d.w2, d.b2},
	})
}

// buildGorgoniaNet builds a perceptron of the given layers with tanh between
// them and the mean softmax cross-entropy of the last one's output against
// the one-hot target (batch rows).
func buildGorgoniaNet(dtype tensor.Dtype, batch int, x, target []float64, layers []denseLayer) (*gorgoniaMLP, error) {
	m := &gorgoniaMLP{g: G.NewGraph()}
	out := layers[len(layers)-1].out
	err := gorgoniaBuild(func() {
		g := m.g
		m.x = G.NewMatrix(g, dtype, G.WithShape(batch, layers[0].in), G.WithName("x"),
			G.WithValue(mustDense(dtype, x, batch, layers[0].in)))
		m.target = G.NewMatrix(g, dtype, G.WithShape(batch, out), G.WithName("target"),
			G.WithValue(mustDense(dtype, target, batch, out)))
		h := m.x
		for i, l := range layers {
			w := G.NewMatrix(g, dtype, G.WithName(fmt.Sprintf("W%d", i+1)), G.WithValue(mustDense(dtype, l.w, l.in, l.out)))
			b := G.NewMatrix(g, dtype, G.WithName(fmt.Sprintf("b%d", i+1)), G.WithValue(mustDense(dtype, l.b, 1, l.out)))
			m.params = append(m.params, w, b)
			h = G.Must(G.BroadcastAdd(G.Must(G.Mul(h, w)), b, nil, []byte{0}))
			if i < len(layers)-1 {
				h = G.Must(G.Tanh(h))
			}
		}
		logp := G.Must(G.Log(G.Must(G.SoftMax(h))))
		perExample := G.Must(G.Sum(G.Must(G.HadamardProd(logp, m.target)), 1))
		m.loss = G.Must(G.Neg(G.Must(G.Mean(perExample))))
	})
	return m, err
}

// chainWidth is the length of the vector the elementwise chains work on:
// small, so that what is measured is each op's overhead.
const chainWidth = 16

// chainConst is the constant vector the chains multiply and add by.
var chainConst = uniform(11, chainWidth, 0.5)

// nablaChain builds length elementwise ops on a vector input, cycling
// through tanh, sin, ·c and +c (values stay bounded however long it is).
func nablaChain(dtype tensor.Dtype, length int) (x, y *graph.Node) {
	g := graph.New()
	x = g.Input("x", dtype, chainWidth)
	c := g.Const(mustDense(dtype, chainConst, chainWidth))
	y = x
	for i := range length {
		switch i % 4 {
		case 0:
			y = ops.Tanh(y)
		case 1:
			y = ops.Sin(y)
		case 2:
			y = ops.Mul(y, c)
		case 3:
			y = ops.Add(y, c)
		}
	}
	return x, y
}

// gorgoniaChain is nablaChain in Gorgonia; x holds the given values.
func gorgoniaChain(dtype tensor.Dtype, length int, x0 []float64) (*G.ExprGraph, *G.Node, error) {
	g := G.NewGraph()
	var y *G.Node
	err := gorgoniaBuild(func() {
		x := G.NewVector(g, dtype, G.WithName("x"), G.WithValue(mustDense(dtype, x0, chainWidth)))
		c := G.NewConstant(mustDense(dtype, chainConst, chainWidth))
		y = x
		for i := range length {
			switch i % 4 {
			case 0:
				y = G.Must(G.Tanh(y))
			case 1:
				y = G.Must(G.Sin(y))
			case 2:
				y = G.Must(G.HadamardProd(y, c))
			case 3:
				y = G.Must(G.Add(y, c))
			}
		}
	})
	return g, y, err
}

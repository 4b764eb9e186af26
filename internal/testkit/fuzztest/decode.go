package fuzztest

import (
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Bytes reads a fuzzer's input one decision at a time; once it runs out,
// every decision is 0, so any input decodes to something.
type Bytes struct {
	data []byte
	pos  int
}

// NewBytes reads data.
func NewBytes(data []byte) *Bytes { return &Bytes{data: data} }

// Done reports whether every byte has been read.
func (b *Bytes) Done() bool { return b.pos >= len(b.data) }

// Byte is the next byte, or 0.
func (b *Bytes) Byte() byte {
	if b.Done() {
		return 0
	}
	b.pos++
	return b.data[b.pos-1]
}

// IntN is a number in [0, n) (n ≥ 1).
func (b *Bytes) IntN(n int) int { return int(b.Byte()) % n }

// Signed is a small number in [-n, n].
func (b *Bytes) Signed(n int) int { return b.IntN(2*n+1) - n }

// Shape decodes a shape of rank below maxRank whose dimensions run from 1
// to maxDim.
func (b *Bytes) Shape(maxRank, maxDim int) []int {
	shape := make([]int, b.IntN(maxRank))
	for i := range shape {
		shape[i] = 1 + b.IntN(maxDim)
	}
	return shape
}

// Seed is a seed for the random values that go with the decoded graph.
func (b *Bytes) Seed() uint64 {
	var s uint64 = 14695981039346656037
	for _, c := range b.data {
		s = (s ^ uint64(c)) * 1099511628211
	}
	return s
}

// Mode chooses what a decoded graph may contain.
type Mode struct {
	// Hostile allows every mistake: nil inputs, nodes of another graph,
	// unsupported dtypes, negative and out-of-range axes and sizes.
	Hostile bool
	// MaxRank bounds the rank of leaves (each dimension is at most 3).
	MaxRank int
	// MaxOps bounds the number of op applications.
	MaxOps int
	// Extreme draws values, scalars and Scale and PowConst constants from
	// the edges of the floats too: signed zeros, huge and tiny values
	// (subnormals of both dtypes), infinities and NaN.
	Extreme bool
}

// Builder decodes ops into a graph: each applies one builder to nodes
// picked from those built so far.
type Builder struct {
	G       *graph.Graph
	Nodes   []*graph.Node // every node built, leaves first
	Leaves  []*graph.Node // inputs and parameters
	in      *Bytes
	mode    Mode
	foreign *graph.Node // a node of another graph
	rng     *rand.Rand
	// Leaf, when set, makes every input and parameter the bytes decode
	// (of the decoded type, numbered in order from 0), in place of the
	// graph's own Input and Param: the leaves of a function that another
	// graph (a Vmap's, a program of another batch size) builds again.
	Leaf   func(i int, t graph.Type) *graph.Node
	leaves int // the leaves Leaf made
}

// NewBuilder starts a graph from in, with leaves already made, if any.
func NewBuilder(in *Bytes, mode Mode, g *graph.Graph, leaves ...*graph.Node) *Builder {
	if mode.MaxRank == 0 {
		mode.MaxRank = 3
	}
	if mode.MaxOps == 0 {
		mode.MaxOps = 16
	}
	other := graph.New()
	b := &Builder{G: g, in: in, mode: mode, foreign: other.Input("other", graph.Float64, 2),
		rng: rand.New(rand.NewPCG(in.Seed(), 1))}
	b.Nodes = append(b.Nodes, leaves...)
	b.Leaves = append(b.Leaves, leaves...)
	return b
}

// Build decodes leaves and ops until the bytes or MaxOps run out.
func (b *Builder) Build() {
	for i := 0; i < b.mode.MaxOps && !b.in.Done(); i++ {
		var n *graph.Node
		if len(b.Nodes) == 0 || b.in.IntN(5) == 0 {
			n = b.leaf()
		} else {
			n = b.op()
		}
		if n != nil {
			b.Nodes = append(b.Nodes, n)
		}
	}
}

// shape decodes a shape of rank up to MaxRank and dimensions up to 3 (or,
// hostile, negative and huge ones now and then).
func (b *Builder) shape() []int {
	shape := make([]int, b.in.IntN(b.mode.MaxRank+1))
	for i := range shape {
		shape[i] = b.in.IntN(4)
		if b.mode.Hostile {
			switch b.in.IntN(32) {
			case 0:
				shape[i] = -1
			case 1:
				shape[i] = 1 << 62
			}
		}
	}
	return shape
}

func (b *Builder) dtype() tensor.Dtype {
	switch b.in.IntN(8) {
	case 0:
		return graph.Float32
	case 1:
		if b.mode.Hostile {
			return tensor.Int
		}
	}
	return graph.Float64
}

// Values fills a tensor of t's type with values in [-2, 2], or, with
// Mode.Extreme, with extreme values half of the time.
func (b *Builder) Values(t graph.Type) *tensor.Dense { return b.ValuesFrom(b.rng, t) }

// ValuesFrom is Values drawn from rng.
func (b *Builder) ValuesFrom(rng *rand.Rand, t graph.Type) *tensor.Dense {
	if !b.mode.Extreme {
		return Values(rng, t)
	}
	v := graph.NewDenseOf(t)
	for i := range t.Size() {
		x := 4*rng.Float64() - 2
		if rng.IntN(2) == 0 {
			x = extremes[rng.IntN(len(extremes))]
		}
		graph.SetFloat(v, i, x)
	}
	return v
}

// extremes are the values at which arithmetic that holds for real numbers
// may fail for floats: signed zeros, values whose products overflow or
// underflow, subnormals (of float64 and of float32), the largest floats,
// infinities and NaN.
var extremes = []float64{
	0, math.Copysign(0, -1), 1, -1, 3, 0.1,
	1e200, -1e200, 1e300, -1e300, math.MaxFloat64, -math.MaxFloat64,
	1e-200, 1e-300, -1e-300, 1e-310, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
	3e38, math.MaxFloat32, 1e-40, -1e-45,
	math.Inf(1), math.Inf(-1), math.NaN(),
}

// Values fills a tensor of t's type with values in [-2, 2] drawn from rng.
func Values(rng *rand.Rand, t graph.Type) *tensor.Dense {
	v := graph.NewDenseOf(t)
	for i := range t.Size() {
		graph.SetFloat(v, i, 4*rng.Float64()-2)
	}
	return v
}

// Rand is a generator seeded by the bytes: each call starts it afresh.
func (b *Builder) Rand() *rand.Rand { return rand.New(rand.NewPCG(b.in.Seed(), 2)) }

func (b *Builder) leaf() *graph.Node {
	dtype, shape := b.dtype(), b.shape()
	switch k := b.in.IntN(4); {
	case k == 0:
		if b.mode.Extreme {
			return b.G.Scalar(extremes[b.in.IntN(len(extremes))], dtype)
		}
		return b.G.Scalar(float64(b.in.Signed(3)), dtype)
	case b.Leaf != nil:
		n := b.Leaf(b.leaves, graph.TypeOf(dtype, shape...))
		b.leaves++
		b.Leaves = append(b.Leaves, n)
		return n
	case k == 1 || k == 2:
		n := b.G.Input("x", dtype, shape...)
		b.Leaves = append(b.Leaves, n)
		return n
	}
	if _, err := graph.Bytes(dtype, shape, 1<<20); err != nil || !graph.IsFloat(dtype) {
		return b.G.Param("p", nil) // a value this test cannot make
	}
	n := b.G.Param("p", b.Values(graph.TypeOf(dtype, shape...)))
	b.Leaves = append(b.Leaves, n)
	return n
}

// pick is an operand: a node built so far, or (hostile) nil or a node of
// another graph.
func (b *Builder) pick() *graph.Node {
	if b.mode.Hostile {
		switch b.in.IntN(40) {
		case 0:
			return nil
		case 1:
			return b.foreign
		}
	}
	// Recent nodes more often, so that chains grow.
	k := b.in.IntN(len(b.Nodes))
	if b.in.IntN(2) == 0 {
		k = len(b.Nodes) - 1 - k/2
	}
	return b.Nodes[k]
}

// axis is an axis of x: in range, or (hostile) perhaps not.
func (b *Builder) axis(x *graph.Node) int {
	r := max(len(x.Shape()), 1)
	if b.mode.Hostile && b.in.IntN(8) == 0 {
		return b.in.Signed(12)
	}
	return b.in.IntN(2*r) - r
}

func (b *Builder) axes(x *graph.Node) []int {
	axes := make([]int, b.in.IntN(3))
	for i := range axes {
		axes[i] = b.axis(x)
	}
	return axes
}

// like is a shape related to x's: a permutation, a reshape, a broadcast.
func (b *Builder) size(n int) int {
	if b.mode.Hostile && b.in.IntN(16) == 0 {
		return b.in.Signed(8)
	}
	return b.in.IntN(n + 1)
}

func (b *Builder) perm(x *graph.Node) []int {
	p := b.rng.Perm(len(x.Shape()))
	if b.mode.Hostile && len(p) > 0 && b.in.IntN(8) == 0 {
		p[b.in.IntN(len(p))] = b.in.Signed(12)
	}
	return p
}

func (b *Builder) reshapeTarget(x *graph.Node) []int {
	// Split or merge x's dimensions, with one -1 now and then.
	n := graph.ShapeSize(x.Shape())
	if b.mode.Hostile && b.in.IntN(4) == 0 {
		return b.shape()
	}
	var out []int
	for n > 1 {
		d := 1 + b.in.IntN(3)
		for n%d != 0 {
			d--
		}
		if d == 1 {
			d = n
		}
		out = append(out, d)
		n /= d
	}
	if n == 0 {
		out = append(out, 0)
	}
	if len(out) > 0 && b.in.IntN(4) == 0 {
		out[b.in.IntN(len(out))] = -1
	}
	return out
}

func (b *Builder) broadcastTarget(x *graph.Node) []int {
	out := append([]int(nil), x.Shape()...)
	for i, d := range out {
		if d == 1 {
			out[i] = b.in.IntN(4)
		}
	}
	for range b.in.IntN(3) {
		out = append([]int{1 + b.in.IntN(3)}, out...)
	}
	if b.mode.Hostile && b.in.IntN(8) == 0 {
		return b.shape()
	}
	return out
}

func (b *Builder) constant() float64 {
	if b.mode.Extreme {
		return extremes[b.in.IntN(len(extremes))]
	}
	vals := []float64{0, 1, -1, 2, 0.5, -3, 1e-3, 1e200, math.Inf(1), math.NaN()}
	k := b.in.IntN(len(vals))
	if !b.mode.Hostile {
		k %= 7
	}
	return vals[k]
}

// op applies one builder chosen by the bytes.
func (b *Builder) op() *graph.Node {
	k := b.in.IntN(len(builders))
	return builders[k](b)
}

type build = func(b *Builder) *graph.Node

func unary(f func(*graph.Node) *graph.Node) build {
	return func(b *Builder) *graph.Node { return f(b.pick()) }
}

func binary(f func(a, c *graph.Node) *graph.Node) build {
	return func(b *Builder) *graph.Node { return f(b.pick(), b.pick()) }
}

func reduce(f func(*graph.Node, ...int) *graph.Node) build {
	return func(b *Builder) *graph.Node { x := b.pick(); return f(x, b.axes(x)...) }
}

func axisOp(f func(*graph.Node, int) *graph.Node) build {
	return func(b *Builder) *graph.Node { x := b.pick(); return f(x, b.axis(x)) }
}

// builders lists every exported builder of package ops.
var builders = []build{
	unary(ops.Abs), unary(ops.Cos), unary(ops.Exp), unary(ops.Identity), unary(ops.Log),
	unary(ops.Log1p), unary(ops.Neg), unary(ops.ReLU), unary(ops.Sigmoid), unary(ops.Sign),
	unary(ops.Sin), unary(ops.Softplus), unary(ops.Sqrt), unary(ops.Square),
	unary(ops.StopGradient), unary(ops.Tanh),
	binary(ops.Add), binary(ops.Sub), binary(ops.Mul), binary(ops.Div), binary(ops.Pow),
	binary(ops.Maximum), binary(ops.Minimum), binary(ops.Equal), binary(ops.Greater),
	binary(ops.Less), binary(ops.MatMul), binary(ops.Gather), binary(ops.CrossEntropy),
	binary(ops.CrossEntropyOneHot),
	reduce(ops.Sum), reduce(ops.SumKeepDims), reduce(ops.Mean), reduce(ops.MeanKeepDims),
	reduce(ops.Max), reduce(ops.MaxKeepDims), reduce(ops.LogSumExp), reduce(ops.LogSumExpKeepDims),
	axisOp(ops.Softmax), axisOp(ops.LogSoftmax),
	func(b *Builder) *graph.Node { return ops.Scale(b.pick(), b.constant()) },
	func(b *Builder) *graph.Node { return ops.PowConst(b.pick(), b.constant()) },
	func(b *Builder) *graph.Node { return ops.Where(b.pick(), b.pick(), b.pick()) },
	func(b *Builder) *graph.Node {
		x, y := b.pick(), b.pick()
		return ops.MatMulT(x, y, b.in.IntN(2) == 0, b.in.IntN(2) == 0)
	},
	func(b *Builder) *graph.Node {
		x, y, z := b.pick(), b.pick(), b.pick()
		return ops.MatMulAdd(x, y, z, b.in.IntN(2) == 0, b.in.IntN(2) == 0)
	},
	func(b *Builder) *graph.Node { x := b.pick(); return ops.Transpose(x, b.perm(x)...) },
	func(b *Builder) *graph.Node { x := b.pick(); return ops.Reshape(x, b.reshapeTarget(x)...) },
	func(b *Builder) *graph.Node { x := b.pick(); return ops.BroadcastTo(x, b.broadcastTarget(x)...) },
	func(b *Builder) *graph.Node { x := b.pick(); return ops.SumTo(x, b.shape()...) },
	func(b *Builder) *graph.Node {
		x := b.pick()
		return ops.Concat(b.axis(x), x, b.pick())
	},
	func(b *Builder) *graph.Node {
		x := b.pick()
		return ops.Slice(x, b.axis(x), b.size(1), b.size(3))
	},
	func(b *Builder) *graph.Node { x := b.pick(); return ops.Pad(x, b.axis(x), b.size(2), b.size(2)) },
	func(b *Builder) *graph.Node { x := b.pick(); return ops.OneHot(x, b.size(4), x.DType()) },
	func(b *Builder) *graph.Node { return ops.ScatterAdd(b.pick(), b.pick(), b.size(4)) },
	func(b *Builder) *graph.Node {
		o := ops.ConvOptions{Stride: []int{1 + b.in.IntN(2)}, Padding: []int{b.size(1)}}
		switch b.in.IntN(3) {
		case 0:
			return ops.Conv1D(b.pick(), b.pick(), o)
		case 1:
			return ops.Conv2D(b.pick(), b.pick(), o)
		}
		return ops.ConvTranspose2D(b.pick(), b.pick(), o)
	},
}

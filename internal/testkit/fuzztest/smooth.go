package fuzztest

import (
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// BuildSmooth decodes ops that are smooth everywhere (sines, tanh,
// softplus, softmax, products; logs and square roots only of 1+x²) and
// grow at most linearly (products and powers take a tanh), so that finite
// differences of any decoded function are accurate. Binary
// ops pair a node with one of the same shape, or with a scalar.
func (b *Builder) BuildSmooth() *graph.Node {
	for i := 0; i < b.mode.MaxOps && !b.in.Done(); i++ {
		x := b.pick()
		b.Nodes = append(b.Nodes, smooth[b.in.IntN(len(smooth))](b, x))
	}
	return b.Nodes[len(b.Nodes)-1]
}

// partner is a node of x's shape (x itself if no other), or a scalar.
func (b *Builder) partner(x *graph.Node) *graph.Node {
	var same []*graph.Node
	for _, n := range b.Nodes {
		if slices.Equal(n.Shape(), x.Shape()) || len(n.Shape()) == 0 {
			same = append(same, n)
		}
	}
	return same[b.in.IntN(len(same))]
}

func onePlusSquare(x *graph.Node) *graph.Node {
	return ops.Add(ops.Square(x), x.Graph().Scalar(1, x.DType()))
}

var smooth = []func(b *Builder, x *graph.Node) *graph.Node{
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.Sin(x) },
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.Cos(x) },
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.Tanh(x) },
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.Sigmoid(x) },
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.Softplus(x) },
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.Square(ops.Tanh(x)) },
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.Exp(ops.Tanh(x)) },
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.Log(onePlusSquare(x)) },
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.Log1p(ops.Square(x)) },
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.Sqrt(onePlusSquare(x)) },
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.PowConst(ops.Tanh(x), 3) },
	func(b *Builder, x *graph.Node) *graph.Node { return ops.Scale(x, float64(b.in.Signed(2))/2) },
	func(b *Builder, x *graph.Node) *graph.Node { return ops.Add(x, b.partner(x)) },
	func(b *Builder, x *graph.Node) *graph.Node { return ops.Sub(x, b.partner(x)) },
	func(b *Builder, x *graph.Node) *graph.Node { return ops.Mul(x, ops.Tanh(b.partner(x))) },
	func(b *Builder, x *graph.Node) *graph.Node { return ops.Div(x, onePlusSquare(b.partner(x))) },
	func(b *Builder, x *graph.Node) *graph.Node {
		return ops.Pow(onePlusSquare(ops.Tanh(x)), ops.Tanh(b.partner(x)))
	},
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.Sum(x) },
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.Mean(x) },
	func(_ *Builder, x *graph.Node) *graph.Node { return ops.LogSumExp(x) },
	func(_ *Builder, x *graph.Node) *graph.Node { return lastAxis(ops.Softmax, x) },
	func(_ *Builder, x *graph.Node) *graph.Node { return lastAxis(ops.LogSoftmax, x) },
	func(_ *Builder, x *graph.Node) *graph.Node {
		if len(x.Shape()) != 2 {
			return ops.Tanh(x)
		}
		t := ops.Tanh(x)
		return ops.MatMul(t, ops.Transpose(t, 1, 0))
	},
}

// lastAxis applies f along x's last axis (a scalar's softmax is taken as
// its sine's, to stay defined).
func lastAxis(f func(*graph.Node, int) *graph.Node, x *graph.Node) *graph.Node {
	if len(x.Shape()) == 0 {
		return ops.Sin(x)
	}
	return f(x, -1)
}

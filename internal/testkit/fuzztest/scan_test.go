package fuzztest

import (
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// FuzzScan checks the first and second derivatives of Scans whose bodies
// are random functions of smooth ops of the carry, the step's slice and a
// captured value, against finite differences, and their forward mode
// against reverse mode.
func FuzzScan(f *testing.F) {
	for _, seed := range [][]byte{
		{1, 2, 0, 1, 12, 0, 5, 1, 20},
		{2, 1, 1, 0, 16, 1, 2, 2, 21, 0, 17},
		{0, 3, 1, 2, 22, 0, 14, 1, 10, 2, 18},
		{1, 0, 0, 3, 7, 1, 19, 0, 6},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := NewBytes(data)
		steps := in.IntN(4)
		shape := in.Shape(3, 2)
		reverse := in.IntN(2) == 1
		rng := NewBuilder(NewBytes(data), Mode{}, graph.New()).Rand()
		seqShape := append([]int{steps}, shape...)
		inputs := []*tensor.Dense{
			Values(rng, graph.TypeOf(graph.Float64, shape...)),    // initial carry
			Values(rng, graph.TypeOf(graph.Float64, seqShape...)), // sequence
			Values(rng, graph.TypeOf(graph.Float64, shape...)),    // captured
		}
		rest := data[min(in.pos, len(data)):]
		fn := func(x []*graph.Node) *graph.Node {
			var opts []ops.ScanOption
			if reverse {
				opts = append(opts, ops.Reverse())
			}
			final, ys := ops.Scan(func(c, s []*graph.Node) ([]*graph.Node, []*graph.Node) {
				b := NewBuilder(NewBytes(rest), Mode{MaxOps: 4}, c[0].Graph(), c[0], s[0], x[2])
				y := b.BuildSmooth()
				next := ops.Tanh(ops.Add(c[0], ops.Scale(ops.Sum(y), 0.3)))
				if slices.Equal(y.Shape(), c[0].Shape()) {
					next = ops.Tanh(y)
				}
				return []*graph.Node{next}, []*graph.Node{ops.Mul(next, s[0])}
			}, []*graph.Node{x[0]}, []*graph.Node{x[1]}, opts...)
			return ops.Add(ops.Sum(final[0]), ops.Sum(ops.Sin(ys[0])))
		}
		opts := gradcheck.Options{Seed: 1}
		if err := gradcheck.Check(fn, inputs, opts); err != nil {
			fail(t, "first derivatives", err)
		}
		if err := gradcheck.GradGradCheck(fn, inputs, opts); err != nil {
			fail(t, "second derivatives", err)
		}
		forwardAgrees(t, fn, inputs)
	})
}

// forwardAgrees checks the forward mode of the scalar fn at inputs (a
// Scan's forward rule, batched): for each input, the forward-mode
// Jacobian equals the reverse-mode one, and the Hessian (forward over
// reverse) the reverse-mode Jacobian of the gradient.
func forwardAgrees(t *testing.T, fn func([]*graph.Node) *graph.Node, inputs []*tensor.Dense) {
	t.Helper()
	g := graph.New()
	xs := make([]*graph.Node, len(inputs))
	feeds := vm.Feeds{}
	for i, v := range inputs {
		xs[i] = g.Input("x"+itoa(i), v.Dtype(), v.Shape()...)
		feeds[xs[i]] = v
	}
	y := fn(xs)
	var outs []*graph.Node
	for _, x := range xs {
		if x.Type().Size() == 0 {
			continue
		}
		gr, err := compile.GradWith(y, []*graph.Node{x}, compile.ZerosIfDisconnected())
		if err != nil {
			t.Fatalf("Grad: %v", err)
		}
		outs = append(outs,
			mustNode(t)(compile.JacobianWith(y, x, compile.Forward)),
			mustNode(t)(compile.JacobianWith(y, x, compile.Reverse)),
			mustNode(t)(compile.JacobianWith(gr[0], x, compile.Forward)),
			mustNode(t)(compile.JacobianWith(gr[0], x, compile.Reverse)))
	}
	p, err := compile.Compile(outs)
	if err != nil {
		t.Fatalf("compiling forward-mode derivatives: %v", err)
	}
	m, err := vm.New(p, vm.WithThreads(1))
	if err != nil {
		t.Fatalf("vm.New: %v", err)
	}
	if err := m.Run(feeds); err != nil {
		t.Fatalf("running forward-mode derivatives: %v", err)
	}
	val := func(n *graph.Node) []float64 {
		v, err := m.Value(n)
		if err != nil {
			t.Fatalf("Value: %v", err)
		}
		return v.Float64s()
	}
	for k := 0; k < len(outs); k += 4 {
		agree(t, "forward-mode vs reverse-mode Jacobian", val(outs[k]), val(outs[k+1]))
		agree(t, "forward-over-reverse vs reverse-over-reverse Hessian", val(outs[k+2]), val(outs[k+3]))
	}
}

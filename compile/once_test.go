package compile_test

import (
	"errors"
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// kernelMul is x·y elementwise with a numeric backward kernel. It records
// which gradients its kernel was asked for, and fails when fail is set.
type kernelMul struct {
	asked *[2]bool
	fail  bool
}

func (kernelMul) Name() string { return "KernelMul" }

func (kernelMul) Type(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 2); err != nil {
		return graph.Type{}, err
	}
	return in[0], nil
}

func (kernelMul) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	for i := range out.Float64s() {
		out.Float64s()[i] = in[0].Float64s()[i] * in[1].Float64s()[i]
	}
	return nil
}

// Gradient: d(xy)/dx = y, d(xy)/dy = x.
func (k kernelMul) Gradient(grads []*tensor.Dense, g *tensor.Dense, in []*tensor.Dense, _ *tensor.Dense) error {
	if k.fail {
		return errors.New("kernel refused")
	}
	for i, d := range grads {
		k.asked[i] = d != nil
		if d == nil {
			continue
		}
		other := in[1-i].Float64s()
		for j := range d.Float64s() {
			d.Float64s()[j] = g.Float64s()[j] * other[j]
		}
	}
	return nil
}

// TestOnceDifferentiable: the first derivative of an op with a backward
// kernel comes from one node computing just the gradients needed; the
// second derivative is an error naming the op.
func TestOnceDifferentiable(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	y := g.Const(fdtest.TensorOf(t, x.Type(), 2, -1, 0.5))
	var asked [2]bool
	f := ops.Sum(ops.Sin(graph.Apply(kernelMul{asked: &asked}, ops.Square(x), y)))
	d, err := compile.Grad(f, x)
	require.NoError(t, err)
	x0 := []float64{0.3, -0.7, 1.1}
	fdtest.RequireClose(t, fdtest.NumericGrad(t, f, x, x0), fdtest.Evaluate(t, d, x, x0)[0], 1e-7, "first derivative")
	require.Equal(t, [2]bool{true, false}, asked, "the constant y needs no gradient")

	p, err := compile.Compile(d)
	require.NoError(t, err)
	kernels := 0
	for _, in := range p.Instructions() {
		if in.Multi != nil && in.Name() == "KernelMulGradient" {
			kernels++
			require.Len(t, in.Out, 1, "one output: x's gradient only")
		}
	}
	require.Equal(t, 1, kernels)

	// Both gradients: one node, two outputs.
	w := g.Input("w", graph.Float64, 3)
	h := ops.Sum(graph.Apply(kernelMul{asked: &asked}, x, w))
	both, err := compile.Grad(h, x, w)
	require.NoError(t, err)
	require.Equal(t, both[0].Outputs(), both[1].Outputs(), "one node computes both")
	p, err = compile.Compile(both)
	require.NoError(t, err)
	m, err := vm.New(p)
	require.NoError(t, err)
	xv, wv := fdtest.TensorOf(t, x.Type(), 1, 2, 3), fdtest.TensorOf(t, x.Type(), 4, 5, 6)
	require.NoError(t, m.Run(vm.Feeds{x: xv, w: wv}))
	gx, _ := m.Value(both[0])
	gw, _ := m.Value(both[1])
	require.Equal(t, []float64{4, 5, 6}, gx.Float64s(), "d/dx sum(x·w) = w")
	require.Equal(t, []float64{1, 2, 3}, gw.Float64s(), "d/dw sum(x·w) = x")
	require.Equal(t, [2]bool{true, true}, asked)
	require.Zero(t, testing.AllocsPerRun(20, func() { _ = m.Run(vm.Feeds{x: xv, w: wv}) }), "running the kernel allocates nothing")

	for _, second := range []func() error{
		func() error { _, err := compile.Grad(ops.Sum(d[0]), x); return err },
		func() error { _, err := compile.Hessian(f, x); return err },
		func() error { _, err := compile.Grad(ops.Sum(both[0]), w); return err }, // through gradOut
	} {
		err := second()
		require.ErrorContains(t, err, "op KernelMul is once-differentiable: it has a numeric backward kernel and no symbolic Backward; give it a Backward to differentiate twice")
		require.ErrorContains(t, err, "once_test.go:", "the error names the caller's line")
	}
}

func TestOnceKernelErrorNamesTheNode(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	d, err := compile.Grad(ops.Sum(graph.Apply(kernelMul{fail: true}, x, x)), x)
	require.NoError(t, err)
	p, err := compile.Compile(d)
	require.NoError(t, err)
	m, err := vm.New(p)
	require.NoError(t, err)
	err = m.Run(vm.Feeds{x: fdtest.TensorOf(t, x.Type(), 1, 2)})
	require.ErrorContains(t, err, "KernelMulGradient")
	require.ErrorContains(t, err, "kernel refused")
}

// TestOnceGradientMemoryPlan: the kernel node is a multi-output
// instruction; the memory plan must count it as running where it sits, so
// that a slot freed before it can hold its output (the invariant checker
// verifies the plan).
func TestOnceGradientMemoryPlan(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := g.Const(fdtest.TensorOf(t, x.Type(), 2, -1))
	f := ops.Sum(ops.Mul(ops.Tanh(graph.Apply(kernelMul{asked: new([2]bool)}, ops.Square(x), y)), x))
	d, err := compile.Grad(f, x)
	require.NoError(t, err)
	x0 := []float64{0.3, -0.7}
	fdtest.RequireClose(t, fdtest.NumericGrad(t, f, x, x0), fdtest.Evaluate(t, d, x, x0)[0], 1e-7, "first derivative")
}

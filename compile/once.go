package compile

import (
	"fmt"
	"slices"
	"sync"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// onceGradients differentiates an op that has a numeric backward kernel: one
// multi-output node over (inputs..., output, gradOut) computes, with the
// kernel, the gradients of the inputs that need one.
func onceGradients(n *graph.Node, gradOut *graph.Node, needs []bool) ([]*graph.Node, error) {
	grads := make([]*graph.Node, len(n.Inputs()))
	mask := make([]byte, len(needs))
	some := false
	for i, need := range needs {
		mask[i] = '0'
		if need {
			mask[i], some = '1', true
		}
	}
	if !some {
		return grads, nil
	}
	ins := append(append(slices.Clip(n.Inputs()), n), gradOut)
	outs := graph.ApplyMulti(onceOp{op: n.Op(), needs: string(mask)}, ins...)
	if err := outs[0].Err(); err != nil {
		return nil, err
	}
	k := 0
	for i, need := range needs {
		if need {
			grads[i], k = outs[k], k+1
		}
	}
	return grads, nil
}

// onceOp computes the gradients of the user's op op with its
// BackwardKernel. Its inputs are the op's inputs, its output and the
// output's gradient; its outputs are the gradients of the inputs i with
// needs[i] == '1', in order. needs is a string so that onceOp stays
// comparable: gradients of equal ops on equal values merge.
type onceOp struct {
	op    graph.Op
	needs string
}

func (o onceOp) Name() string { return o.op.Name() + "Gradient" }

// Types are those of the inputs that need a gradient.
func (o onceOp) Types(in []graph.Type) ([]graph.Type, error) {
	if len(in) != len(o.needs)+2 {
		return nil, fmt.Errorf("takes %d inputs, got %d", len(o.needs)+2, len(in))
	}
	var out []graph.Type
	for i, t := range in[:len(o.needs)] {
		if o.needs[i] == '1' {
			out = append(out, t)
		}
	}
	return out, nil
}

// gradBuffers lends Forward the slice it hands the kernel, so that running
// it allocates nothing.
var gradBuffers = sync.Pool{New: func() any { return new([]*tensor.Dense) }}

// Forward calls the kernel with nil for the inputs needing no gradient.
func (o onceOp) Forward(out []*tensor.Dense, in []*tensor.Dense) error {
	n := len(o.needs)
	buf := gradBuffers.Get().(*[]*tensor.Dense)
	if cap(*buf) < n {
		*buf = make([]*tensor.Dense, n)
	}
	grads := (*buf)[:n]
	defer func() {
		clear(grads) // the pool must not keep the machine's buffers alive
		gradBuffers.Put(buf)
	}()
	for i, k := 0, 0; i < n; i++ {
		if o.needs[i] == '1' {
			grads[i], k = out[k], k+1
		}
	}
	return o.op.(graph.BackwardKernel).Gradient(grads, in[n+1], in[:n], in[n])
}

// Backward refuses: a numeric kernel cannot be differentiated again.
func (o onceOp) Backward(ctx *graph.GradContext, _ []*graph.Node) []*graph.Node {
	ctx.Errorf("op %s is once-differentiable: it has a numeric backward kernel and no symbolic Backward; give it a Backward to differentiate twice", o.op.Name())
	return make([]*graph.Node, len(ctx.Inputs()))
}

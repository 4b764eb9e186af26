package compile

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// PerExampleGradients returns, for each parameter, the gradient of each
// example's loss with respect to it, stacked on a new leading axis of the
// batch's size: result[k] has shape (B, params[k].shape...), its row b the
// gradient of loss(example b). loss builds one example's scalar loss from
// its rows of the batch tensors, each given with a leading axis of 1 (so a
// model written for batches takes it as it is); it may read the params
// and any other node of the graph.
//
// The gradients are the example's gradient batched over the examples by
// Vmap (DP-SGD's clipping per example, influence functions): one program
// whose matrix–vector products are matrix products over the batch, which
// can be differentiated again. They equal the gradients of B separate
// runs to rounding (a one-example product of a row by a matrix is a
// matrix–vector product, which may sum in another order than the
// batch's matrix product). The program holds every example's
// intermediate values at once, as a batch's gradient does. A result
// bigger than
// graph.MemoryLimit (B times a parameter's size) is an error.
func PerExampleGradients(loss func(example []*graph.Node) *graph.Node, batch, params []*graph.Node) ([]*graph.Node, error) {
	fail := failer("PerExampleGradients", graph.CallerSite())
	if loss == nil || len(batch) == 0 || len(params) == 0 {
		return nil, fail("need a loss, batch tensors and parameters")
	}
	for i, n := range append(append([]*graph.Node(nil), batch...), params...) {
		what, k := "batch", i
		if i >= len(batch) {
			what, k = "params", i-len(batch)
		}
		if n == nil {
			return nil, fail("%s %d is nil", what, k)
		}
		if err := n.Err(); err != nil {
			return nil, err
		}
	}
	for _, p := range params {
		if !graph.IsFloat(p.DType()) {
			return nil, fail("cannot differentiate with respect to %v: it is not float", p)
		}
	}
	if b := batch[0]; b.Type().Rank() > 0 {
		// One gradient per example and parameter.
		for _, p := range params {
			what := fmt.Sprintf("the gradients of %v for %d examples", p, b.Shape()[0])
			if err := checkRank(fail, what, joinShapes(b.Shape()[:1], p.Shape())); err != nil {
				return nil, err
			}
			if err := checkBytes(fail, what, p.DType(), joinShapes(b.Shape()[:1], p.Shape()), "give fewer examples at a time"); err != nil {
				return nil, err
			}
		}
	}
	var bodyErr error
	grads, err := vmap(fail, func(rows []*graph.Node) []*graph.Node {
		sub := rows[0].Graph()
		example := make([]*graph.Node, len(rows))
		for i, r := range rows {
			example[i] = ops.Reshape(r, append([]int{1}, r.Shape()...)...)
		}
		l := loss(example)
		if l == nil || l.Err() != nil || !l.Type().IsScalar() {
			bodyErr = fail("the loss of one example must be a scalar node, not %v", l)
			return nil
		}
		wrt := make([]*graph.Node, len(params))
		for k, p := range params {
			wrt[k] = sub.Capture(p)
		}
		grads, err := grad("PerExampleGradients", []*graph.Node{l}, nil, wrt, []GradOption{ZerosIfDisconnected()})
		if err != nil {
			bodyErr = err
			return nil
		}
		return grads
	}, batch, nil, nil)
	if bodyErr != nil {
		return nil, bodyErr
	}
	return grads, err
}

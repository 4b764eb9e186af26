package compile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// GradOption configures Grad and Gradients.
type GradOption func(*gradConfig)

type gradConfig struct {
	zerosIfDisconnected bool
}

// ZerosIfDisconnected makes the gradient of an input with no path from the
// outputs zeros, instead of an error: a constant, or a scalar zero
// broadcast to the input's shape where a constant would exceed
// graph.MemoryLimit.
func ZerosIfDisconnected() GradOption {
	return func(c *gradConfig) { c.zerosIfDisconnected = true }
}

// Grad returns the gradients of the scalar y with respect to each node of
// wrt (inputs, parameters or intermediate nodes), as new nodes appended to
// y's graph. They are ordinary nodes: compile them, or differentiate them
// again for higher derivatives.
func Grad(y *graph.Node, wrt ...*graph.Node) ([]*graph.Node, error) {
	return grad("Grad", []*graph.Node{y}, nil, wrt, nil)
}

// GradWith is Grad with options.
func GradWith(y *graph.Node, wrt []*graph.Node, opts ...GradOption) ([]*graph.Node, error) {
	return grad("Grad", []*graph.Node{y}, nil, wrt, opts)
}

// Gradients returns vector–Jacobian products: the gradient with respect to
// each node of wrt of sum_i <seeds[i], ys[i]>. seeds[i] must have ys[i]'s
// type; a nil seed stands for 1 and is allowed for a scalar ys[i] only.
func Gradients(ys, seeds, wrt []*graph.Node, opts ...GradOption) ([]*graph.Node, error) {
	return grad("Gradients", ys, seeds, wrt, opts)
}

// grad is reverse-mode differentiation. It walks the graph backwards from
// ys, keeping each node's gradient contributions in a table local to this
// call (never on the nodes, so earlier gradients cannot leak into later
// ones), sums them, and calls each op's symbolic Backward, which appends
// nodes to the graph.
func grad(caller string, ys, seeds, wrt []*graph.Node, opts []GradOption) (result []*graph.Node, err error) {
	var cfg gradConfig
	for _, o := range opts {
		if o != nil { // a nil option is no option, as vm.New's
			o(&cfg)
		}
	}
	fail := failer(caller, graph.CallerSite())
	g, err := checkGradRequest(ys, seeds, wrt, fail)
	if err != nil {
		return nil, err
	}
	if err := checkGradDTypes(ys, wrt, fail); err != nil {
		return nil, err
	}
	if seeds == nil {
		seeds = make([]*graph.Node, len(ys))
	}
	for i, y := range ys {
		if seeds[i] == nil {
			if !y.Type().IsScalar() {
				return nil, fail("%s", notScalar(caller, i, y))
			}
		} else if !seeds[i].Type().Equal(y.Type()) {
			return nil, fail("seed %d has type %v, want %v", i, seeds[i].Type(), y.Type())
		}
	}
	defer recordGradient(g, g.Len(), ys, seeds, wrt, &result, &err, func(ys, seeds, wrt []*graph.Node) ([]*graph.Node, error) {
		return grad(caller, ys, seeds, wrt, opts)
	})
	defer g.Scope(gradScopeName(wrt))()
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, fail("differentiation panicked: %v", r)
		}
	}()

	nodes, feeds := ancestry(g, ys, nil)
	// A node needs a gradient when it depends on some wrt node and some
	// output depends on it.
	needs := g.Descendants(wrt, len(nodes)-1)

	contribs := map[*graph.Node][]*graph.Node{}
	for i, y := range ys {
		s := seeds[i]
		if s == nil {
			s = g.Scalar(1, y.DType())
		}
		contribs[y] = append(contribs[y], s)
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		if n.Kind() != graph.KindOp {
			continue
		}
		outs := n.Outputs()
		if outs[0] != n {
			continue // a later output of a multi-output op: done with the first
		}
		if !needs[i] || !slices.ContainsFunc(outs, func(o *graph.Node) bool { return o.ID() < len(feeds) && feeds[o.ID()] }) {
			continue // no output leads to ys
		}
		gradOuts := make([]*graph.Node, len(outs))
		reached := false
		for k, o := range outs {
			gradOuts[k] = sum(contribs[o])
			reached = reached || gradOuts[k] != nil
		}
		if !reached {
			continue
		}
		inNeeds := make([]bool, len(n.Inputs()))
		for k, in := range n.Inputs() {
			inNeeds[k] = needs[in.ID()] && feeds[in.ID()] && flowsInto(in)
		}
		grads, err := backward(n, gradOuts, inNeeds)
		if err != nil {
			return nil, fail("%w", err)
		}
		for k, in := range n.Inputs() {
			if grads[k] == nil || !inNeeds[k] {
				continue
			}
			gk, err := fitGradient(n, k, grads[k])
			var built *graph.Error
			switch {
			case errors.As(err, &built):
				// A node the gradient was built from failed: say which op's
				// Backward built it, without a second prefix and site.
				return nil, fail("Backward of %s: %s: %v", n.BuilderName(), built.Op, built.Err)
			case err != nil:
				return nil, fail("%v", err)
			}
			contribs[in] = append(contribs[in], gk)
		}
		if err := g.Err(); err != nil {
			return nil, err
		}
	}

	result = make([]*graph.Node, len(wrt))
	for i, x := range wrt {
		result[i] = sum(contribs[x])
		if result[i] != nil {
			continue
		}
		if !cfg.zerosIfDisconnected {
			return nil, fail("%v has no gradient: no path from the output reaches it (use ZerosIfDisconnected for zeros)", x)
		}
		result[i] = zeros(g, x.Type())
	}
	return result, g.Err()
}

// ancestry returns g's nodes up to the last of ys, in creation order, and
// marks, by ID, those some node of ys depends on (ys included), through
// the inputs that cut, when given, does not cut off (cut(n, i): input i
// of n).
func ancestry(g *graph.Graph, ys []*graph.Node, cut func(n *graph.Node, i int) bool) (nodes []*graph.Node, feeds []bool) {
	last := 0
	for _, y := range ys {
		last = max(last, y.ID())
	}
	nodes = g.Nodes()[:last+1]
	feeds = make([]bool, len(nodes))
	for _, y := range ys {
		feeds[y.ID()] = true
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if feeds[i] {
			for k, in := range nodes[i].Inputs() {
				feeds[in.ID()] = feeds[in.ID()] || cut == nil || !cut(nodes[i], k)
			}
		}
	}
	return nodes, feeds
}

func checkGradRequest(ys, seeds, wrt []*graph.Node, fail func(string, ...any) error) (*graph.Graph, error) {
	if len(ys) == 0 {
		return nil, fail("no outputs to differentiate")
	}
	if seeds != nil && len(seeds) != len(ys) {
		return nil, fail("%d seeds for %d outputs", len(seeds), len(ys))
	}
	var g *graph.Graph
	all := append(append(append([]*graph.Node(nil), ys...), wrt...), seeds...)
	for i, n := range all {
		if i >= len(ys)+len(wrt) && n == nil {
			continue // a nil seed
		}
		if n == nil {
			return nil, fail("nil node")
		}
		if err := n.Err(); err != nil {
			return nil, err
		}
		if g == nil {
			g = n.Graph()
		}
		if n.Graph() != g {
			return nil, fail("%v belongs to another graph", n)
		}
	}
	return g, g.Err()
}

// Backward calls the symbolic gradient rule of node n's op — Backward,
// a multi-output op's Backward, or the gradient node of a once-differentiable
// op's BackwardKernel — with the output gradients gradOuts (one per output
// of n's op; nil where an output has none) and needs[i] telling whether
// input i needs a gradient. It returns one gradient per input, turning a
// panic, a ctx.Errorf or a wrong count into an error naming the op.
// Differentiation calls it for every op; gradcheck calls it to check one.
// A nil or leaf n, or gradOuts and needs that do not fit n (their counts,
// an output gradient of another type or graph) are an error naming
// Backward and the caller's line. With no output gradient (every one nil)
// no gradient flows back: every input's is nil, and nothing is built, as
// differentiation does for an op no gradient reaches.
func Backward(n *graph.Node, gradOuts []*graph.Node, needs []bool) (grads []*graph.Node, err error) {
	fail := failer("Backward", graph.CallerSite())
	switch {
	case n == nil:
		return nil, fail("the node is nil")
	case n.Err() != nil:
		return nil, n.Err()
	case n.Kind() != graph.KindOp:
		return nil, fail("%v is not an op's node: it has no gradient rule", n)
	case len(needs) != len(n.Inputs()):
		return nil, fail("%d needs for the %d inputs of %v", len(needs), len(n.Inputs()), n)
	case len(gradOuts) != len(n.Outputs()):
		return nil, fail("%d output gradients for the %d outputs of %v", len(gradOuts), len(n.Outputs()), n)
	}
	reached := false
	for k, gk := range gradOuts {
		switch out := n.Outputs()[k]; {
		case gk == nil: // no gradient for that output
		case gk.Err() != nil:
			return nil, gk.Err()
		case gk.Graph() != n.Graph():
			return nil, fail("output gradient %d, %v, belongs to another graph than %v", k, gk, n)
		case !gk.Type().Equal(out.Type()):
			return nil, fail("output gradient %d has type %v, want output %d's %v", k, gk.Type(), k, out.Type())
		}
		reached = reached || gk != nil
	}
	if !reached {
		return make([]*graph.Node, len(n.Inputs())), nil
	}
	return backward(n, gradOuts, needs)
}

// backward is Backward for arguments known to fit n, as differentiation
// gives them.
func backward(n *graph.Node, gradOuts []*graph.Node, needs []bool) (grads []*graph.Node, err error) {
	ctx := graph.NewGradContext(n, needs).WithDifferentiator(differentiate)
	defer func() {
		if r := recover(); r != nil {
			grads, err = nil, fmt.Errorf("Backward of %s panicked: %v", n.BuilderName(), r)
		}
	}()
	switch op := n.Op().(type) {
	case graph.Differentiable:
		grads = op.Backward(ctx, gradOuts[0])
	case graph.BackwardKernel:
		return onceGradients(n, gradOuts[0], needs)
	case nil:
		multi, _ := n.MultiOp()
		d, ok := multi.(graph.MultiDifferentiable)
		if !ok {
			return nil, fmt.Errorf("op %s is not differentiable: it has no Backward", n.OpName())
		}
		grads = d.Backward(ctx, gradOuts)
	default:
		return nil, fmt.Errorf("op %s is not differentiable: it has no Backward", n.OpName())
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("Backward of %s: %w", n.BuilderName(), err)
	}
	if len(grads) != len(n.Inputs()) {
		return nil, fmt.Errorf("Backward of %s returned %d gradients for %d inputs: it must return one per input, nil for an input without one", n.BuilderName(), len(grads), len(n.Inputs()))
	}
	return grads, nil
}

// differentiate is the graph.Differentiator lent to ops' Backward.
func differentiate(ys, seeds, wrt []*graph.Node) ([]*graph.Node, error) {
	return grad("Gradients", ys, seeds, wrt, []GradOption{ZerosIfDisconnected()})
}

// fitGradient brings the gradient an op returned for input k to the
// input's shape, summing away axes the op broadcast.
func fitGradient(n *graph.Node, k int, gk *graph.Node) (*graph.Node, error) {
	in := n.Inputs()[k]
	if err := gk.Err(); err != nil {
		return nil, err
	}
	if gk.Graph() != n.Graph() {
		return nil, fmt.Errorf("Backward of %s returned a gradient for input %d (%v) built in another graph: build it with ctx.Graph()", n.BuilderName(), k, gk)
	}
	if gk.DType() != in.DType() {
		return nil, fmt.Errorf("Backward of %s returned a %v gradient for input %d of type %v", n.BuilderName(), gk.Type(), k, in.Type())
	}
	if gk.Type().Equal(in.Type()) {
		return gk, nil
	}
	if b, err := graph.BroadcastShapes(in.Shape(), gk.Shape()); err != nil || !graph.TypeOf(in.DType(), b...).Equal(gk.Type()) {
		return nil, fmt.Errorf("Backward of %s returned a %v gradient for input %d of type %v", n.BuilderName(), gk.Type(), k, in.Type())
	}
	return ops.SumTo(gk, in.Shape()...), nil
}

// sum adds gradient contributions; nil when there are none. Those of
// disjoint slices of one value are joined rather than padded and added
// (see ops.JoinPads).
func sum(xs []*graph.Node) *graph.Node {
	if len(xs) == 0 {
		return nil
	}
	if s, ok := ops.JoinPads(xs); ok {
		return s
	}
	s := xs[0]
	for _, x := range xs[1:] {
		s = ops.Add(s, x)
	}
	return s
}

// recordGradient records on g, once grad has returned them without error,
// the gradients it built from node start on, so that graph.Replay derives
// them again with derive where it replays the nodes they are gradients of
// (see graph.Graph.RecordGradient). It runs after the gradients' scope is
// closed: a gradient derived again is built in the scope grad was called in.
func recordGradient(g *graph.Graph, start int, ys, seeds, wrt []*graph.Node, result *[]*graph.Node, err *error, derive graph.Differentiator) {
	if *err != nil {
		return
	}
	built := make([]*graph.Node, len(*result))
	for i, r := range *result {
		if r.ID() >= start {
			built[i] = r
		}
	}
	g.RecordGradient(ys, seeds, wrt, built, derive)
}

// gradScopeName names the scope gradient nodes are built in, for DOT.
func gradScopeName(wrt []*graph.Node) string {
	names := make([]string, len(wrt))
	for i, x := range wrt {
		names[i] = x.Name()
		if names[i] == "" {
			names[i] = fmt.Sprintf("%s#%d", x.OpName(), x.ID())
		}
	}
	return graph.GradientScopePrefix + "w.r.t. " + strings.Join(names, ", ")
}

package compile

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// tangentSweep is forward-mode differentiation: one sweep in creation order
// over the nodes between xs and ys, giving each a tangent (nil for zero)
// from its inputs' tangents, by its op's forward rule
// (graph.ForwardDifferentiable) where it has one, and by transposing its
// Backward where it does not (or where the rule declines).
//
// With batch > 0 every tangent carries a leading axis of batch directions
// (tangents[j] has shape (batch, xs[j].shape...)), so that one sweep
// computes batch Jacobian–vector products as batched tensor operations:
// the columns of a Jacobian, or of a Hessian, at once.
type tangentSweep struct {
	caller string
	batch  int
	site   string
	tan    map[*graph.Node]*graph.Node
}

// transposeEveryOp makes the sweep ignore forward rules, for tests and
// benchmarks comparing the two derivations; onDecline, when set, hears of
// every rule that declines.
var (
	transposeEveryOp bool
	onDecline        func(n *graph.Node)
)

// forwardSweep returns the tangents of ys (zeros for those that do not
// depend on xs), given those of xs.
func forwardSweep(caller string, ys, xs, tangents []*graph.Node, batch int) (result []*graph.Node, err error) {
	f := &tangentSweep{caller: caller, batch: batch, site: graph.CallerSite(), tan: map[*graph.Node]*graph.Node{}}
	g := ys[0].Graph()
	defer g.Scope("jvp")()
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, f.fail("forward-mode differentiation panicked: %v", r)
		}
	}()
	nodes, feeds := ancestry(g, ys, tangentFree)
	last := len(nodes) - 1
	depends := g.Descendants(xs, last)
	given := map[*graph.Node]*graph.Node{}
	for j, x := range xs {
		given[x] = addNonNil(given[x], tangents[j])
	}
	// A batch of tangents adds a leading axis to each value on the path:
	// one already at the rank limit cannot carry it.
	if batch > 0 {
		for i, n := range nodes {
			if (depends[i] && feeds[i] || slices.Contains(ys, n)) && n.Type().Rank() >= graph.MaxRank {
				return nil, f.fail("a batch of %d tangents of %v would have rank %d, above the supported %d", batch, n, n.Type().Rank()+1, graph.MaxRank)
			}
		}
	}
	feedsAny := func(outs []*graph.Node) bool {
		return slices.ContainsFunc(outs, func(o *graph.Node) bool { return o.ID() <= last && feeds[o.ID()] })
	}
	for i, n := range nodes {
		if !depends[i] {
			continue
		}
		// A multi-output op is differentiated once, at its first output,
		// when any of its outputs leads to ys.
		if n.Kind() == graph.KindOp && n.Outputs()[0] == n && feedsAny(n.Outputs()) {
			if err := f.node(n); err != nil {
				return nil, err
			}
		}
		if t, ok := given[n]; ok && feeds[i] {
			f.tan[n] = addNonNil(f.tan[n], t)
		}
	}
	result = make([]*graph.Node, len(ys))
	for i, y := range ys {
		if result[i] = f.tan[y]; result[i] == nil {
			result[i] = zeros(g, graph.TypeOf(y.DType(), f.shape(y)...))
		}
	}
	return result, g.Err()
}

func (f *tangentSweep) fail(format string, args ...any) error {
	return &graph.Error{Op: f.caller, Err: fmt.Errorf(format, args...), Site: f.site}
}

// sweeper is the graph.ForwardSweeper lent to rules: a nested sweep with
// the same batch.
func (f *tangentSweep) sweeper() graph.ForwardSweeper {
	return func(ys, xs, tangents []*graph.Node) ([]*graph.Node, error) {
		if len(ys) == 0 {
			return nil, nil
		}
		return forwardSweep(f.caller, ys, xs, tangents, f.batch)
	}
}

// shape is the shape of n's tangent.
func (f *tangentSweep) shape(n *graph.Node) []int {
	if f.batch == 0 {
		return n.Shape()
	}
	return append([]int{f.batch}, n.Shape()...)
}

// node sets the tangents of op node n's outputs.
func (f *tangentSweep) node(n *graph.Node) error {
	ins := n.Inputs()
	ts := make([]*graph.Node, len(ins))
	some := false
	for i, in := range ins {
		if !tangentFree(n, i) {
			ts[i] = f.tan[in]
		}
		some = some || ts[i] != nil
	}
	if !some {
		return nil
	}
	outs := n.Outputs()
	var results []*graph.Node
	ctx := graph.NewJVPContext(n, ts, f.batch).WithSweeper(f.sweeper())
	multi, _ := n.MultiOp()
	switch rule := any(n.Op()).(type) {
	case graph.ForwardDifferentiable:
		if !transposeEveryOp {
			if t := rule.JVP(ctx); !ctx.Declined() {
				results = []*graph.Node{t}
			}
		}
	case nil:
		if rule, ok := multi.(graph.MultiForwardDifferentiable); ok && !transposeEveryOp {
			if res := rule.JVP(ctx); !ctx.Declined() {
				if len(res) != len(outs) {
					return f.fail("forward rule of %s at %s returned %d tangents for %d outputs", n.OpName(), n.Site(), len(res), len(outs))
				}
				results = res
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return f.fail("JVP of %s: %v", n.BuilderName(), err)
	}
	if results == nil && ctx.Declined() && onDecline != nil {
		onDecline(n)
	}
	if results == nil {
		var err error
		if results, err = f.transposed(n, ts); err != nil {
			return err
		}
	}
	for k, o := range outs {
		t, err := f.fit(n, o, results[k])
		if err != nil {
			return err
		}
		f.tan[o] = t
	}
	return nil
}

// tangentFree reports whether n's op ignores input i's tangent
// (graph.TangentFree): forward mode then gives that input none on n's
// account.
func tangentFree(n *graph.Node, i int) bool {
	op, ok := n.Op().(graph.TangentFree)
	return ok && op.TangentFree(i)
}

// fit checks a rule's tangent for output o against the shape it must
// have, broadcasting one that a rule left smaller (the tangent of one
// operand of a broadcasting op, say).
func (f *tangentSweep) fit(n, o, t *graph.Node) (*graph.Node, error) {
	g := n.Graph()
	if err := g.Err(); err != nil {
		return nil, f.fail("forward rule of %s at %s: %v", n.OpName(), n.Site(), err)
	}
	if t == nil {
		return nil, nil
	}
	want := f.shape(o)
	switch {
	case t.Graph() != g:
		return nil, f.fail("forward rule of %s at %s: tangent %v built in another graph: build it with ctx.Graph()", n.OpName(), n.Site(), t)
	case t.DType() != o.DType():
		return nil, f.fail("forward rule of %s at %s: tangent of dtype %v for an output of dtype %v", n.OpName(), n.Site(), t.DType(), o.DType())
	case slices.Equal(t.Shape(), want):
		return t, nil
	}
	// A rule may leave a tangent that broadcasts to the output's (the
	// tangent of one operand of a broadcasting op, say).
	if b, err := graph.BroadcastShapes(t.Shape(), want); err != nil || !slices.Equal(b, want) {
		return nil, f.fail("forward rule of %s at %s: tangent of shape %s for an output whose tangent has shape %s",
			n.OpName(), n.Site(), graph.ShapeString(t.Shape()), graph.ShapeString(want))
	}
	return ops.BroadcastTo(t, want...), nil
}

// transposed builds the tangents of n's outputs from n's Backward, by
// double transposition: a vector–Jacobian product is linear in its seed
// u, so J·t is the gradient with respect to u of ⟨Jᵀu, t⟩. u is a zero
// constant the tangent does not read (compilation removes the
// vector–Jacobian product itself), and only n's Backward lies between the
// two, so nothing around the op enters. Batched tangents are taken one
// direction at a time and stacked.
func (f *tangentSweep) transposed(n *graph.Node, ts []*graph.Node) ([]*graph.Node, error) {
	if f.batch == 0 {
		return f.transposedOnce(n, ts)
	}
	outs := n.Outputs()
	if len(outs) == 1 && outs[0].Type().Size() == 1 {
		return f.scalarOutput(n, ts)
	}
	columns := make([][]*graph.Node, len(outs))
	for d := range f.batch {
		col := make([]*graph.Node, len(ts))
		for i, t := range ts {
			if t != nil {
				col[i] = ops.Reshape(ops.Slice(t, 0, d, d+1), n.Inputs()[i].Shape()...)
			}
		}
		res, err := f.transposedOnce(n, col)
		if err != nil {
			return nil, err
		}
		for k, o := range outs {
			if res[k] == nil {
				res[k] = zeros(n.Graph(), o.Type())
			}
			columns[k] = append(columns[k], ops.Reshape(res[k], append([]int{1}, o.Shape()...)...))
		}
	}
	stacked := make([]*graph.Node, len(outs))
	for k := range outs {
		stacked[k] = ops.Concat(0, columns[k]...)
	}
	return stacked, nil
}

// scalarOutput is the tangents of an op with one scalar output (a loss,
// say) along a batch of directions: ⟨∇op, t⟩ for each, from one Backward
// seeded with 1, since a gradient with respect to a scalar is its
// Jacobian.
func (f *tangentSweep) scalarOutput(n *graph.Node, ts []*graph.Node) ([]*graph.Node, error) {
	g := n.Graph()
	one := graph.NewDenseOf(n.Type())
	graph.SetFloat(one, 0, 1)
	needs := make([]bool, len(ts))
	for i, t := range ts {
		needs[i] = t != nil
	}
	grads, err := backward(n, []*graph.Node{g.Const(one)}, needs)
	if err != nil {
		return nil, f.fail("%v", err)
	}
	var dot *graph.Node // (batch,): ⟨∇op, t⟩ per direction
	for i, gi := range grads {
		if gi == nil || ts[i] == nil {
			continue
		}
		if gi, err = fitGradient(n, i, gi); err != nil {
			return nil, f.fail("%v", err)
		}
		axes := make([]int, gi.Type().Rank())
		for a := range axes {
			axes[a] = a + 1
		}
		term := ops.Mul(ts[i], gi)
		if len(axes) > 0 {
			term = ops.Sum(term, axes...)
		}
		dot = addNonNil(dot, term)
	}
	if dot == nil {
		return []*graph.Node{nil}, nil
	}
	return []*graph.Node{ops.Reshape(dot, f.shape(n)...)}, nil
}

func (f *tangentSweep) transposedOnce(n *graph.Node, ts []*graph.Node) ([]*graph.Node, error) {
	g, outs := n.Graph(), n.Outputs()
	seeds := make([]*graph.Node, len(outs))
	for k, o := range outs {
		seeds[k] = zeros(g, o.Type())
	}
	needs := make([]bool, len(ts))
	for i, t := range ts {
		needs[i] = t != nil
	}
	grads, err := backward(n, seeds, needs)
	if err != nil {
		return nil, f.fail("%v", err)
	}
	var dot *graph.Node // ⟨Jᵀu, t⟩
	for i, gi := range grads {
		if gi == nil || ts[i] == nil {
			continue
		}
		if gi, err = fitGradient(n, i, gi); err != nil {
			return nil, f.fail("%v", err)
		}
		dot = addNonNil(dot, ops.Sum(ops.Mul(gi, ts[i])))
	}
	if dot == nil {
		return make([]*graph.Node, len(outs)), nil // no input reaches an output
	}
	return grad(f.caller, []*graph.Node{dot}, nil, seeds, []GradOption{ZerosIfDisconnected()})
}

// addNonNil is a+b, either of which may be nil (zero).
func addNonNil(a, b *graph.Node) *graph.Node {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return ops.Add(a, b)
}

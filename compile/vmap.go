package compile

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// NotBatched, as an entry of Vmap's inAxes, marks an input that every
// example shares (a weight matrix, say); as an entry of outAxes, an output
// that does not depend on the batch and is returned once.
const NotBatched = math.MinInt

// Vmap applies f to every example of a batch at once (JAX's vmap,
// torch.func.vmap): it returns nodes equal to running f on each example
// separately and stacking the results, built as one batched computation.
// f builds its outputs from one example of each input, as Scan's body
// does: it is called once, to trace a graph of its own nested in the
// inputs' (graph.NewSub, in the innermost of their graphs), and may read
// any node of that graph and of those enclosing it. A value of a graph
// nested deeper (the example of an enclosing Vmap, a Scan body's step) is
// given as a NotBatched input instead.
//
// inAxes gives, for each of xs, the axis its examples are laid along
// (negative axes count from the end), or NotBatched for an input that
// every example shares; f sees xs[i] without that axis. Every batched
// input must have the same number of examples, B. outAxes gives, for each
// of f's outputs, the axis of the result the examples are stacked along
// (in 0 … rank, the example's rank: negative axes count from the end of
// rank+1), or NotBatched for an output that does not depend on the batch.
// A nil inAxes or outAxes stands for axis 0 throughout.
//
// Each op of f is batched by its rule (graph.Batchable): an elementwise op
// applies to the batch as it is, a matrix product becomes one larger
// product, a reduction reduces the same axes after the batch's. An op
// without a rule, or whose rule declines, is looped over the batch, one
// Scan step per example, so every op, a user's custom op included, can be
// batched. Random ops loop: each example draws what its own run would
// (the same values, where the examples share the step). A Scan (a
// gradient's too) runs once for the batch, its body batched, and so does
// a Cond whose predicate every example shares, its branches batched. A
// Cond whose predicate is batched runs both branches for the batch and
// picks each example's outputs from the branch it takes (Where); the
// derivatives, in either mode and of any order, are gated per example,
// so that an untaken branch's NaNs and infinities (the log of a negative
// number) reach neither the values nor the derivatives. A While (or a
// Scan with Until) runs one loop for the batch while any example's
// predicate holds, bounded by the same MaxSteps: an example whose
// predicate fails keeps its carry, bit for bit, while the others step,
// and the derivatives' loops skip each example's padding steps as its
// own would. The results are ordinary nodes appended to the graph:
// compile them, or differentiate them to any order. They equal the stacked results of f run on each example, bit
// for bit but where a batched op rounds otherwise: a one-example matrix
// product of a row by a matrix is a matrix–vector product, which may sum
// in another order than the batch's one matrix product.
//
// A mistake in the arguments (an axis out of range, inputs with different
// numbers of examples, a wrong number of axes, an output of rank
// graph.MaxRank to stack over the batch) is an error naming the caller's
// file:line; so is a function that panics or returns nil or poisoned
// nodes.
func Vmap(f func(xs []*graph.Node) []*graph.Node, xs []*graph.Node, inAxes, outAxes []int) ([]*graph.Node, error) {
	return vmap(failer("Vmap", graph.CallerSite()), f, xs, inAxes, outAxes)
}

// vmap is Vmap reporting errors through fail (which names the caller).
func vmap(fail func(string, ...any) error, f func([]*graph.Node) []*graph.Node, xs []*graph.Node, inAxes, outAxes []int) ([]*graph.Node, error) {
	if f == nil {
		return nil, fail("f is nil")
	}
	if i := slices.Index(xs, nil); i >= 0 {
		return nil, fail("input %d is nil", i)
	}
	if p := graph.Poisoned(xs...); p != nil {
		return nil, p.Err()
	}
	g := graph.Innermost(xs...)
	if g == nil {
		return nil, fail("no inputs, or inputs of unrelated graphs")
	}
	axes, size, err := batchAxes(xs, inAxes, fail)
	if err != nil {
		return nil, err
	}
	v := newVmapper(fail, size, g)
	sub := g.NewSub()
	examples := make([]*graph.Node, len(xs))
	for i, x := range xs {
		shape := slices.Clone(x.Shape())
		if a := axes[i]; a != NotBatched {
			shape = slices.Delete(shape, a, a+1)
			examples[i] = sub.Input(fmt.Sprintf("example %d", i), x.DType(), shape...)
			v.set(examples[i], ops.MoveAxis(x, a, 0), true)
		} else {
			examples[i] = sub.Capture(x)
		}
	}
	outs, err := traceVmap(f, sub, examples)
	if err != nil {
		return nil, fail("%v", err)
	}
	if outAxes == nil {
		outAxes = make([]int, len(outs))
	}
	if len(outAxes) != len(outs) {
		return nil, fail("%d out axes for %d outputs", len(outAxes), len(outs))
	}
	outer, inner := sub.Captures()
	for k, c := range inner {
		v.set(c, outer[k], false)
	}
	if err := v.sweep(sub, outs); err != nil {
		return nil, err
	}
	result := make([]*graph.Node, len(outs))
	for k, o := range outs {
		if result[k], err = v.output(k, o, outAxes[k]); err != nil {
			return nil, err
		}
	}
	return result, g.Err()
}

// batchAxes checks inAxes against xs: one per input, in range, and giving
// every batched input the same number of examples. It returns the axes
// made nonnegative and that number.
func batchAxes(xs []*graph.Node, inAxes []int, fail func(string, ...any) error) ([]int, int, error) {
	if inAxes == nil {
		inAxes = make([]int, len(xs))
	}
	if len(inAxes) != len(xs) {
		return nil, 0, fail("%d in axes for %d inputs", len(inAxes), len(xs))
	}
	axes := slices.Clone(inAxes)
	size, first := 0, -1
	for i, x := range xs {
		a := axes[i]
		if a == NotBatched {
			continue
		}
		r := x.Type().Rank()
		if a < -r || a >= r {
			return nil, 0, fail("in axis %d of input %d is out of range for its shape %s", a, i, graph.ShapeString(x.Shape()))
		}
		if a < 0 {
			a += r
			axes[i] = a
		}
		switch n := x.Shape()[a]; {
		case first < 0:
			size, first = n, i
		case n != size:
			return nil, 0, fail("input %d has %d examples along axis %d, input %d has %d", i, n, a, first, size)
		}
	}
	if first < 0 {
		return nil, 0, fail("no input is batched: give an axis for at least one")
	}
	return axes, size, nil
}

// traceVmap calls f on the examples, in sub, and returns its outputs as
// nodes of sub.
func traceVmap(f func([]*graph.Node) []*graph.Node, sub *graph.Graph, examples []*graph.Node) (outs []*graph.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			outs, err = nil, fmt.Errorf("f panicked: %v", r)
		}
	}()
	outs = slices.Clone(f(slices.Clone(examples)))
	if len(outs) == 0 {
		return nil, fmt.Errorf("f returns no outputs")
	}
	for i, o := range outs {
		if o == nil {
			return nil, fmt.Errorf("f returns nil as output %d", i)
		}
		if err := o.Err(); err != nil {
			return nil, fmt.Errorf("f's output %d is poisoned: %w", i, err)
		}
		if outs[i] = sub.Capture(o); outs[i] == nil {
			return nil, fmt.Errorf("f returns %v, a node of an unrelated graph", o)
		}
	}
	return outs, sub.Err()
}

// vmapper batches a traced function into target: to maps each node of
// the traced graph to its counterpart in target, batched says which
// counterparts carry the batch's leading axis of size examples.
type vmapper struct {
	fail    func(string, ...any) error
	size    int
	target  *graph.Graph
	to      map[*graph.Node]*graph.Node
	batched map[*graph.Node]bool
}

func newVmapper(fail func(string, ...any) error, size int, target *graph.Graph) *vmapper {
	return &vmapper{fail: fail, size: size, target: target, to: map[*graph.Node]*graph.Node{}, batched: map[*graph.Node]bool{}}
}

// onLoop, when set, hears of every op that is looped over the batch (it
// has no batching rule, or its rule declined), for tests.
var onLoop func(n *graph.Node)

func (v *vmapper) set(n, to *graph.Node, batched bool) {
	v.to[n], v.batched[n] = to, batched
}

// sweep builds the counterpart of every node of src that outs depend on,
// in creation order. Its inputs must have counterparts already.
func (v *vmapper) sweep(src *graph.Graph, outs []*graph.Node) (err error) {
	// A user's batching rule may panic: that is an error naming it.
	defer func() {
		if r := recover(); r != nil {
			err = v.fail("batching panicked: %v", r)
		}
	}()
	defer v.target.Scope("vmap")()
	need := src.Ancestors(outs)
	for _, n := range src.Nodes() {
		if _, done := v.to[n]; done || !need[n.ID()] {
			continue
		}
		switch n.Kind() {
		case graph.KindConst:
			v.set(n, v.target.Const(n.Value()), false)
			continue
		case graph.KindParam:
			return v.fail("f makes %v: make parameters outside f and read them there", n)
		case graph.KindInput:
			return v.fail("f makes %v: give it to Vmap as an input, or read an input of the enclosing graph", n)
		}
		if err := v.op(n); err != nil {
			return err
		}
	}
	return v.target.Err()
}

// sweeper is the graph.BatchSweeper lent to rules: a sweep of another
// traced graph, with the same batch, into the target they give.
func (v *vmapper) sweeper() graph.BatchSweeper {
	return func(target *graph.Graph, outs, inputs, ins []*graph.Node, batched []bool) ([]*graph.Node, []bool, error) {
		w := newVmapper(v.fail, v.size, target)
		for i, in := range inputs {
			w.set(in, ins[i], batched[i])
		}
		if len(outs) == 0 {
			return nil, nil, nil
		}
		if err := w.sweep(graph.Innermost(outs...), outs); err != nil {
			return nil, nil, err
		}
		res, flags := make([]*graph.Node, len(outs)), make([]bool, len(outs))
		for k, o := range outs {
			res[k], flags[k] = w.to[o], w.batched[o]
		}
		return res, flags, nil
	}
}

// op builds the counterparts of the outputs of op node n (all of them,
// for a multi-output op).
func (v *vmapper) op(n *graph.Node) error {
	g := v.target
	ins := make([]*graph.Node, len(n.Inputs()))
	batched := make([]bool, len(ins))
	some := false
	for i, in := range n.Inputs() {
		ins[i], batched[i] = v.to[in], v.batched[in]
		some = some || batched[i]
	}
	outs := n.Outputs()
	var res []*graph.Node
	if some {
		res = v.rule(n, ins, batched)
	} else {
		res = graph.Reapply(g, n, ins...)
	}
	if res == nil {
		if onLoop != nil {
			onLoop(n)
		}
		res = v.loop(n, ins, batched)
	}
	if err := g.Err(); err != nil {
		var ge *graph.Error
		if errors.As(err, &ge) {
			err = fmt.Errorf("%s: %w", ge.Op, ge.Err)
		}
		return v.fail("batching %s at %s: %v", n.OpName(), n.Site(), err)
	}
	for k, o := range outs {
		want := o.Shape()
		if some {
			want = append([]int{v.size}, want...)
		}
		r := res[k]
		if r.Graph() != g {
			return v.fail("batching rule of %s at %s built output %d in another graph: build it from the context's inputs", n.OpName(), n.Site(), k)
		}
		if r.DType() != o.DType() || !slices.Equal(r.Shape(), want) {
			return v.fail("batching rule of %s at %s gave %v for output %d, want %v of shape %s",
				n.OpName(), n.Site(), r.Type(), k, o.DType(), graph.ShapeString(want))
		}
		v.set(o, res[k], some)
	}
	return nil
}

// rule returns the batched outputs of n from its op's batching rule, or
// nil when it has none or the rule declines.
func (v *vmapper) rule(n *graph.Node, ins []*graph.Node, batched []bool) []*graph.Node {
	ctx := graph.NewBatchContext(n, ins, batched, v.size).WithSweeper(v.sweeper())
	if rule, ok := n.Op().(graph.Batchable); ok {
		if r := rule.Batch(ctx); !ctx.Declined() && r != nil {
			return []*graph.Node{r}
		}
		return nil
	}
	multi, _ := n.MultiOp()
	if rule, ok := multi.(graph.MultiBatchable); ok {
		if r := rule.Batch(ctx); !ctx.Declined() && len(r) == len(n.Outputs()) {
			return r
		}
	}
	return nil
}

// loop applies n's op to one example at a time: a Scan over the batched
// inputs' leading axis, reading the others whole.
func (v *vmapper) loop(n *graph.Node, ins []*graph.Node, batched []bool) []*graph.Node {
	var seqs []*graph.Node
	for i, in := range ins {
		if batched[i] {
			seqs = append(seqs, in)
		}
	}
	_, ys := ops.Scan(func(_, rows []*graph.Node) ([]*graph.Node, []*graph.Node) {
		args := slices.Clone(ins)
		k := 0
		for i := range args {
			if batched[i] {
				args[i], k = rows[k], k+1
			}
		}
		return nil, graph.Reapply(rows[0].Graph(), n, args...)
	}, nil, seqs, ops.SeparateRuns())
	return ys
}

// output returns output k's counterpart, o's, with its examples along
// axis (or not batched).
func (v *vmapper) output(k int, o *graph.Node, axis int) (*graph.Node, error) {
	y, batched := v.to[o], v.batched[o]
	r := o.Type().Rank()
	switch {
	case axis == NotBatched && batched:
		return nil, v.fail("output %d depends on the batch: give it an out axis, not NotBatched", k)
	case axis == NotBatched:
		return y, nil
	case axis < -(r+1) || axis > r:
		return nil, v.fail("out axis %d of output %d is out of range for its example's shape %s", axis, k, graph.ShapeString(o.Shape()))
	case axis < 0:
		axis += r + 1
	}
	if r >= graph.MaxRank {
		return nil, v.fail("output %d, %v, stacked over a batch of %d, would have rank %d, above the supported %d", k, o.Type(), v.size, r+1, graph.MaxRank)
	}
	if !batched {
		y = ops.BroadcastTo(ops.Reshape(y, append([]int{1}, o.Shape()...)...), append([]int{v.size}, o.Shape()...)...)
	}
	return ops.MoveAxis(y, 0, axis), nil
}

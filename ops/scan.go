package ops

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// ScanBody is one step of a loop: from the carried state and this step's
// slices of the sequences, the new state and this step's outputs. It is
// called once, to build the step's graph.
type ScanBody func(carry, x []*graph.Node) (newCarry, y []*graph.Node)

// ScanOption configures Scan.
type ScanOption func(*scanConfig)

type scanConfig struct {
	reverse bool
	steps   int // -1: from the sequences
}

// Reverse runs the steps from the last to the first: step t still reads
// the sequences' slice t and writes the outputs' slice t.
func Reverse() ScanOption { return func(c *scanConfig) { c.reverse = true } }

// Steps sets the number of steps, for a loop without sequences (an
// integrator, say). With sequences, it must equal their length.
func Steps(t int) ScanOption { return func(c *scanConfig) { c.steps = t } }

// Scan runs body over the leading axis of every sequence in xs (all of
// length T), carrying state from init: for t = 0 … T-1,
//
//	carry, y_t = body(carry, [x[t] for x in xs])
//
// It returns the final carry (of init's types) and each output stacked
// over the steps on a new leading axis, (T, …). The body is built once, in
// a graph of its own nested in the caller's (graph.NewSub), and it may read
// any node of the enclosing graphs, parameters included: those are
// captured, and gradients flow to them. A machine compiles the body once
// and runs it T times without allocating.
//
// Scan is differentiable to any order. Its gradient is another Scan running
// the steps in the opposite order, whose body differentiates this body at
// each step; it reads the carries every step began with, which Scan stores
// (T copies of the carry), and recomputes the rest of the step: memory
// grows with T times the carry, not with T times every value the body
// computes.
//
// With zero steps the final carry is init and the outputs are empty. A
// body that panics, fails to build, or returns a carry of another type is
// an error recorded on the graph, as for any op.
func Scan(body ScanBody, init, xs []*graph.Node, opts ...ScanOption) (final, ys []*graph.Node) {
	cfg := scanConfig{steps: -1}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	s := graph.CallerSite()
	all := append(append([]*graph.Node(nil), init...), xs...)
	g := graph.Innermost(all...)
	fail := func(format string, args ...any) ([]*graph.Node, []*graph.Node) {
		err := &graph.Error{Op: "Scan", Err: fmt.Errorf(format, args...), Site: s}
		p := g.Fail(err)
		return repeat(p, len(init)), []*graph.Node{p}
	}
	if p := graph.Poisoned(all...); p != nil {
		return repeat(p, len(init)), []*graph.Node{p}
	}
	if g == nil {
		return fail("no carry and no sequence: give init or xs")
	}
	if body == nil {
		return fail("body is nil")
	}
	T, err := scanSteps(xs, cfg.steps)
	if err != nil {
		return fail("%v", err)
	}
	sub := g.NewSub()
	carries := make([]*graph.Node, len(init))
	for i, c := range init {
		carries[i] = sub.Input(fmt.Sprintf("carry%d", i), c.DType(), c.Shape()...)
	}
	steps := make([]*graph.Node, len(xs))
	for i, x := range xs {
		steps[i] = sub.Input(fmt.Sprintf("x%d", i), x.DType(), x.Shape()[1:]...)
	}
	newCarry, y, err := traceBody(body, carries, steps)
	if err == nil {
		err = sub.Err()
	}
	if err != nil {
		return fail("body: %v", err)
	}
	if len(newCarry) != len(init) {
		return fail("body returns %d carries for %d", len(newCarry), len(init))
	}
	outs := append(append([]*graph.Node(nil), newCarry...), y...)
	for i, n := range outs {
		if n == nil || n.Err() != nil {
			return fail("body returns a nil or poisoned node: %v", n)
		}
		outs[i] = sub.Capture(n)
		if outs[i] == nil {
			return fail("body returns %v, a node of an unrelated graph", n)
		}
		if i < len(init) && !outs[i].Type().Equal(init[i].Type()) {
			return fail("body returns carry %d of type %v, want init's %v", i, outs[i].Type(), init[i].Type())
		}
	}
	outer, captured := sub.Captures()
	op := newScanOp(carries, steps, captured, outs, T, cfg.reverse)
	res := graph.ApplyMulti(op, append(all, outer...)...)
	if len(res) == 1 && res[0].Err() != nil {
		return repeat(res[0], len(init)), []*graph.Node{res[0]}
	}
	return res[:len(init)], res[len(init) : len(init)+len(y)]
}

func repeat(n *graph.Node, k int) []*graph.Node {
	out := make([]*graph.Node, k)
	for i := range out {
		out[i] = n
	}
	return out
}

// scanSteps is the number of steps the sequences give (or steps, when
// there are none); they must agree.
func scanSteps(xs []*graph.Node, steps int) (int, error) {
	T := steps
	for i, x := range xs {
		if x.Type().Rank() == 0 {
			return 0, fmt.Errorf("sequence %d is a scalar: sequences have a leading step axis", i)
		}
		n := x.Shape()[0]
		if T >= 0 && n != T {
			if i == 0 {
				return 0, fmt.Errorf("sequence 0 has %d steps, but Steps(%d) was given", n, T)
			}
			return 0, fmt.Errorf("sequence %d has %d steps, sequence 0 has %d", i, n, T)
		}
		T = n
	}
	if T < 0 {
		return 0, fmt.Errorf("no sequence: give the number of steps with Steps")
	}
	return T, nil
}

// traceBody calls the user's body, turning a panic into an error.
func traceBody(body ScanBody, carry, x []*graph.Node) (newCarry, y []*graph.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panicked: %v", r)
		}
	}()
	newCarry, y = body(carry, x)
	return newCarry, y, nil
}

// scanOp runs a subgraph once per step. The subgraph's inputs are the
// carries (C), the step's slices of the sequences (S) and the captured
// values (K); its outputs are the new carries (C) and the step outputs,
// the last C of which are the carries the step read, so that the op's
// outputs include every step's starting carry (the history its gradient
// reads). The op's inputs are the initial carries, the sequences and the
// captured values; its outputs the final carries and the stacked step
// outputs.
type scanOp struct {
	body    *graph.Subgraph
	carries int
	seqs    int
	steps   int
	reverse bool
	// skip marks the step outputs (by output index less the carries) that
	// nothing reads, which a compiler pruned (see Prune): they are empty
	// and the body does not compute them. nil: none.
	skip []bool
}

// newScanOp makes the op running outs from the given body inputs, adding
// the history outputs.
func newScanOp(carries, steps, captured, outs []*graph.Node, T int, reverse bool) *scanOp {
	ins := append(append(append([]*graph.Node(nil), carries...), steps...), captured...)
	return &scanOp{
		body:    &graph.Subgraph{Inputs: ins, Outputs: append(append([]*graph.Node(nil), outs...), carries...)},
		carries: len(carries), seqs: len(steps), steps: T, reverse: reverse,
	}
}

func (op *scanOp) Name() string {
	if op.reverse {
		return "Scan(reverse)"
	}
	return "Scan"
}

// Subgraphs is the body, less the outputs pruned.
func (op *scanOp) Subgraphs() []*graph.Subgraph {
	if op.skip == nil {
		return []*graph.Subgraph{op.body}
	}
	return []*graph.Subgraph{{Inputs: op.body.Inputs, Outputs: op.kept()}}
}

// kept is the body's outputs that are not skipped: the runner's outputs.
func (op *scanOp) kept() []*graph.Node {
	var outs []*graph.Node
	for j, n := range op.body.Outputs {
		if !op.skipped(j) {
			outs = append(outs, n)
		}
	}
	return outs
}

func (op *scanOp) skipped(j int) bool {
	return j >= op.carries && op.skip != nil && op.skip[j-op.carries]
}

// Prune returns the op computing only the step outputs in use: those
// nothing reads (the stored carries, when no gradient of second order
// reads them; outputs of a gradient nobody asked for) are left empty and
// out of the compiled body. The carries are always computed.
func (op *scanOp) Prune(used []bool) graph.MultiOp {
	if len(used) != len(op.body.Outputs) {
		return nil
	}
	skip := make([]bool, len(used)-op.carries)
	some := false
	for j := range skip {
		skip[j] = !used[op.carries+j] || op.skipped(op.carries+j)
		some = some || skip[j]
	}
	if !some {
		return nil
	}
	pruned := *op
	pruned.skip = skip
	return &pruned
}

func (op *scanOp) Types(in []graph.Type) ([]graph.Type, error) {
	body := op.body
	if len(in) != len(body.Inputs) {
		return nil, fmt.Errorf("%d inputs for a body of %d", len(in), len(body.Inputs))
	}
	for i, t := range in {
		want := body.Inputs[i].Type()
		if i >= op.carries && i < op.carries+op.seqs {
			want = stepped(want, op.steps)
		}
		if !t.Equal(want) {
			return nil, fmt.Errorf("input %d has type %v, want %v", i, t, want)
		}
	}
	out := make([]graph.Type, len(body.Outputs))
	for i, n := range body.Outputs {
		out[i] = n.Type()
		switch {
		case op.skipped(i):
			out[i] = stepped(out[i], 0)
		case i >= op.carries:
			out[i] = stepped(out[i], op.steps)
		}
	}
	return out, nil
}

// stepped is t with a leading axis of T steps.
func stepped(t graph.Type, T int) graph.Type {
	return graph.TypeOf(t.DType, append([]int{T}, t.Shape...)...)
}

func (op *scanOp) Forward(out, in []*tensor.Dense) error { return op.ForwardExec(nil, out, in) }

// ForwardExec runs the body on the runner the machine lends, or on an
// interpreter.
func (op *scanOp) ForwardExec(e *graph.Exec, out, in []*tensor.Dense) error {
	r := e.Runner(0)
	if r == nil {
		var err error
		if r, err = graph.NewInterpreter(op.Subgraphs()[0]); err != nil {
			return err
		}
	}
	C, S := op.carries, op.seqs
	for k := C + S; k < len(in); k++ {
		if b := r.In(k); b != nil {
			graph.CopyValues(b, in[k])
		}
	}
	for c := range C {
		graph.CopyValues(out[c], in[c])
	}
	for i := range op.steps {
		t := i
		if op.reverse {
			t = op.steps - 1 - i
		}
		for c := range C {
			if b := r.In(c); b != nil {
				graph.CopyValues(b, out[c])
			}
		}
		for s := range S {
			if b := r.In(C + s); b != nil {
				copyStep(b, in[C+s], t, false)
			}
		}
		if err := r.Run(); err != nil {
			return fmt.Errorf("step %d: %v", t, err)
		}
		k := C // the runner's output
		for j := C; j < len(out); j++ {
			if !op.skipped(j) {
				copyStep(r.Out(k), out[j], t, true)
				k++
			}
		}
		for c := range C {
			graph.CopyValues(out[c], r.Out(c))
		}
	}
	return nil
}

// copyStep copies between step, one step's value, and slice t of seq, a
// stack of them: into seq when toSeq, else out of it.
func copyStep(step, seq *tensor.Dense, t int, toSeq bool) {
	switch step.Dtype() {
	case graph.Float32:
		copyPart(step.Float32s(), seq.Float32s(), t, toSeq)
	case graph.Float64:
		copyPart(step.Float64s(), seq.Float64s(), t, toSeq)
	case graph.Int32:
		copyPart(step.Int32s(), seq.Int32s(), t, toSeq)
	case graph.Int64:
		copyPart(step.Int64s(), seq.Int64s(), t, toSeq)
	}
}

func copyPart[T any](step, seq []T, t int, toSeq bool) {
	part := seq[t*len(step) : (t+1)*len(step)]
	if toSeq {
		copy(part, step)
	} else {
		copy(step, part)
	}
}

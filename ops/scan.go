package ops

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// ScanBody is one step of a loop: from the carried state and this step's
// slices of the sequences, the new state and this step's outputs. It is
// called once, to build the step's graph.
type ScanBody func(carry, x []*graph.Node) (newCarry, y []*graph.Node)

// ScanOption configures Scan.
type ScanOption func(*scanConfig)

type scanConfig struct {
	reverse bool
	steps   int  // when stepsOK
	stepsOK bool // Steps was given
	until   bool // the last step output is zero at a fixed point (untilKept)
	stop    bool // Until: the last step output is the predicate ending the loop
	runs    bool // SeparateRuns
	// builder names the function the user called where it is not Scan
	// (While): see scanOp.Builder.
	builder string
}

// Reverse runs the steps from the last to the first: step t still reads
// the sequences' slice t and writes the outputs' slice t.
func Reverse() ScanOption { return func(c *scanConfig) { c.reverse = true } }

// Steps sets the number of steps, for a loop without sequences (an
// integrator, say). With sequences, it must equal their length.
func Steps(t int) ScanOption { return func(c *scanConfig) { c.steps, c.stepsOK = t, true } }

// Until makes the body's last step output a predicate, one value of any
// dtype, that ends the loop after the step where it is nonzero: a loop
// whose number of steps is decided at run time and bounded by the
// sequences' length or Steps, as While's by MaxSteps. The steps after
// the last taken keep the carry, and the stacked outputs hold zeros there;
// in place of the predicate, Scan returns as its last output the number of
// steps taken (an int64 scalar). The loop is While's: a Scan of T steps
// whose step is a Cond, stopping at the first step not taken and whose
// derivatives skip those steps, so that the time follows the steps taken
// and derivatives of every order equal those of the loop unrolled to
// them.
func Until() ScanOption { return func(c *scanConfig) { c.stop = true } }

// SeparateRuns says that each step is a run of its own of the same
// function, as compile.Vmap's loop over the examples is: a random draw
// that no carry or sequence changes gives every step the same bits, as
// separate runs would, and compile's check of repeated draws accepts it.
func SeparateRuns() ScanOption { return func(c *scanConfig) { c.runs = true } }

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
// Random draws in the body repeat at every step unless their step input
// changes with a carry or a sequence: a Generator's draw of a fixed shape
// reads no value of the body, so it is made in the enclosing graph, drawn
// once per run and read by every step. compile.Compile refuses such a
// program (and a body's draw at a generator step that no update
// advances) unless compile.WithFixedDraws asks for it: draw the noise
// outside the loop with a leading axis of the steps and pass it as a
// sequence.
//
// With zero steps the final carry is init and the outputs are empty. A
// body that panics, fails to build, or returns a carry of another type is
// an error recorded on the graph, as for any op; so is a carry or a step
// output of rank graph.MaxRank, whose stack over the steps would be above
// it.
func Scan(body ScanBody, init, xs []*graph.Node, opts ...ScanOption) (final, ys []*graph.Node) {
	var cfg scanConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	s := graph.CallerSite()
	all := append(append([]*graph.Node(nil), init...), xs...)
	g := graph.Innermost(all...)
	name := "Scan"
	if cfg.builder != "" {
		name = cfg.builder // the loop of a While
	}
	fail := func(format string, args ...any) ([]*graph.Node, []*graph.Node) {
		err := &graph.Error{Op: name, Err: fmt.Errorf(format, args...), Site: s}
		p := g.Fail(err)
		return repeat(p, len(init)), []*graph.Node{p}
	}
	for i, n := range all {
		if n == nil {
			if g == nil {
				g = firstGraph(all)
			}
			if i < len(init) {
				return fail("init %d is nil", i)
			}
			return fail("sequence %d is nil", i-len(init))
		}
	}
	if p := graph.Poisoned(all...); p != nil {
		return repeat(p, len(init)), []*graph.Node{p}
	}
	if g == nil && len(all) > 0 {
		g = all[0].Graph()
		return fail("init and sequences belong to unrelated graphs")
	}
	if g == nil {
		return fail("no carry and no sequence: give init or xs")
	}
	if body == nil {
		return fail("body is nil")
	}
	if cfg.stop {
		final, ys, err := scanUntil(g, body, init, xs, cfg)
		if err != nil {
			return fail("%v", err)
		}
		return final, ys
	}
	tr := &scanTracer{graph: g, body: body, cfg: cfg}
	op, outer, err := tr.trace(typesOf(init), typesOf(xs))
	if err != nil {
		return fail("%v", err)
	}
	res := graph.ApplyMulti(op, append(all, outer...)...)
	if len(res) == 1 && res[0].Err() != nil {
		return repeat(res[0], len(init)), []*graph.Node{res[0]}
	}
	nY := len(res) - 2*len(init)
	// Copies: appending to a slice of res would write over the graph's
	// record of the op's outputs.
	return slices.Clone(res[:len(init)]), slices.Clone(res[len(init) : len(init)+nY])
}

// scanTracer builds a Scan's op from its body for given carry and sequence
// types: once when the Scan is built, again when it is replayed on inputs
// of other shapes (graph.Replay).
type scanTracer struct {
	graph *graph.Graph
	body  ScanBody
	cfg   scanConfig
}

// trace calls the body on inputs of a nested graph and returns the op
// and the nodes of enclosing graphs the body reads.
func (tr *scanTracer) trace(init, xs []graph.Type) (*scanOp, []*graph.Node, error) {
	T, err := scanSteps(xs, tr.cfg)
	if err != nil {
		return nil, nil, err
	}
	for i, c := range init {
		if err := stacks("the loop keeps the carry each step began with", c, T, "init %d", i); err != nil {
			return nil, nil, err
		}
	}
	sub := tr.graph.NewSub()
	carries := make([]*graph.Node, len(init))
	for i, c := range init {
		carries[i] = sub.Input(fmt.Sprintf("carry%d", i), c.DType, c.Shape...)
	}
	steps := make([]*graph.Node, len(xs))
	for i, x := range xs {
		steps[i] = sub.Input(fmt.Sprintf("x%d", i), x.DType, x.Shape[1:]...)
	}
	marks := graphMarks(tr.graph)
	newCarry, y, err := traceIn(sub, "body", tr.body, carries, steps)
	if err != nil {
		return nil, nil, err
	}
	if len(newCarry) != len(init) {
		return nil, nil, fmt.Errorf("body returns %d carries for %d", len(newCarry), len(init))
	}
	outs := append(append([]*graph.Node(nil), newCarry...), y...)
	if err := captureOutputs(sub, "body", outs); err != nil {
		return nil, nil, err
	}
	for i, c := range init {
		if !outs[i].Type().Equal(c) {
			return nil, nil, fmt.Errorf("body returns carry %d of type %v, want init's %v", i, outs[i].Type(), c)
		}
	}
	for j, o := range y {
		if err := stacks("the loop returns the step outputs", o.Type(), T, "the body's step output %d", j); err != nil {
			return nil, nil, err
		}
	}
	outer, captured := sub.Captures()
	if err := checkBodyLeaves(sub, "body", "sequences or carries", slices.Concat(carries, steps, captured)); err != nil {
		return nil, nil, err
	}
	op := newScanOp(carries, steps, captured, outs[:len(init)], nil, outs[len(init):], T, tr.cfg.reverse)
	op.tracer, op.outer = tr, outer
	op.hoisted = hoistedDraws(marks, outer)
	op.separate, op.builder = tr.cfg.runs, tr.cfg.builder
	if tr.cfg.until && len(y) > 0 {
		op.until = len(y)
	}
	return op, outer, nil
}

// Retype traces the body again for inputs of other types (graph.Replay:
// vm.Runner at another batch size). The body must read the same values of
// the enclosing graph (readsSameValues), none of them replayed: a value
// computed from the replayed inputs is to be given to Scan as a carry or
// a sequence.
func (op *scanOp) Retype(in []graph.Type, replayed []bool) (any, error) {
	if op.tracer == nil {
		return nil, fmt.Errorf("this Scan cannot be traced again (it is a gradient's)")
	}
	C, S := op.carries, op.seqs
	K := len(in) - C - S
	if K < 0 {
		return nil, fmt.Errorf("%d inputs for %d carries and %d sequences", len(in), C, S)
	}
	for k := C + S; k < len(in); k++ {
		if replayed[k] {
			give := "give it to Scan as a carry or a sequence"
			if op.builder == "While" {
				give = "give it to While as a carry"
			}
			return nil, fmt.Errorf("the body reads %v, which is computed from the replayed inputs: %s", op.body.Inputs[k], give)
		}
	}
	again, outer, err := op.tracer.trace(in[:C], in[C:C+S])
	if err != nil {
		return nil, err
	}
	if !slices.Equal(outer, op.outer) {
		if !readsSameValues(outer, op.outer) {
			return nil, fmt.Errorf("traced again for %v, the body reads other values of the enclosing graph", graph.TypesString(in))
		}
		// Values made again by the body's function: the op reads those
		// made first, which its node's inputs are.
		again.outer, again.hoisted = op.outer, op.hoisted
	}
	return again, nil
}

// scanSteps is the number of steps the sequences give, or Steps gives;
// they must agree.
func scanSteps(xs []graph.Type, cfg scanConfig) (int, error) {
	T := -1 // unknown
	if cfg.stepsOK {
		if cfg.steps < 0 {
			return 0, fmt.Errorf("Steps(%d) is negative", cfg.steps)
		}
		T = cfg.steps
	}
	for i, x := range xs {
		if x.Rank() == 0 {
			return 0, fmt.Errorf("sequence %d is a scalar: sequences have a leading step axis", i)
		}
		n := x.Shape[0]
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

// scanOp runs a subgraph once per step. The subgraph's inputs are the
// carries (C), the step's slices of the sequences (S) and the captured
// values (K). Its outputs are the new carries (C), the terms of the sums
// (A: a gradient's sums over the steps, which the op adds up itself
// rather than carrying them through the body), and the step outputs, the
// last C of which are the carries the step read, so that the op's outputs
// include every step's starting carry (the history its gradient reads).
// The op's inputs are the initial carries and sums, the sequences and the
// captured values; its outputs the final carries and sums and the
// stacked step outputs.
type scanOp struct {
	body    *graph.Subgraph
	carries int
	sums    int
	seqs    int
	steps   int
	reverse bool
	tracer  *scanTracer   // traces the body again for other types; nil for a gradient's Scan
	outer   []*graph.Node // the values of enclosing graphs the traced body reads
	hoisted []*graph.Node // the random ops the body's function made in enclosing graphs (see HoistedDraws)
	// separate marks a loop whose steps are separate runs (SeparateRuns).
	separate bool
	// skip marks the step outputs (by output index less the carries and
	// sums) that nothing reads, which a compiler pruned (see Prune): they
	// are empty and the body does not compute them. nil: none.
	skip []bool
	// until, when not 0, is 1 + the index among the step outputs of a
	// flag saying, when zero, that the step kept its carry, and so that
	// every later step would compute what it did (a While's padding: see
	// untilKept). The loop then stops there, its later step outputs
	// copies of that step's.
	until int
	// skipBy, when not 0, is 1 + the index of a sequence whose zero
	// slices mark the steps where the body is the identity (a derivative
	// of a While's padding steps): the loop does not run the body there,
	// keeps the carries and sums, stores the carries as the step's
	// history and zeros as its other outputs.
	skipBy int
	// builder is the function the user called, where it is not Scan: a
	// While's loop.
	builder string
}

// identityStep is step t of a loop whose body is the identity there (see
// skipBy).
func (op *scanOp) identityStep(out []*tensor.Dense, t int) {
	history := len(out) - op.carries
	for j := op.stepOutputs(); j < len(out); j++ {
		switch {
		case op.skipped(j):
		case j >= history:
			copyStep(out[j-history], out[j], t, true)
		default:
			zeroStep(out[j], t)
		}
	}
}

// newScanOp makes the op computing newCarry, the sums' terms and ys from
// the given body inputs, adding the history outputs.
func newScanOp(carries, steps, captured, newCarry, terms, ys []*graph.Node, T int, reverse bool) *scanOp {
	ins := slices.Concat(carries, steps, captured)
	return &scanOp{
		body:    &graph.Subgraph{Inputs: ins, Outputs: slices.Concat(newCarry, terms, ys, carries)},
		carries: len(carries), sums: len(terms), seqs: len(steps), steps: T, reverse: reverse,
	}
}

func (op *scanOp) Name() string {
	if op.reverse {
		return "Scan(reverse)"
	}
	return "Scan"
}

// Builder is "While" for a While's loop (graph.Builder), "" for a Scan;
// the loops of a loop's derivatives name the loop the user built.
func (op *scanOp) Builder() string { return op.builder }

// userLoop is the name of the loop the user built, which the loops
// computing its derivatives are built from: their messages name it (a
// While's, not the Scan of its gradient).
func (op *scanOp) userLoop() string {
	if op.builder != "" {
		return op.builder
	}
	return op.Name()
}

// Subgraphs is the body, less the outputs pruned.
func (op *scanOp) Subgraphs() []*graph.Subgraph {
	if op.skip == nil {
		return []*graph.Subgraph{op.body}
	}
	var outs []*graph.Node
	for j, n := range op.body.Outputs {
		if !op.skipped(j) {
			outs = append(outs, n)
		}
	}
	return []*graph.Subgraph{{Inputs: op.body.Inputs, Outputs: outs}}
}

// SubgraphInput is the op input that body input i reads: a carry's
// initial value or a sequence, whose value changes at each step, or a
// captured value, the same at every step (see graph.SubgraphBinder).
func (op *scanOp) SubgraphInput(_, i int) (int, bool) {
	if i < op.carries {
		return i, true
	}
	return i + op.sums, i < op.carries+op.seqs
}

// SubgraphRuns is the number of steps, or 1 when they are separate runs
// (SeparateRuns): draws repeated at every step are then meant.
func (op *scanOp) SubgraphRuns(int) int {
	if op.separate {
		return 1
	}
	return op.steps
}

// HoistedDraws returns the random ops that the body's function made in
// the enclosing graphs, reading none of the body's values (a generator's
// draw of a fixed shape, say), and which the body reads: every step reads
// the same draw.
func (op *scanOp) HoistedDraws(int) []*graph.Node { return op.hoisted }

// stepOutputs is the index of the first step output (after the carries and
// sums), in the op's outputs and the body's alike.
func (op *scanOp) stepOutputs() int { return op.carries + op.sums }

func (op *scanOp) skipped(j int) bool {
	return j >= op.stepOutputs() && op.skip != nil && op.skip[j-op.stepOutputs()]
}

// bodyInput is the body input that op input i (not a sum) feeds.
func (op *scanOp) bodyInput(i int) int {
	if i < op.carries {
		return i
	}
	return i - op.sums
}

// Prune returns the op computing only the step outputs in use: those
// nothing reads (the stored carries, when no gradient of second order
// reads them; outputs of a gradient nobody asked for) are left empty and
// out of the compiled body. Carries and sums are always computed.
func (op *scanOp) Prune(used []bool) graph.MultiOp {
	first := op.stepOutputs()
	if len(used) != len(op.body.Outputs) {
		return nil
	}
	skip := make([]bool, len(used)-first)
	some := false
	for j := range skip {
		skip[j] = (!used[first+j] || op.skipped(first+j)) && j != op.until-1
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
	if len(in) != len(body.Inputs)+op.sums {
		return nil, fmt.Errorf("%d inputs for a body of %d and %d sums", len(in), len(body.Inputs), op.sums)
	}
	for i, t := range in {
		var want graph.Type
		switch {
		case i >= op.carries && i < op.stepOutputs():
			want = body.Outputs[i].Type() // a sum's initial value: its terms' type
		case i >= op.stepOutputs() && i < op.stepOutputs()+op.seqs:
			want = stepped(body.Inputs[op.bodyInput(i)].Type(), op.steps)
		default:
			want = body.Inputs[op.bodyInput(i)].Type()
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
		case i >= op.stepOutputs():
			out[i] = stepped(out[i], op.steps)
		}
	}
	return out, nil
}

// stacks says why values of type t, which the loop stacks over its T
// steps on a new leading axis (why), cannot be: the stack's rank would be
// above graph.MaxRank. what (with args) names the value.
func stacks(why string, t graph.Type, T int, what string, args ...any) error {
	if t.Rank() < graph.MaxRank {
		return nil
	}
	return fmt.Errorf("%s, stacked over the steps: %s is %v, stacked %v of rank %d, above the supported %d",
		why, fmt.Sprintf(what, args...), t, stepped(t, T), t.Rank()+1, graph.MaxRank)
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
	C, A, S := op.carries, op.sums, op.seqs
	for i := C + A + S; i < len(in); i++ {
		if b := r.In(op.bodyInput(i)); b != nil {
			graph.CopyValues(b, in[i])
		}
	}
	for c := range C + A {
		graph.CopyValues(out[c], in[c])
	}
	direct := op.carriesInPlace(r)
	if direct {
		for c := range C {
			if b := r.In(c); b != nil {
				graph.CopyValues(b, in[c])
			}
		}
	}
	for i := range op.steps {
		t := i
		if op.reverse {
			t = op.steps - 1 - i
		}
		if op.skipBy > 0 && !nonzero(in[C+A+op.skipBy-1], t) {
			op.identityStep(out, t)
			continue
		}
		for c := range C {
			if b := r.In(c); b != nil && !direct {
				graph.CopyValues(b, out[c])
			}
		}
		for s := range S {
			if b := r.In(C + s); b != nil {
				copyStep(b, in[C+A+s], t, false)
			}
		}
		if err := r.Run(); err != nil {
			return fmt.Errorf("step %d: %v", t, err)
		}
		k := C + A // the runner's output
		for j := C + A; j < len(out); j++ {
			if !op.skipped(j) {
				copyStep(r.Out(k), out[j], t, true)
				k++
			}
		}
		for a := C; a < C+A; a++ {
			addInto(out[a], r.Out(a))
		}
		for c := range C {
			switch b := r.In(c); {
			case !direct || b == nil:
				graph.CopyValues(out[c], r.Out(c))
			case !sameStorage(b, r.Out(c)):
				graph.CopyValues(b, r.Out(c))
			}
		}
		if op.until > 0 && !op.reverse && !nonzero(out[C+A+op.until-1], t) {
			for j := C + A; j < len(out); j++ {
				if !op.skipped(j) {
					fillSteps(out[j], t, op.steps)
				}
			}
			break
		}
	}
	if direct {
		for c := range C {
			if b := r.In(c); b != nil {
				graph.CopyValues(out[c], b)
			}
		}
	}
	return nil
}

// carriesInPlace reports whether the loop may keep the carries in r's
// inputs from step to step, copying each step's new carries there and
// into the op's outputs once, at the end, rather than through the
// outputs at every step. It may not where a new carry is the buffer of
// another carry's input (a body swapping two carries would read one it
// has just overwritten), nor where steps skip the body (skipBy, until),
// which read the carries from the outputs.
func (op *scanOp) carriesInPlace(r graph.Runner) bool {
	if op.skipBy > 0 || op.until > 0 {
		return false
	}
	for c := range op.carries {
		for d := range op.carries {
			if b := r.In(d); d != c && b != nil && sameStorage(b, r.Out(c)) {
				return false
			}
		}
	}
	return true
}

// sameStorage reports whether a and b start at the same element: two
// buffers of a machine are the same one or do not overlap. Empty ones
// are not compared (nothing is copied between them).
func sameStorage(a, b *tensor.Dense) bool {
	return graph.ShapeSize(a.Shape()) > 0 && graph.ShapeSize(b.Shape()) > 0 && a.Uintptr() == b.Uintptr()
}

// fillSteps copies slice t of seq, a stack of T steps' values, into the
// slices after it.
func fillSteps(seq *tensor.Dense, t, T int) {
	switch seq.Dtype() {
	case graph.Float32:
		fillParts(seq.Float32s(), t, T)
	case graph.Float64:
		fillParts(seq.Float64s(), t, T)
	case graph.Int32:
		fillParts(seq.Int32s(), t, T)
	case graph.Int64:
		fillParts(seq.Int64s(), t, T)
	}
}

// zeroStep zeros slice t of seq, a stack of steps' values.
func zeroStep(seq *tensor.Dense, t int) {
	switch seq.Dtype() {
	case graph.Float32:
		clearPart(seq.Float32s(), t, seq.Shape()[0])
	case graph.Float64:
		clearPart(seq.Float64s(), t, seq.Shape()[0])
	case graph.Int32:
		clearPart(seq.Int32s(), t, seq.Shape()[0])
	case graph.Int64:
		clearPart(seq.Int64s(), t, seq.Shape()[0])
	}
}

func clearPart[T any](seq []T, t, steps int) {
	n := len(seq) / steps
	clear(seq[t*n : (t+1)*n])
}

func fillParts[T any](seq []T, t, steps int) {
	n := len(seq) / steps
	for u := t + 1; u < steps; u++ {
		copy(seq[u*n:(u+1)*n], seq[t*n:(t+1)*n])
	}
}

// addInto adds src to dst, elementwise.
func addInto(dst, src *tensor.Dense) {
	switch dst.Dtype() {
	case graph.Float32:
		d := dst.Float32s()
		vek.VV(vek.Add, d, d, src.Float32s())
	case graph.Float64:
		d := dst.Float64s()
		vek.VV(vek.Add, d, d, src.Float64s())
	}
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

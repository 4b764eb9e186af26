package gradcheck

import (
	"fmt"
	"math"
	"runtime"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
)

// CheckOp checks everything an op author can get wrong, for any op, built-in
// or custom, at the given inputs (one tensor per op input):
//
//   - type inference accepts the inputs, and the kernel writes exactly the
//     output it infers: Forward runs into buffers of the inferred type
//     filled with NaN and then with other values; an element left
//     unwritten, a write out of range, or a result that depends on the
//     buffer's old contents is an error;
//   - the kernel does not modify its inputs, and two runs give
//     bit-identical results;
//   - Backward, called directly through graph.NewGradContext, returns one
//     gradient per input, of the input's type (or one that broadcasts to
//     it);
//   - the first derivatives (as Check does) and the second derivatives (as
//     GradGradCheck does) of the op applied to the inputs match finite
//     differences;
//   - an op with a forward-mode rule (graph.ForwardDifferentiable) gives
//     the Jacobian its Backward gives, through one Jacobian–vector
//     product and through a batch of tangents (all unit vectors at once).
//
// The op must implement graph.Differentiable unless Options.Inputs is an
// empty non-nil slice, which checks the kernel alone.
func CheckOp(op graph.Op, inputs []*tensor.Dense, opts Options) error {
	if op == nil {
		return asError(fail(Misuse, nil, "op is nil"), "CheckOp", "")
	}
	_, diff := op.(graph.Differentiable)
	_, rule := op.(graph.ForwardDifferentiable)
	u := opUnderTest{
		differentiable: diff,
		forwardRule:    rule,
		apply:          func(xs []*graph.Node) []*graph.Node { return []*graph.Node{graph.Apply(op, xs...)} },
		forward:        func(out, in []*tensor.Dense) error { return op.Forward(out[0], in) },
	}
	name, e := opName(op.Name)
	if e == nil {
		e = u.check(inputs, opts)
	}
	return asError(e, "CheckOp", name)
}

// CheckMultiOp is CheckOp for an op with several outputs: every output's
// buffer is checked, and derivatives are compared for every (input,
// output) pair. The op must implement graph.MultiDifferentiable unless
// Options.Inputs is an empty non-nil slice.
func CheckMultiOp(op graph.MultiOp, inputs []*tensor.Dense, opts Options) error {
	if op == nil {
		return asError(fail(Misuse, nil, "op is nil"), "CheckMultiOp", "")
	}
	_, diff := op.(graph.MultiDifferentiable)
	u := opUnderTest{
		differentiable: diff,
		apply:          func(xs []*graph.Node) []*graph.Node { return graph.ApplyMulti(op, xs...) },
		forward:        op.Forward,
	}
	name, e := opName(op.Name)
	if e == nil {
		e = u.check(inputs, opts)
	}
	return asError(e, "CheckMultiOp", name)
}

// opName calls an op's Name, which is the user's code and may panic.
func opName(name func() string) (s string, e *Error) {
	defer func() {
		if r := recover(); r != nil {
			e = fail(Misuse, nil, "the op's Name panicked: %v", r)
		}
	}()
	return name(), nil
}

// opUnderTest hides the difference between single- and multi-output ops.
type opUnderTest struct {
	differentiable bool
	forwardRule    bool // a single-output op with a forward-mode rule
	apply          func(xs []*graph.Node) []*graph.Node
	forward        func(out, in []*tensor.Dense) error
}

func (u opUnderTest) check(inputs []*tensor.Dense, opts Options) *Error {
	vals, err := prepareInputs(inputs, opts.ConvertFloat32)
	if err != nil {
		return fail(Misuse, nil, "%v", err)
	}
	resolved := opts
	checked, err := resolved.resolve(vals)
	if err != nil {
		return fail(Misuse, nil, "%v", err)
	}
	if !u.differentiable && len(checked) > 0 {
		return fail(Misuse, nil, "the op has no Backward (it does not implement graph.Differentiable, "+
			"or graph.MultiDifferentiable for a multi-output op), so its derivatives cannot be checked; "+
			"set Options.Inputs to []int{} to check its kernel alone")
	}
	g := graph.New()
	xs := make([]*graph.Node, len(vals))
	types := make([]graph.Type, len(vals))
	for i, v := range vals {
		xs[i] = g.Input(fmt.Sprintf("in%d", i), v.Dtype(), v.Shape()...)
		types[i] = xs[i].Type()
	}
	outs := u.apply(xs)
	if err := g.Err(); err != nil {
		return fail(BuildFailed, err, "type inference rejects %d inputs of types %s", len(vals), graph.TypesString(types))
	}
	if e := u.checkKernel(outs, vals); e != nil {
		return e
	}
	if !u.differentiable {
		return nil
	}
	if e := checkBackwardResult(outs, xs); e != nil {
		return e
	}
	build := func(xs []*graph.Node) ([]*graph.Node, *Error) { return u.apply(xs), nil }
	if e := checkDerivatives(build, vals, opts, FirstDerivative, true); e != nil {
		return e
	}
	if e := checkDerivatives(build, vals, opts, SecondDerivative, true); e != nil {
		return e
	}
	if u.forwardRule {
		return checkForwardRule(u.apply, vals, checked, resolved)
	}
	return nil
}

// outputSentinel fills output buffers in the run that tells an element the
// kernel left unwritten (NaN in the NaN-filled run, this elsewhere) from
// one it computed as NaN.
const outputSentinel = -12345.678

// checkKernel runs Forward three times on copies of the inputs: into
// NaN-filled outputs twice and into sentinel-filled outputs once.
func (u opUnderTest) checkKernel(outs []*graph.Node, vals []*tensor.Dense) *Error {
	types := make([]graph.Type, len(outs))
	for k, o := range outs {
		types[k] = o.Type()
	}
	first, ins, e := u.runKernel(types, vals, math.NaN())
	if e != nil {
		return e
	}
	for i := range vals {
		if j, ok := firstDifference(ins[i], vals[i]); ok {
			return &Error{Problem: ModifiesInput, Input: i, Output: -1,
				Detail: fmt.Sprintf("Forward wrote into input %d: element %s was %v and is now %v; a kernel must only read its inputs",
					i, indexString(unravel(j, vals[i].Shape())), graph.Float(vals[i], j), graph.Float(ins[i], j))}
		}
	}
	filled, _, e := u.runKernel(types, vals, outputSentinel)
	if e != nil {
		return e
	}
	again, _, e := u.runKernel(types, vals, math.NaN())
	if e != nil {
		return e
	}
	for k, t := range types {
		a, b := first[k].Float64s(), filled[k].Float64s()
		var unwritten []int
		for j := range a {
			switch {
			case !math.IsNaN(a[j]) || math.IsNaN(b[j]):
			case b[j] == outputSentinel:
				unwritten = append(unwritten, j)
			default:
				return readsOutput(k, j, t, a[j], b[j])
			}
		}
		if len(unwritten) > 0 {
			return &Error{Problem: TypeMismatch, Input: -1, Output: k,
				Detail: fmt.Sprintf("Forward left %d of %d elements of output %d (type %v, inferred) unwritten, first at %s: "+
					"the kernel writes fewer elements than type inference says",
					len(unwritten), len(a), k, t, indexString(unravel(unwritten[0], t.Shape)))}
		}
	}
	for k := range types {
		if j, ok := firstDifference(first[k], again[k]); ok {
			return &Error{Problem: Nondeterministic, Input: -1, Output: k,
				Detail: fmt.Sprintf("two runs on equal inputs differ at output %d element %s: %v, then %v",
					k, indexString(unravel(j, types[k].Shape)), first[k].Float64s()[j], again[k].Float64s()[j])}
		}
		if j, ok := firstDifference(first[k], filled[k]); ok {
			return readsOutput(k, j, types[k], first[k].Float64s()[j], filled[k].Float64s()[j])
		}
	}
	return nil
}

func readsOutput(k, j int, t graph.Type, fromNaN, fromSentinel float64) *Error {
	return &Error{Problem: ReadsOutput, Input: -1, Output: k,
		Detail: fmt.Sprintf("output %d element %s depends on the buffer's old contents (%v into a NaN-filled buffer, %v into one holding %v): "+
			"the kernel reads its output before writing it (an accumulation without clearing?)",
			k, indexString(unravel(j, t.Shape)), fromNaN, fromSentinel, outputSentinel)}
}

// runKernel calls Forward on fresh copies of vals, into buffers of the
// inferred types filled with fill, and returns the outputs and the inputs
// as the kernel left them.
func (u opUnderTest) runKernel(types []graph.Type, vals []*tensor.Dense, fill float64) (outs, ins []*tensor.Dense, e *Error) {
	ins = make([]*tensor.Dense, len(vals))
	for i, v := range vals {
		ins[i], _ = graph.CloneDense(v) // vals are contiguous, of a supported dtype: no error
	}
	outs = make([]*tensor.Dense, len(types))
	for k, t := range types {
		outs[k] = graph.NewDenseOf(t)
		for j := range outs[k].Float64s() {
			outs[k].Float64s()[j] = fill
		}
	}
	defer func() {
		if r := recover(); r != nil {
			e = kernelPanic(r, types)
		}
	}()
	if err := u.forward(outs, ins); err != nil {
		return nil, nil, fail(ForwardFailed, err, "Forward returned an error on outputs of the inferred types %s", graph.TypesString(types))
	}
	return outs, ins, nil
}

// kernelPanic describes a panicking kernel; an index out of range most
// likely means the kernel writes more than type inference says.
func kernelPanic(r any, types []graph.Type) *Error {
	if re, ok := r.(runtime.Error); ok && strings.Contains(re.Error(), "out of range") {
		return fail(TypeMismatch, nil, "Forward panicked (%v) on outputs of the inferred types %s: "+
			"does the kernel write more than type inference says?", r, graph.TypesString(types))
	}
	return fail(ForwardFailed, nil, "Forward panicked: %v", r)
}

// firstDifference returns the first element at which a and b differ in
// their bits (two NaNs count as equal).
func firstDifference(a, b *tensor.Dense) (int, bool) {
	x, y := graph.Float64s(a), graph.Float64s(b)
	for j := range x {
		if math.Float64bits(x[j]) != math.Float64bits(y[j]) && !(math.IsNaN(x[j]) && math.IsNaN(y[j])) {
			return j, true
		}
	}
	return 0, false
}

// checkBackwardResult calls the op's Backward directly, every input
// needing a gradient, and checks what it returns: one entry per input,
// each nil, or a healthy node of the input's dtype whose shape is the
// input's or one the input broadcasts to.
func checkBackwardResult(outs, xs []*graph.Node) *Error {
	g := xs[0].Graph()
	needs := make([]bool, len(xs))
	for i := range needs {
		needs[i] = true
	}
	gradOuts := make([]*graph.Node, len(outs))
	for k, o := range outs {
		gradOuts[k] = g.Input(fmt.Sprintf("grad%d", k), o.DType(), o.Shape()...)
	}
	grads, err := compile.Backward(outs[0], gradOuts, needs)
	if err != nil {
		return fail(BackwardResult, err, "Backward failed")
	}
	for i, gr := range grads {
		if gr == nil {
			continue
		}
		if err := gr.Err(); err != nil {
			return &Error{Problem: BackwardResult, Input: i, Output: -1, Err: err,
				Detail: fmt.Sprintf("the gradient Backward built for input %d is poisoned", i)}
		}
		x := xs[i]
		b, err := graph.BroadcastShapes(x.Shape(), gr.Shape())
		if gr.DType() != x.DType() || err != nil || !graph.TypeOf(x.DType(), b...).Equal(gr.Type()) {
			return &Error{Problem: BackwardResult, Input: i, Output: -1,
				Detail: fmt.Sprintf("Backward returned a gradient of type %v for input %d of type %v: it must have the input's type, or a shape the input broadcasts to",
					gr.Type(), i, x.Type())}
		}
	}
	return nil
}

package graph

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"gorgonia.org/tensor"
)

// Op is an operation with one output. Built-in ops (package ops) and users'
// custom ops implement it alike and enter a graph through Apply.
//
// An op's non-tensor parameters are fields of its type (a scale factor, an
// axis). Its identity, for common-subexpression elimination and DOT, is its
// type and field values: keep op types comparable, or implement Keyer. Two
// ops that differ in a parameter must never compare equal.
type Op interface {
	// Name names the op in errors and DOT, e.g. "MatMul".
	Name() string
	// Type infers the output's type from the inputs' types, or says why
	// the inputs do not fit. It is called once, when the node is built.
	Type(in []Type) (Type, error)
	// Forward computes the output into out, a buffer of the inferred type,
	// from inputs of the types Type was given. It must not modify in.
	Forward(out *tensor.Dense, in []*tensor.Dense) error
}

// Differentiable is implemented by ops with a symbolic gradient.
type Differentiable interface {
	// Backward builds, with graph ops, the gradient of the loss with
	// respect to each input, given gradOut, the gradient with respect to the
	// op's output. It returns one entry per input; nil means no gradient
	// (a non-differentiable input, or ctx.NeedsGrad(i) is false). A gradient
	// may have the output's shape where the op broadcast an input: the
	// differentiation driver sums it back to the input's shape. Because it
	// is built from graph ops, the gradient can be differentiated again.
	Backward(ctx *GradContext, gradOut *Node) []*Node
}

// BackwardKernel is implemented by ops whose gradient is computed by a
// numeric kernel rather than built with graph ops (PyTorch's
// once_differentiable: a fused or external kernel, say). The first
// derivative works like any other; differentiating that gradient again is
// an error naming the op. An op that also implements Differentiable is
// differentiated symbolically.
type BackwardKernel interface {
	// Gradient computes into grads[i] the gradient with respect to input i,
	// given gradOut (the gradient with respect to the output), the inputs in
	// and the output out. grads[i] is nil when input i needs no gradient;
	// the others are buffers of input i's type. It must not modify gradOut,
	// in or out.
	Gradient(grads []*tensor.Dense, gradOut *tensor.Dense, in []*tensor.Dense, out *tensor.Dense) error
}

// MultiOp is an operation with several outputs (values and indices, say).
// ApplyMulti enters it into a graph as one node per output.
type MultiOp interface {
	// Name names the op in errors and DOT.
	Name() string
	// Types infers the outputs' types from the inputs' types.
	Types(in []Type) ([]Type, error)
	// Forward computes every output into out from the inputs.
	Forward(out []*tensor.Dense, in []*tensor.Dense) error
}

// MultiDifferentiable is implemented by multi-output ops with a symbolic
// gradient. gradOuts has one entry per output; nil for an output that does
// not reach the loss.
type MultiDifferentiable interface {
	Backward(ctx *GradContext, gradOuts []*Node) []*Node
}

// Builder is implemented by ops (Op or MultiOp) that a function of
// another name builds: ops.While builds its loop as a Scan op. Messages
// placing a node in the user's code (Node.BuilderName) name the function
// the user called.
type Builder interface {
	// Builder is the function's name, or "" for the op's own.
	Builder() string
}

// InPlacer is implemented by ops whose kernel may write its output over one
// of its inputs' buffers, sparing the memory of a fresh buffer. InPlace
// returns that input's index, or -1 for none. Forward must then compute the
// right output when out shares its buffer with in[InPlace()] (and with any
// other input that is the same value): a plain elementwise loop, reading
// element i before writing element i, is. The compiler uses it only where
// that input has the output's type and no later instruction reads it.
type InPlacer interface {
	InPlace() int
}

// Overwriter is implemented by ops, single- or multi-output, whose kernel
// may write output out over the buffer of input in: it must then compute
// every output right when they share it, reading each of the input's
// elements before output out's element there is written (an elementwise
// kernel that reads the input only up to the step computing that output
// does). The compiler uses it to compute a parameter's update in the
// parameter's own buffer, where nothing after the instruction reads the
// parameter's old value.
type Overwriter interface {
	Overwrites(out, in int) bool
}

// Broadcaster is implemented by ops whose inputs broadcast, by NumPy's
// rules, against each other or against a shape the op holds (ops.Add,
// ops.Where, ops.BroadcastTo): an input's axis of size 1, or missing,
// spans the output's axis aligned with it from the right. Broadcasts is a
// marker. vm.Runner reads it when it replays a graph at another batch
// size: an input's batch axis of one row that comes to span an axis of the
// built batch's size (a parameter shaped by the batch) gives a wrong
// number of rows, which it refuses.
type Broadcaster interface {
	Broadcasts()
}

// Cost estimates the work of one run of an op, for profiles: the
// floating-point operations it does and the bytes it reads from its inputs
// and writes to its outputs.
type Cost struct {
	Flops        int64 // floating-point operations
	BytesRead    int64 // bytes read from the inputs
	BytesWritten int64 // bytes written to the outputs
}

// Coster is implemented by ops that can estimate their cost for given
// input and output types: 2·m·n·k flops for a matrix product, say. Ops
// without it get DefaultCost. It is asked when a profile is read, never
// while a program runs.
type Coster interface {
	Cost(in []Type, out Type) Cost
}

// Drawer is implemented by random ops, which draw their values from a
// stream at a step read from one of their inputs: DrawStep is that
// input's position, DrawStream the stream's seed and number. compile.Compile
// refuses a program in which such an op draws at a parameter that none of
// the program's updates advances, since every run would then repeat the
// same draws; in which a loop's body draws at a step that does not change
// from one step of the loop to the next; or in which two ops draw one
// stream at the same step (compile.WithFixedDraws allows them all).
type Drawer interface {
	DrawStep() int
	DrawStream() (seed uint64, id uint32)
}

// DefaultCost is the cost of an op that reads each input and writes each
// output once and does no arithmetic worth counting (a reshape, a copy).
func DefaultCost(in []Type, out ...Type) Cost {
	var c Cost
	for _, t := range in {
		c.BytesRead += typeBytes(t)
	}
	for _, t := range out {
		c.BytesWritten += typeBytes(t)
	}
	return c
}

// CostOf returns the cost of one run of op on inputs of types in: the op's
// own estimate when it is a Coster, else (or if its Cost panics)
// DefaultCost.
func CostOf(op Op, in []Type, out Type) (cost Cost) {
	c, ok := op.(Coster)
	if !ok {
		return DefaultCost(in, out)
	}
	defer func() {
		if recover() != nil {
			cost = DefaultCost(in, out)
		}
	}()
	return c.Cost(in, out)
}

func typeBytes(t Type) int64 {
	if t.DType.Type == nil {
		return 0
	}
	return int64(t.Size()) * int64(t.DType.Size())
}

// Keyer is implemented by ops whose type is not comparable (it holds a
// slice, say). Key must encode every parameter that affects the result.
type Keyer interface {
	Key() string
}

// OpKey returns a comparable value identifying op's type and parameters:
// two applications of ops with equal keys to the same inputs compute the
// same value. It is the op itself when its type is comparable (and so are
// the values in its interface fields, for ops wrapping other ops).
func OpKey(op any) any {
	if k, ok := op.(Keyer); ok {
		return struct {
			t   reflect.Type
			key string
		}{reflect.TypeOf(op), k.Key()}
	}
	if op != nil && hashable(reflect.ValueOf(op)) {
		// == says 0 == -0, but an op scaling by -0 computes other values
		// (1/x·-0 is -Inf): tell signed zeros apart.
		var zeros signedZeros
		zeros.find(reflect.ValueOf(op))
		if zeros.mask != 0 {
			return struct {
				op    any
				zeros uint64
			}{op, zeros.mask}
		}
		return op
	}
	// Not comparable and no Key: a fresh identity, never equal to another.
	return new(int)
}

// hashable reports whether v can be compared and used as a map key: its
// type is comparable and so is every value its interface fields hold (an
// op wrapping another op holds it in an interface field, and comparing two
// holding a slice-bearing op would panic).
func hashable(v reflect.Value) bool {
	if !v.Type().Comparable() {
		return false
	}
	switch v.Kind() {
	case reflect.Interface:
		return v.IsNil() || hashable(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if !hashable(v.Field(i)) {
				return false
			}
		}
	case reflect.Array:
		if k := v.Type().Elem().Kind(); k == reflect.Interface || k == reflect.Struct || k == reflect.Array {
			for i := range v.Len() {
				if !hashable(v.Index(i)) {
					return false
				}
			}
		}
	}
	return true
}

// Apply adds a node applying op to inputs and returns it. Type inference runs
// now: if the inputs do not fit, the first error is recorded on the graph
// (naming the op, the inputs' types and the caller's file:line) and a
// poisoned node is returned. Apply short-circuits on poisoned or nil inputs.
func Apply(op Op, inputs ...*Node) *Node {
	return apply(nil, op, nil, inputs, callers())[0]
}

// Apply is the package-level Apply for ops that may take no inputs.
func (g *Graph) Apply(op Op, inputs ...*Node) *Node {
	return apply(g, op, nil, inputs, callers())[0]
}

// ApplyMulti adds one node per output of a multi-output op. On error every
// returned node is poisoned; the slice has one entry even when the op's
// outputs could not be inferred.
func ApplyMulti(op MultiOp, inputs ...*Node) []*Node {
	return apply(nil, nil, op, inputs, callers())
}

// Reapply applies n's op again, single- or multi-output, to inputs, in g
// (nil: the inputs' graph, as Apply), and returns its outputs: what n's
// application computes, from other inputs (a transformation rebuilding a
// function's nodes elsewhere).
func Reapply(g *Graph, n *Node, inputs ...*Node) []*Node {
	if op := n.Op(); op != nil {
		return apply(g, op, nil, inputs, callers())[:1]
	}
	multi, _ := n.MultiOp()
	return apply(g, nil, multi, inputs, callers())
}

func apply(g *Graph, op Op, multi MultiOp, inputs []*Node, s site) []*Node {
	name, nameErr := opName(op, multi)
	if g == nil {
		g = innermost(inputs)
	}
	for _, in := range inputs {
		if g == nil && in != nil && in.g != nil {
			g = in.g // inputs of unrelated graphs: reported below
		}
	}
	if g == nil {
		for _, in := range inputs {
			if in != nil && in.err != nil {
				return []*Node{{err: in.err}}
			}
		}
		return []*Node{{err: newError(name, s, "no graph: every input is nil")}}
	}
	if g.err != nil {
		return []*Node{{g: g, err: g.err}}
	}
	if op == nil && multi == nil {
		return []*Node{g.fail(name, s, "op is nil")}
	}
	if nameErr != nil {
		return []*Node{g.fail(name, s, "%v", nameErr)}
	}
	types := make([]Type, len(inputs))
	for i, in := range inputs {
		switch {
		case in == nil:
			return []*Node{g.fail(name, s, "input %d is nil", i)}
		case in.err != nil:
			return []*Node{g.Fail(in.err)}
		case in.g != g && !in.g.encloses(g):
			return []*Node{g.fail(name, s, "input %d (%v) belongs to another graph", i, in)}
		}
		types[i] = in.typ
	}
	outTypes, err := inferTypes(op, multi, types)
	if err != nil {
		return []*Node{g.fail(name, s, "%s", describeTypeError(err, types))}
	}
	ins := append([]*Node(nil), inputs...)
	for i, in := range ins {
		ins[i] = g.capture(in) // a node of an enclosing graph
	}
	if op != nil {
		return []*Node{g.add(&Node{op: op, inputs: ins, typ: outTypes[0], site: s})}
	}
	group := make([]*Node, len(outTypes))
	for i, t := range outTypes {
		group[i] = g.add(&Node{multi: multi, index: i, inputs: ins, typ: t, site: s})
	}
	for _, n := range group {
		n.group = group
	}
	return group
}

// opName asks the op its name once, so that an op whose Name panics is
// refused here rather than crashing the DOT writer or the machine later.
func opName(op Op, multi MultiOp) (name string, err error) {
	var o interface{ Name() string } = multi
	if op != nil {
		o = op
	}
	if o == nil {
		return "Apply", nil
	}
	defer func() {
		if r := recover(); r != nil {
			name, err = fmt.Sprintf("%T", o), fmt.Errorf("its Name method panicked: %v", r)
		}
	}()
	return o.Name(), nil
}

// inferTypes calls the op's type inference, turning a panic into an error
// and checking what it returns.
func inferTypes(op Op, multi MultiOp, in []Type) (out []Type, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("type inference panicked: %v", r)
		}
	}()
	if err := checkRanks(in, "rank %d is above the supported %d"); err != nil {
		return nil, err
	}
	if op != nil {
		t, err := op.Type(in)
		if err != nil {
			return nil, err
		}
		out = []Type{t}
	} else {
		out, err = multi.Types(in)
		if err != nil {
			return nil, err
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("type inference returned no outputs")
		}
	}
	for i, t := range out {
		if err := checkLeafType(t); err != nil {
			return nil, fmt.Errorf("type inference returned %v for output %d: %v", t, i, err)
		}
		out[i] = TypeOf(t.DType, t.Shape...) // never alias the op's slices
	}
	if err := checkRanks(out, "the output's rank %d is above the supported %d"); err != nil {
		return nil, err
	}
	return out, nil
}

// MaxRank is the highest rank of the values ops take and give: an op
// applied to a node of a higher rank (an Input may have one), or whose
// output would have one (a Gather of a rank-8 table by a matrix of
// indices), is an error naming the op, its inputs and the caller's
// file:line. The built-in ops' kernels keep their index arithmetic in
// arrays of this size, on the stack.
const MaxRank = 8

// checkRanks refuses types of a rank above MaxRank, with format's error
// (the rank and MaxRank).
func checkRanks(types []Type, format string) error {
	for _, t := range types {
		if t.Rank() > MaxRank {
			return fmt.Errorf(format, t.Rank(), MaxRank)
		}
	}
	return nil
}

// describeTypeError adds the inputs' types to a type-inference error unless
// it already names every input's shape.
func describeTypeError(err error, in []Type) string {
	msg := err.Error()
	for _, t := range in {
		if !strings.Contains(msg, ShapeString(t.Shape)) {
			return msg + " (inputs " + TypesString(in) + ")"
		}
	}
	return msg
}

// signedZeros marks, in visiting order, the float fields of an op that
// hold -0 (the first 64 floats are told apart; ops have a handful).
type signedZeros struct {
	mask uint64
	n    int
}

func (z *signedZeros) find(v reflect.Value) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); f == 0 && math.Signbit(f) && z.n < 64 {
			z.mask |= 1 << z.n
		}
		z.n++
	case reflect.Interface:
		if !v.IsNil() {
			z.find(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			z.find(v.Field(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			z.find(v.Index(i))
		}
	}
}

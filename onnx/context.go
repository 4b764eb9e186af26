package onnx

import (
	"fmt"
	"strconv"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"gorgonia.org/tensor"
)

// importFunc builds one ONNX op from its node's inputs and attributes,
// returning a node per output the op supports.
type importFunc func(c *nodeContext) ([]*graph.Node, error)

// importers is the table of supported ops, filled by each family's file.
var importers = map[string]importFunc{}

// register adds importers to the table.
func register(table map[string]importFunc) {
	for op, f := range table {
		importers[op] = f
	}
}

// one adapts a builder of one output to an importFunc.
func one(f func(c *nodeContext) (*graph.Node, error)) importFunc {
	return func(c *nodeContext) ([]*graph.Node, error) {
		n, err := f(c)
		return []*graph.Node{n}, err
	}
}

// nodeContext is what an importFunc sees of its node.
type nodeContext struct {
	im    *importer
	proto *onnxpb.NodeProto
	in    []*graph.Node // nil for an absent optional input
	// bad is the first attribute read as another type than the one it
	// holds (an "axis" of type FLOAT, say), which reads as a zero value:
	// the node's error, whatever it builds.
	bad error
}

// g is the graph being built.
func (c *nodeContext) g() *graph.Graph { return c.im.g }

// input returns input i, or an error when it is absent.
func (c *nodeContext) input(i int) (*graph.Node, error) {
	if i >= len(c.in) || c.in[i] == nil {
		return nil, fmt.Errorf("input %d is missing", i)
	}
	return c.in[i], nil
}

// inputs returns the first n inputs, each required.
func (c *nodeContext) inputs(n int) ([]*graph.Node, error) {
	out := make([]*graph.Node, n)
	for i := range out {
		var err error
		if out[i], err = c.input(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// optional returns input i, or nil when it is absent.
func (c *nodeContext) optional(i int) *graph.Node {
	if i < len(c.in) {
		return c.in[i]
	}
	return nil
}

// known returns input i's value when it is known at import (a constant,
// or computed from constants and static shapes).
func (c *nodeContext) known(i int) (*tensor.Dense, error) {
	n, err := c.input(i)
	if err != nil {
		return nil, err
	}
	if n.Kind() != graph.KindConst {
		return nil, fmt.Errorf("input %d (%v) must be known at import: a constant, or computed from constants and shapes", i, n.Type())
	}
	return n.Value(), nil
}

// knownInts returns input i's known integer values.
func (c *nodeContext) knownInts(i int) ([]int, error) {
	v, err := c.known(i)
	if err != nil {
		return nil, err
	}
	return denseInts(v), nil
}

// denseInts reads a tensor's values as ints.
func denseInts(v *tensor.Dense) []int {
	if graph.IsFloat(v.Dtype()) {
		vals := graph.Float64s(v)
		out := make([]int, len(vals))
		for i, x := range vals {
			out[i] = int(x)
		}
		return out
	}
	vals := graph.Int64s(v)
	out := make([]int, len(vals))
	for i, x := range vals {
		out[i] = int(x)
	}
	return out
}

// attr returns the named attribute, or nil. An importer reads only the
// attributes its op's table names: reading another is a defect of
// Import, the node's error.
func (c *nodeContext) attr(name string) *onnxpb.AttributeProto {
	if op := c.proto.GetOpType(); !declared(op, name) && c.bad == nil {
		c.bad = fmt.Errorf("internal error: Import reads attribute %q, which the table of %s's attributes lacks", name, op)
	}
	for _, a := range c.proto.GetAttribute() {
		if a.GetName() == name {
			return a
		}
	}
	return nil
}

// has reports whether the node sets the named attribute.
func (c *nodeContext) has(name string) bool { return c.attr(name) != nil }

// typed returns the named attribute, or nil; one of another type than
// want records the node's error. An attribute without a type (IR 1) is
// taken for one of want when it holds that type's field.
func (c *nodeContext) typed(name string, want onnxpb.AttributeProto_AttributeType) *onnxpb.AttributeProto {
	a := c.attr(name)
	if a == nil {
		return nil
	}
	if t := a.GetType(); t != want && !(t == onnxpb.AttributeProto_UNDEFINED && holds(a, want)) {
		if c.bad == nil {
			c.bad = fmt.Errorf("attribute %q is of type %v, want %v", name, t, want)
		}
		return nil
	}
	return a
}

// holds reports whether a sets the field of type t.
func holds(a *onnxpb.AttributeProto, t onnxpb.AttributeProto_AttributeType) bool {
	switch t {
	case onnxpb.AttributeProto_INT:
		return a.I != nil
	case onnxpb.AttributeProto_FLOAT:
		return a.F != nil
	case onnxpb.AttributeProto_STRING:
		return a.S != nil
	case onnxpb.AttributeProto_INTS:
		return len(a.Ints) > 0
	case onnxpb.AttributeProto_STRINGS:
		return len(a.Strings) > 0
	case onnxpb.AttributeProto_TENSOR:
		return a.T != nil
	}
	return false
}

// attrTensor returns a tensor attribute, or nil.
func (c *nodeContext) attrTensor(name string) *onnxpb.TensorProto {
	return c.typed(name, onnxpb.AttributeProto_TENSOR).GetT()
}

// attrInt returns an integer attribute, or def.
func (c *nodeContext) attrInt(name string, def int) int {
	if a := c.typed(name, onnxpb.AttributeProto_INT); a != nil {
		return int(a.GetI())
	}
	return def
}

// attrFloat returns a float attribute, or def. ONNX stores float
// attributes as float32: the value is the shortest decimal that rounds to
// that float32 (1e-5, not 9.999999747378752e-06), the number the model's
// author wrote, so that a float64 model computes with it as its framework
// did; in float32 it rounds back to the stored value.
func (c *nodeContext) attrFloat(name string, def float64) float64 {
	if a := c.typed(name, onnxpb.AttributeProto_FLOAT); a != nil {
		return shortestDecimal(a.GetF())
	}
	return def
}

// shortestDecimal returns the float64 of the shortest decimal that rounds
// to f.
func shortestDecimal(f float32) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	if err != nil { // not finite
		return float64(f)
	}
	return v
}

// attrString returns a string attribute, or def.
func (c *nodeContext) attrString(name, def string) string {
	if a := c.typed(name, onnxpb.AttributeProto_STRING); a != nil {
		return string(a.GetS())
	}
	return def
}

// attrInts returns an integer list attribute, or nil.
func (c *nodeContext) attrInts(name string) []int {
	a := c.typed(name, onnxpb.AttributeProto_INTS)
	if a == nil {
		return nil
	}
	out := make([]int, len(a.GetInts()))
	for i, v := range a.GetInts() {
		out[i] = int(v)
	}
	return out
}

// intsFrom returns a list given as an attribute (older opsets) or as a
// known input (newer ones); ok is false when neither is given.
func (c *nodeContext) intsFrom(attr string, input int) (v []int, ok bool, err error) {
	if c.has(attr) {
		return c.attrInts(attr), true, nil
	}
	if c.optional(input) == nil {
		return nil, false, nil
	}
	v, err = c.knownInts(input)
	return v, err == nil, err
}

// unsupported is the error for a setting Import does not handle.
func unsupported(format string, args ...any) error {
	return fmt.Errorf("unsupported: "+format, args...)
}

// maxFolded bounds the values folded at import: shapes and indices, not
// weights (the compiler folds those).
const maxFolded = 1 << 16

// fold computes at import a node built only from constants, returning a
// constant holding its value; other nodes are returned as they are. Only
// nodes built since start (by the current ONNX node) are computed.
func (im *importer) fold(n *graph.Node, start int) (*graph.Node, error) {
	if n.Kind() != graph.KindOp || n.ID() < start || n.Type().Size() > maxFolded {
		return n, nil
	}
	if multi, _ := n.MultiOp(); multi != nil || n.Op() == nil {
		return n, nil
	}
	vals := map[*graph.Node]*tensor.Dense{}
	var eval func(n *graph.Node) (*tensor.Dense, bool, error)
	eval = func(n *graph.Node) (*tensor.Dense, bool, error) {
		if n.Kind() == graph.KindConst {
			return n.Value(), true, nil
		}
		if n.Kind() != graph.KindOp || n.ID() < start || n.Op() == nil || n.Type().Size() > maxFolded {
			return nil, false, nil
		}
		if v, ok := vals[n]; ok {
			return v, true, nil
		}
		in := make([]*tensor.Dense, len(n.Inputs()))
		for i, x := range n.Inputs() {
			v, ok, err := eval(x)
			if !ok || err != nil {
				return nil, ok, err
			}
			in[i] = v
		}
		out := graph.NewDenseOf(n.Type())
		if err := forward(n.Op(), n.Type(), out, in); err != nil {
			return nil, false, fmt.Errorf("computing %v at import: %v", n, err)
		}
		vals[n] = out
		return out, true, nil
	}
	v, ok, err := eval(n)
	if !ok || err != nil {
		return n, err
	}
	return im.g.Const(v), nil
}

// forward runs an op's kernel, turning a panic into an error.
func forward(op graph.Op, t graph.Type, out *tensor.Dense, in []*tensor.Dense) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("kernel panicked: %v", r)
		}
	}()
	if t.Size() == 0 {
		return nil
	}
	return op.Forward(out, in)
}

// attrStrings returns a string list attribute, or nil.
func (c *nodeContext) attrStrings(name string) []string {
	a := c.typed(name, onnxpb.AttributeProto_STRINGS)
	if a == nil {
		return nil
	}
	out := make([]string, len(a.GetStrings()))
	for i, s := range a.GetStrings() {
		out[i] = string(s)
	}
	return out
}

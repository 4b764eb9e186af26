package onnx

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
	"gorgonia.org/tensor"
)

// DefaultOpset is the opset Export writes unless told otherwise.
const DefaultOpset = 17

// ExportOptions tune Export.
type ExportOptions struct {
	// Opset is the default domain's opset to write, 13 to MaxOpset; 0:
	// DefaultOpset.
	Opset int64
	// OutputNames name the model's outputs; missing or empty ones take the
	// node's name, or output_i.
	OutputNames []string
	// GraphName names the ONNX graph; "": "nabla".
	GraphName string
	// Values, when set, gives the parameters' values to write (a
	// *vm.Machine after training), rather than the initial values the
	// graph holds; a parameter it does not have is an error.
	Values nn.ParamStore
}

// Exporter is the optional interface of a custom op that exports itself.
// ExportONNX returns the ONNX nodes computing the value named output from
// the values named inputs, of types in; intermediate values it names must
// begin with output.
type Exporter interface {
	ExportONNX(inputs []string, output string, in []graph.Type, out graph.Type) ([]*onnxpb.NodeProto, error)
}

// Export writes the nodes that outputs depend on as a serialized ONNX
// model: input nodes become graph inputs, parameters initializers under
// their names (so that Import makes them parameters again), constants
// Constant nodes, and every node's doc string is the file:line that built
// it.
func Export(outputs []*graph.Node, opts ExportOptions) ([]byte, error) {
	site := graph.CallerSite()
	m, err := exportModel(outputs, opts, site)
	if err != nil {
		return nil, err
	}
	data, err := proto.Marshal(m)
	if err != nil {
		return nil, exportError(site, "%v", err)
	}
	return data, nil
}

// ExportProto is Export returning the ModelProto.
func ExportProto(outputs []*graph.Node, opts ExportOptions) (*onnxpb.ModelProto, error) {
	return exportModel(outputs, opts, graph.CallerSite())
}

// WriteFile exports outputs to a file.
func WriteFile(path string, outputs []*graph.Node, opts ExportOptions) error {
	site := graph.CallerSite()
	m, err := exportModel(outputs, opts, site)
	if err != nil {
		return err
	}
	data, err := proto.Marshal(m)
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		return exportError(site, "%v", err)
	}
	return nil
}

func exportError(site, format string, args ...any) error {
	return &graph.Error{Op: "onnx.Export", Err: fmt.Errorf(format, args...), Site: site}
}

// exporter holds one export's state.
type exporter struct {
	opset  int64
	values nn.ParamStore // nil: the graph's values
	names  map[*graph.Node]string
	used   map[string]bool
	g      *onnxpb.GraphProto
}

// fresh returns an unused value name based on base.
func (e *exporter) fresh(base string) string {
	name := base
	for i := 1; e.used[name] || name == ""; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	e.used[name] = true
	return name
}

func exportModel(outputs []*graph.Node, opts ExportOptions, site string) (m *onnxpb.ModelProto, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, exportError(site, "internal error: %v", r)
		}
	}()
	opset := opts.Opset
	if opset == 0 {
		opset = DefaultOpset
	}
	if opset < 13 || opset > MaxOpset {
		return nil, exportError(site, "opset %d: want 13 to %d", opset, MaxOpset)
	}
	if len(outputs) == 0 {
		return nil, exportError(site, "no outputs")
	}
	for i, o := range outputs {
		if o == nil {
			return nil, exportError(site, "output %d is nil", i)
		}
		if err := o.Err(); err != nil {
			return nil, err
		}
		if o.Graph() != outputs[0].Graph() {
			return nil, exportError(site, "output %d (%v) belongs to another graph than output 0 (%v): a model is one graph", i, o, outputs[0])
		}
	}
	e := &exporter{opset: opset, values: opts.Values, names: map[*graph.Node]string{}, used: map[string]bool{}, g: &onnxpb.GraphProto{}}
	name := opts.GraphName
	if name == "" {
		name = "nabla"
	}
	e.g.Name = &name
	nodes := reachable(outputs)
	// Leaves first, so that they keep their names.
	for _, n := range nodes {
		if n.Kind() != graph.KindOp {
			if err := e.leaf(n); err != nil {
				return nil, exportError(site, "%v", err)
			}
		}
	}
	// Explicit output names next, so that nodes named alike yield to them.
	outNames := make([]string, len(outputs))
	for i := range outputs {
		if i < len(opts.OutputNames) && opts.OutputNames[i] != "" {
			if e.used[opts.OutputNames[i]] {
				return nil, exportError(site, "output name %q is taken by an input, a parameter or another output", opts.OutputNames[i])
			}
			outNames[i] = e.fresh(opts.OutputNames[i])
		}
	}
	for _, n := range nodes {
		if n.Kind() == graph.KindOp {
			if err := e.op(n); err != nil {
				return nil, exportError(site, "%v (built at %s)", err, n.Site())
			}
		}
	}
	for i, o := range outputs {
		if outNames[i] == "" {
			want := o.Name()
			if want == "" {
				want = fmt.Sprintf("output_%d", i)
			}
			outNames[i] = e.fresh(want)
		}
		e.emit(o, "Identity", []string{e.names[o]}, outNames[i], nil)
		e.g.Output = append(e.g.Output, valueInfo(outNames[i], o.Type()))
	}
	version := int64(8)
	producer := "nabla"
	return &onnxpb.ModelProto{
		IrVersion:    &version,
		ProducerName: &producer,
		OpsetImport:  []*onnxpb.OperatorSetIdProto{{Version: &opset}},
		Graph:        e.g,
	}, nil
}

// reachable returns the nodes outputs depend on, in creation (topological)
// order.
func reachable(outputs []*graph.Node) []*graph.Node {
	if len(outputs) == 0 {
		return nil
	}
	g := outputs[0].Graph()
	var out []*graph.Node
	for id, m := range g.Ancestors(outputs) {
		if m {
			out = append(out, g.Node(id))
		}
	}
	return out
}

// valueInfo describes a tensor value.
func valueInfo(name string, t graph.Type) *onnxpb.ValueInfoProto {
	et := int32(elemType(t.DType))
	dims := make([]*onnxpb.TensorShapeProto_Dimension, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}}
	}
	return &onnxpb.ValueInfoProto{Name: &name, Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: &et, Shape: &onnxpb.TensorShapeProto{Dim: dims}},
	}}}
}

// leaf exports an input, a parameter or a constant.
func (e *exporter) leaf(n *graph.Node) error {
	base := n.Name()
	switch n.Kind() {
	case graph.KindInput:
		name := e.fresh(base)
		e.names[n] = name
		e.g.Input = append(e.g.Input, valueInfo(name, n.Type()))
	case graph.KindParam:
		v := n.Value()
		if e.values != nil {
			var err error
			if v, err = e.values.Get(n); err != nil {
				msg := strings.TrimPrefix(err.Error(), "nabla: ") // the export's error says it once
				var ge *graph.Error
				if errors.As(err, &ge) { // and names the caller once
					msg = fmt.Sprintf("%s: %v", ge.Op, ge.Err)
				}
				return fmt.Errorf("ExportOptions.Values: parameter %q: %s", n.Name(), msg)
			}
			if v, err = storedValue(n, v); err != nil {
				return fmt.Errorf("ExportOptions.Values: parameter %q: %v", n.Name(), err)
			}
		}
		if v == nil {
			return fmt.Errorf("%v has no value", n)
		}
		name := e.fresh(base)
		e.names[n] = name
		t := writeTensor(name, n.Type(), v)
		if site := n.Site(); site != "" {
			t.DocString = &site
		}
		e.g.Initializer = append(e.g.Initializer, t)
	default: // a constant: a Constant node, so that it imports as one
		if base == "" {
			base = fmt.Sprintf("const_%d", n.ID())
		}
		if n.Value() == nil {
			return fmt.Errorf("%v has no value", n)
		}
		e.names[n] = e.constant(base, n.Type(), n.Value(), n.Site())
	}
	return nil
}

// storedValue checks a parameter's value from a store: of its type, and
// laid out as a contiguous tensor (a view, whose elements writeTensor would
// not see, is copied in order).
func storedValue(n *graph.Node, v *tensor.Dense) (*tensor.Dense, error) {
	switch {
	case v == nil || v.Dtype().Type == nil:
		return nil, errors.New("the store gave no value (a nil or zero tensor.Dense) and no error")
	case !graph.TypeOf(v.Dtype(), v.Shape()...).Equal(n.Type()):
		return nil, fmt.Errorf("the store gave %v, want %v", graph.TypeOf(v.Dtype(), v.Shape()...), n.Type())
	case graph.Backing(v) == nil:
		return graph.CloneDense(v)
	}
	return v, nil
}

// constant adds a Constant node holding v and returns its value's name.
// Constants are nodes rather than initializers, which Import reads as
// parameters.
func (e *exporter) constant(base string, t graph.Type, v *tensor.Dense, site string) string {
	name := e.fresh(base)
	e.g.Node = append(e.g.Node, &onnxpb.NodeProto{
		OpType: ptr("Constant"), Output: []string{name}, Name: ptr(name), DocString: &site,
		Attribute: []*onnxpb.AttributeProto{{Name: ptr("value"), Type: ptr(onnxpb.AttributeProto_TENSOR), T: writeTensor(name, t, v)}},
	})
	return name
}

// emit appends an ONNX node computing the value out from ins, its doc
// string the site that built n.
func (e *exporter) emit(n *graph.Node, opType string, ins []string, out string, attrs []*onnxpb.AttributeProto) {
	site := n.Site()
	name := out
	e.g.Node = append(e.g.Node, &onnxpb.NodeProto{
		OpType: &opType, Input: ins, Output: []string{out}, Name: &name, DocString: &site, Attribute: attrs,
	})
}

// ints adds a constant holding ints (shapes, axes) and returns its name.
func (e *exporter) ints(base string, v []int) string {
	t, _ := graph.FromInt64s(graph.Int64, int64s(v), len(v))
	return e.constant(base, graph.TypeOf(graph.Int64, len(v)), t, "")
}

// scalarConst adds a scalar constant of t's dtype and returns its name.
func (e *exporter) scalarConst(base string, t graph.Type, v float64) string {
	d := graph.NewDense(t.DType)
	graph.SetFloat(d, 0, v)
	return e.constant(base, graph.TypeOf(t.DType), d, "")
}

// attribute builders.
func attrInt(name string, v int) *onnxpb.AttributeProto {
	t, i := onnxpb.AttributeProto_INT, int64(v)
	return &onnxpb.AttributeProto{Name: &name, Type: &t, I: &i}
}

func attrInts(name string, v []int) *onnxpb.AttributeProto {
	t := onnxpb.AttributeProto_INTS
	return &onnxpb.AttributeProto{Name: &name, Type: &t, Ints: int64s(v)}
}

func attrFloat(name string, v float64) *onnxpb.AttributeProto {
	t, f := onnxpb.AttributeProto_FLOAT, float32(v)
	return &onnxpb.AttributeProto{Name: &name, Type: &t, F: &f}
}

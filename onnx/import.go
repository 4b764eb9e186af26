package onnx

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"gorgonia.org/tensor"
)

// MaxOpset is the newest opset of the default ONNX domain that Import
// reads.
const MaxOpset = 21

// Options tune Import.
type Options struct {
	// InputShapes gives the shapes of graph inputs by name. It is required
	// for inputs with symbolic dimensions ("batch") and overrides the shape
	// the model declares.
	InputShapes map[string][]int
	// Frozen imports float initializers as constants rather than trainable
	// parameters. Integer initializers are always constants.
	Frozen bool
	// Constants fixes graph inputs to known values, by name: they are built
	// as constants (and are not among Model.Inputs), so that shape inputs
	// fed as graph inputs (a Reshape's shape, a Slice's starts) fold.
	Constants map[string]*tensor.Dense
	// Inputs binds graph inputs or initializers, by name, to existing
	// nodes of Options.Graph, so that the model is built on them (a
	// preprocessing graph's output, or gradcheck's inputs); they are not
	// among Model.Inputs or Model.Params. Types must match the model's.
	Inputs map[string]*graph.Node
	// Graph is the graph to build in; nil: a new one.
	Graph *graph.Graph
}

// Model is an imported ONNX model: ordinary nodes of a nabla graph, so it
// compiles, runs and differentiates like any other.
type Model struct {
	// Graph holds the model's nodes.
	Graph *graph.Graph
	// Inputs are the model's graph inputs (initializers excluded), in the
	// model's order; InputNames their ONNX names.
	Inputs     []*graph.Node
	InputNames []string
	// Outputs are the model's graph outputs, in order; OutputNames their
	// ONNX names.
	Outputs     []*graph.Node
	OutputNames []string
	// Params are the float initializers imported as parameters, by their
	// ONNX name (each node carries that name too, so that a state dict
	// round-trips).
	Params map[string]*graph.Node
	// Opset is the model's opset of the default domain.
	Opset int64
}

// State returns the model's parameters under their ONNX names, sorted, as
// nn.Save and nn.Load take them: a state dict saved from one import loads
// into another, or into an nn module whose names match.
func (m *Model) State() []nn.Named {
	state := make([]nn.Named, 0, len(m.Params))
	for _, name := range keys(m.Params) {
		state = append(state, nn.Named{Name: name, Node: m.Params[name]})
	}
	return state
}

// Import reads a serialized ONNX ModelProto. A model with external data
// must be read with ImportFile, which knows its folder.
func Import(data []byte, opts Options) (*Model, error) {
	site := graph.CallerSite()
	m, err := unmarshalModel(data)
	if err != nil {
		return nil, importError(site, "not an ONNX model: %v", err)
	}
	return importModel(m, "", opts, site)
}

// ImportFile reads an ONNX model from a file, or from model.onnx in a
// folder; external data is read from the model's folder (paths leaving it
// are refused). On unix systems the file is mapped, not read, while the
// graph is built, so that the weights are copied once, into the graph, as
// Import does; a file truncated meanwhile is an error, not a crash.
func ImportFile(path string, opts Options) (*Model, error) {
	site := graph.CallerSite()
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "model.onnx")
	}
	data, release, err := readModelFile(path)
	if err != nil {
		return nil, importError(site, "%v", err)
	}
	defer release()
	return importFileData(data, path, opts, site)
}

// importFileData imports the bytes of the model file at path, which may be
// mapped: a fault reading them (the file truncated meanwhile) is an error
// rather than a crash.
func importFileData(data []byte, path string, opts Options, site string) (model *Model, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !isFault(r) {
				panic(r)
			}
			model, err = nil, importError(site, "%s: the file changed while it was read (a page of it could not be read)", path)
		}
	}()
	m, err := unmarshalModel(data)
	if err != nil {
		return nil, importError(site, "%s: not an ONNX model: %v", path, err)
	}
	return importModel(m, filepath.Dir(path), opts, site)
}

// isFault reports whether a recovered value is a memory fault, which
// debug.SetPanicOnFault turns into a panic.
func isFault(r any) bool {
	_, ok := r.(interface{ Addr() uintptr })
	return ok
}

// ImportProto builds a decoded ModelProto; dir is the folder external data
// is read from ("" when there is none).
func ImportProto(m *onnxpb.ModelProto, dir string, opts Options) (*Model, error) {
	return importModel(m, dir, opts, graph.CallerSite())
}

// importError formats an import error as nabla's errors read.
func importError(site, format string, args ...any) error {
	return &graph.Error{Op: "onnx.Import", Err: fmt.Errorf(format, args...), Site: site}
}

// importer holds one import's state.
type importer struct {
	parent *importer // the importer of the enclosing graph, in a subgraph
	g      *graph.Graph
	opset  int64
	dir    string
	values map[string]*graph.Node // ONNX value name → node
	opts   Options
	convs  map[*graph.Node]convParts // each Conv's result → what made it, for folding
}

func importModel(m *onnxpb.ModelProto, dir string, opts Options, site string) (model *Model, err error) {
	defer func() {
		if r := recover(); r != nil { // a defect, never a user's mistake: report it rather than crash
			if isFault(r) {
				panic(r) // a mapped file's page is gone: importFileData reports it
			}
			model, err = nil, importError(site, "internal error: %v", r)
		}
	}()
	gp := m.GetGraph()
	if gp == nil {
		return nil, importError(site, "the model has no graph")
	}
	opset, err := defaultOpset(m)
	if err != nil {
		return nil, importError(site, "%v", err)
	}
	order, err := sortNodes(gp, nil)
	if err != nil {
		return nil, importError(site, "%v", err)
	}
	if err := checkSupported(allNodes(gp), opset); err != nil {
		return nil, importError(site, "%v", err)
	}
	g := opts.Graph
	if g == nil {
		g = graph.New()
	}
	im := &importer{g: g, opset: opset, dir: dir, values: map[string]*graph.Node{}, opts: opts}
	model = &Model{Graph: g, Params: map[string]*graph.Node{}, Opset: opset}
	if err := im.leaves(gp, model); err != nil {
		return nil, importError(site, "%v", err)
	}
	for _, n := range order {
		if err := im.node(n); err != nil {
			return nil, importError(site, "%v", err)
		}
	}
	for _, o := range gp.GetOutput() {
		n := im.lookup(o.GetName())
		if n == nil {
			return nil, importError(site, "graph output %q is produced by no node, initializer or input", o.GetName())
		}
		model.Outputs = append(model.Outputs, n)
		model.OutputNames = append(model.OutputNames, o.GetName())
	}
	if err := g.Err(); err != nil {
		return nil, err
	}
	return model, nil
}

// leaves builds the initializers and graph inputs.
func (im *importer) leaves(gp *onnxpb.GraphProto, model *Model) error {
	for _, t := range gp.GetInitializer() {
		v, err := readInitializer(t, im.dir)
		if err != nil {
			return fmt.Errorf("initializer %q: %v", t.GetName(), err)
		}
		if b, ok := im.opts.Inputs[t.GetName()]; ok {
			if err := im.bind(t.GetName(), b, graph.TypeOf(v.Dtype(), v.Shape()...), true); err != nil {
				return err
			}
			continue
		}
		var n *graph.Node
		if graph.IsFloat(v.Dtype()) && !im.opts.Frozen {
			n = im.g.Param(t.GetName(), v)
			model.Params[t.GetName()] = n
		} else {
			n = im.g.Const(v).SetName(t.GetName())
		}
		if err := im.g.Err(); err != nil {
			return fmt.Errorf("initializer %q: %v", t.GetName(), err)
		}
		im.values[t.GetName()] = n
	}
	for _, in := range gp.GetInput() {
		name := in.GetName()
		if _, ok := im.values[name]; ok {
			continue
		}
		b, bound := im.opts.Inputs[name]
		v, fixed := im.opts.Constants[name]
		if bound || fixed {
			dtype, err := dtypeOf(in.GetType().GetTensorType().GetElemType())
			if err != nil {
				return fmt.Errorf("input %q: %v", name, err)
			}
			if bound {
				if err := im.bind(name, b, graph.TypeOf(dtype), false); err != nil {
					return err
				}
				if err := im.checkShape(in, b.Shape()); err != nil {
					return fmt.Errorf("Options.Inputs: %q is %v: %v", name, b.Type(), err)
				}
				continue
			}
			if v == nil || v.Dtype() != dtype {
				return fmt.Errorf("Options.Constants: input %q: the value is not of the input's dtype %v", name, dtype)
			}
			if err := im.checkShape(in, v.Shape()); err != nil {
				return fmt.Errorf("Options.Constants: input %q: the value's shape is %s: %v", name, graph.ShapeString(v.Shape()), err)
			}
			im.values[name] = im.g.Const(v).SetName(name)
			if err := im.g.Err(); err != nil {
				return err
			}
			continue
		}
		dtype, shape, err := im.inputType(in)
		if err != nil {
			return fmt.Errorf("input %q: %v", name, err)
		}
		n := im.g.Input(name, dtype, shape...)
		if err := im.g.Err(); err != nil {
			return err
		}
		im.values[name] = n
		model.Inputs = append(model.Inputs, n)
		model.InputNames = append(model.InputNames, name)
	}
	for option, names := range map[string][]string{"InputShapes": keys(im.opts.InputShapes), "Constants": keys(im.opts.Constants), "Inputs": keys(im.opts.Inputs)} {
		for _, name := range names {
			if _, ok := im.values[name]; !ok {
				return fmt.Errorf("Options.%s names %q, which is not an input of the model", option, name)
			}
		}
	}
	return nil
}

// bind uses an existing node for a graph input or an initializer; an
// input's shape may differ from the one the model declares only where that
// is symbolic or when Options.InputShapes does not say otherwise.
func (im *importer) bind(name string, n *graph.Node, want graph.Type, exact bool) error {
	switch {
	case n == nil:
		return fmt.Errorf("Options.Inputs: %q is nil", name)
	case n.Graph() != im.g:
		return fmt.Errorf("Options.Inputs: %q (%v) is not a node of Options.Graph", name, n)
	case n.DType() != want.DType || (exact && !n.Type().Equal(want)):
		return fmt.Errorf("Options.Inputs: %q is %v, the model's is %v", name, n.Type(), want)
	}
	im.values[name] = n
	return nil
}

// checkShape checks a shape given for graph input in (a bound node's, a
// constant's) against Options.InputShapes, or else the shape the model
// declares: its rank and fixed dimensions (a symbolic one takes any size).
func (im *importer) checkShape(in *onnxpb.ValueInfoProto, shape []int) error {
	if want, ok := im.opts.InputShapes[in.GetName()]; ok {
		if !slices.Equal(shape, want) {
			return fmt.Errorf("Options.InputShapes gives %s", graph.ShapeString(want))
		}
		return nil
	}
	declared := in.GetType().GetTensorType().GetShape()
	if declared == nil {
		return nil
	}
	fits := len(declared.GetDim()) == len(shape)
	dims := make([]string, len(declared.GetDim()))
	for i, d := range declared.GetDim() {
		v, fixed := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue)
		if !fixed {
			dims[i] = cmp.Or(d.GetDimParam(), "?")
			continue
		}
		dims[i] = strconv.FormatInt(v.DimValue, 10)
		fits = fits && int64(shape[i]) == v.DimValue
	}
	if !fits {
		return fmt.Errorf("the model declares (%s)", strings.Join(dims, ","))
	}
	return nil
}

// inputType returns a graph input's dtype and shape, from the model or
// from Options.InputShapes.
func (im *importer) inputType(in *onnxpb.ValueInfoProto) (tensor.Dtype, []int, error) {
	tt := in.GetType().GetTensorType()
	if tt == nil {
		return tensor.Dtype{}, nil, errors.New("not a tensor (sequences, maps and optionals are not supported)")
	}
	dtype, err := dtypeOf(tt.GetElemType())
	if err != nil {
		return tensor.Dtype{}, nil, err
	}
	if shape, ok := im.opts.InputShapes[in.GetName()]; ok {
		return dtype, shape, nil
	}
	if tt.GetShape() == nil {
		return tensor.Dtype{}, nil, errors.New("the model gives no shape: give it in Options.InputShapes")
	}
	dims := make([]int64, len(tt.GetShape().GetDim()))
	for i, d := range tt.GetShape().GetDim() {
		if _, ok := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); !ok {
			return tensor.Dtype{}, nil, fmt.Errorf("dimension %d is symbolic (%q): give the shape in Options.InputShapes", i, d.GetDimParam())
		}
		dims[i] = d.GetDimValue()
	}
	shape, err := shapeOf(dims, dtype)
	return dtype, shape, err
}

// lookup returns the node of a value, searching the enclosing graphs too,
// or nil.
func (im *importer) lookup(name string) *graph.Node {
	for ; im != nil; im = im.parent {
		if n, ok := im.values[name]; ok {
			return n
		}
	}
	return nil
}

// defines reports whether a value of this name is defined here or in an
// enclosing graph.
func (im *importer) defines(name string) bool { return im.lookup(name) != nil }

// node builds one ONNX node.
func (im *importer) node(n *onnxpb.NodeProto) error {
	in := make([]*graph.Node, len(n.GetInput()))
	for i, name := range n.GetInput() {
		if name != "" {
			in[i] = im.lookup(name)
		}
	}
	c := &nodeContext{im: im, proto: n, in: in}
	start := im.g.Len()
	build, ok := importers[n.GetOpType()]
	if !ok || (n.GetDomain() != "" && n.GetDomain() != "ai.onnx") {
		return fmt.Errorf("node %s: op %s of domain %q is not supported", nodeName(n), n.GetOpType(), n.GetDomain())
	}
	var outs []*graph.Node
	err := c.checkAttributes()
	if err == nil {
		outs, err = build(c)
	}
	if err == nil {
		err = im.g.Err()
	}
	if c.bad != nil { // what it built read a zero for the attribute
		err = c.bad
	}
	var ge *graph.Error
	if errors.As(err, &ge) { // a build error: the import's error names the caller once
		err = fmt.Errorf("%s: %v", ge.Op, ge.Err)
	}
	if err != nil {
		return fmt.Errorf("node %s, opset %d: %v", nodeName(n), im.opset, err)
	}
	for i, name := range n.GetOutput() {
		if name == "" {
			continue
		}
		if i >= len(outs) || outs[i] == nil {
			return fmt.Errorf("node %s, opset %d: output %d (%q) is not supported", nodeName(n), im.opset, i, name)
		}
		o, err := im.fold(outs[i], start)
		if err != nil {
			return fmt.Errorf("node %s: %v", nodeName(n), err)
		}
		if o.Kind() == graph.KindOp && o.ID() >= start && o.Name() == "" {
			o.SetName(name)
		}
		im.values[name] = o
	}
	return nil
}

// keys returns a map's keys, sorted.
func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

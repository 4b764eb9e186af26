package onnx

import (
	"errors"
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
)

// ONNX's Scan as ops.Scan: its body graph is imported once, in the loop
// body's own graph, reading the enclosing graph's values by name as ONNX
// subgraphs do. Sequences scanned along another axis than 0, or in
// reverse, are transposed or reversed around a forward scan over axis 0.
func init() {
	register(map[string]importFunc{"Scan": importScan})
	accept(map[string]attrs{"Scan": {"body": {}, "num_scan_inputs": {}, "scan_input_axes": {}, "scan_input_directions": {},
		"scan_output_axes": {}, "scan_output_directions": {}}})
}

func importScan(c *nodeContext) ([]*graph.Node, error) {
	if c.im.opset < 9 {
		return nil, unsupported("Scan before opset 9 (sequence lengths and a batch axis)")
	}
	body := c.attr("body").GetG()
	if body == nil {
		return nil, errors.New("no body graph")
	}
	nScan := c.attrInt("num_scan_inputs", -1)
	in, err := c.inputs(len(c.in))
	if err != nil {
		return nil, err
	}
	if nScan < 1 || nScan > len(in) {
		return nil, fmt.Errorf("num_scan_inputs %d with %d inputs", nScan, len(in))
	}
	nState := len(in) - nScan
	nOut := len(body.GetOutput()) - nState
	if len(body.GetInput()) != len(in) || nOut < 0 {
		return nil, fmt.Errorf("the body has %d inputs and %d outputs for %d states and %d sequences",
			len(body.GetInput()), len(body.GetOutput()), nState, nScan)
	}
	// Each list given has a value per scan input or output: a longer one
	// was cut short, a shorter one filled with zeros.
	for i, name := range []string{"scan_input_axes", "scan_input_directions", "scan_output_axes", "scan_output_directions"} {
		want, of := nScan, "input"
		if i >= 2 {
			want, of = nOut, "output"
		}
		if v := c.attrInts(name); c.has(name) && len(v) != want {
			return nil, fmt.Errorf("%s %v: want one value per scan %s (%d)", name, v, of, want)
		}
	}
	at := func(v []int, i int) int {
		if i < len(v) {
			return v[i]
		}
		return 0
	}
	inAxes, inDirs := c.attrInts("scan_input_axes"), c.attrInts("scan_input_directions")
	seqs := make([]*graph.Node, nScan)
	for i, x := range in[nState:] {
		axis, err := graph.NormalizeAxis(at(inAxes, i), max(x.Type().Rank(), 1))
		if err != nil || x.Type().Rank() == 0 {
			return nil, fmt.Errorf("scan input %d %v: axis %d: %v", i, x.Type(), at(inAxes, i), err)
		}
		x = moveAxis(x, axis, 0)
		if at(inDirs, i) != 0 {
			x = reverseLeading(x)
		}
		if i > 0 && x.Shape()[0] != seqs[0].Shape()[0] {
			return nil, fmt.Errorf("scan inputs of lengths %d and %d", seqs[0].Shape()[0], x.Shape()[0])
		}
		seqs[i] = x
	}
	var bodyErr error
	final, ys := ops.Scan(func(carry, xs []*graph.Node) ([]*graph.Node, []*graph.Node) {
		outs, err := c.im.subgraph(body, append(append([]*graph.Node(nil), carry...), xs...))
		if err != nil {
			bodyErr = err
			return carry, nil
		}
		return outs[:nState], outs[nState:]
	}, in[:nState], seqs)
	if bodyErr != nil {
		return nil, fmt.Errorf("body: %v", bodyErr)
	}
	if err := c.g().Err(); err != nil {
		return nil, err
	}
	outAxes, outDirs := c.attrInts("scan_output_axes"), c.attrInts("scan_output_directions")
	outs := append([]*graph.Node(nil), final...) // Scan's slices are its nodes' own list of outputs: not to be written
	for j, y := range ys {
		if at(outDirs, j) != 0 {
			y = reverseLeading(y)
		}
		axis, err := graph.NormalizeAxis(at(outAxes, j), y.Type().Rank())
		if err != nil {
			return nil, fmt.Errorf("scan output %d: %v", j, err)
		}
		outs = append(outs, moveAxis(y, 0, axis))
	}
	return outs, nil
}

// moveAxis moves x's axis from to position to.
func moveAxis(x *graph.Node, from, to int) *graph.Node {
	if from == to {
		return x
	}
	var perm []int
	for i := range x.Type().Rank() {
		if i != from {
			perm = append(perm, i)
		}
	}
	perm = append(perm[:to], append([]int{from}, perm[to:]...)...)
	return viaFloat1(x, func(x *graph.Node) *graph.Node { return ops.Transpose(x, perm...) })
}

// reverseLeading reverses x along axis 0.
func reverseLeading(x *graph.Node) *graph.Node {
	n := x.Shape()[0]
	if bad := countFails(x.Graph(), n); bad != nil {
		return bad
	}
	idx := make([]int64, n)
	for i := range idx {
		idx[i] = int64(n - 1 - i)
	}
	t, _ := graph.FromInt64s(graph.Int64, idx, n)
	return viaFloat1(x, func(x *graph.Node) *graph.Node { return ops.Gather(x, x.Graph().Const(t)) })
}

// subgraph imports a body graph given its inputs' nodes (of the graph the
// body is built in), returning its outputs' nodes. The body reads the
// enclosing graphs' values by name.
func (im *importer) subgraph(gp *onnxpb.GraphProto, inputs []*graph.Node) ([]*graph.Node, error) {
	if len(gp.GetInput()) != len(inputs) || len(inputs) == 0 {
		return nil, fmt.Errorf("%d inputs, given %d", len(gp.GetInput()), len(inputs))
	}
	bound := map[string]*graph.Node{}
	for i, in := range gp.GetInput() {
		bound[in.GetName()] = inputs[i]
	}
	return im.subgraphIn(inputs[0].Graph(), gp, bound)
}

// subgraphIn imports a body graph in g, its values named in bound (its
// inputs, or enclosing values passed in) given, returning its outputs'
// nodes. Other names are read from the enclosing graphs.
func (im *importer) subgraphIn(g *graph.Graph, gp *onnxpb.GraphProto, bound map[string]*graph.Node) ([]*graph.Node, error) {
	sub := &importer{parent: im, g: g, opset: im.opset, dir: im.dir, values: map[string]*graph.Node{}, opts: Options{Frozen: true}}
	for name, n := range bound {
		sub.values[name] = n
	}
	for _, t := range gp.GetInitializer() {
		v, err := readTensor(t, im.dir)
		if err != nil {
			return nil, fmt.Errorf("initializer %q: %v", t.GetName(), err)
		}
		sub.values[t.GetName()] = sub.g.Const(v)
	}
	order, err := sortNodes(gp, im.defines)
	if err != nil {
		return nil, err
	}
	for _, n := range order {
		if err := sub.node(n); err != nil {
			return nil, err
		}
	}
	outs := make([]*graph.Node, len(gp.GetOutput()))
	for i, o := range gp.GetOutput() {
		if outs[i] = sub.lookup(o.GetName()); outs[i] == nil {
			return nil, fmt.Errorf("output %q is produced by no node", o.GetName())
		}
	}
	return outs, nil
}

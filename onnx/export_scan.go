package onnx

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
)

// multi writes a node of several outputs, once for all of them: Scan, as
// ONNX's Scan.
func (e *exporter) multi(n *graph.Node, op graph.MultiOp) error {
	if _, done := e.names[n]; done { // written with a sibling
		return nil
	}
	group := n.Outputs()
	names := make([]string, len(group))
	for i, o := range group {
		base := o.Name()
		if base == "" {
			base = fmt.Sprintf("%s_%d", o.OpName(), o.ID())
		}
		names[i] = e.fresh(base)
		e.names[o] = names[i]
	}
	a, ok := ops.Describe(op)
	sub, isSub := op.(graph.SubgraphOp)
	if !ok || !isSub || op.Name() != "Scan" && op.Name() != "Scan(reverse)" {
		return fmt.Errorf("op %s has no ONNX export", n.OpName())
	}
	return e.scan(n, a, sub.Subgraphs()[0], names)
}

// scan writes a Scan: its carries and sums are ONNX's state variables (a
// sum's body output adds the step's term), its step outputs and the
// carries each step began with are scan outputs, and the body reads the
// values it captured by their names in the enclosing graph. A loop
// without sequences scans a sequence of zeros.
func (e *exporter) scan(n *graph.Node, a ops.Attributes, body *graph.Subgraph, names []string) error {
	C, A, S := a.Carries, a.Sums, a.Sequences
	K := len(body.Inputs) - C - S
	ins := n.Inputs()
	if K < 0 || len(ins) != C+A+S+K || len(body.Outputs) != len(names) {
		return fmt.Errorf("Scan: %d inputs and %d outputs do not fit %d carries, %d sums and %d sequences", len(ins), len(body.Outputs), C, A, S)
	}
	base := names[0]
	b := &exporter{opset: e.opset, values: e.values, names: map[*graph.Node]string{}, used: e.used, g: &onnxpb.GraphProto{Name: ptr(base + "/body")}}
	input := func(node *graph.Node, t graph.Type, what string) string {
		name := b.fresh(base + "/" + what)
		if node != nil {
			b.names[node] = name
		}
		b.g.Input = append(b.g.Input, valueInfo(name, t))
		return name
	}
	carries := make([]string, C)
	for i := range C {
		carries[i] = input(body.Inputs[i], body.Inputs[i].Type(), "carry")
	}
	sums := make([]string, A)
	for i := range A {
		sums[i] = input(nil, body.Outputs[C+i].Type(), "sum")
	}
	for i := range S {
		input(body.Inputs[C+i], body.Inputs[C+i].Type(), "step")
	}
	scanInputs := append([]string(nil), namesOf(e, ins[:C+A+S])...)
	if S == 0 { // ONNX's Scan needs a sequence: zeros, one per step
		zeros := e.constant(base+"/steps", graph.TypeOf(graph.Float32, a.Steps), graph.NewDense(graph.Float32, a.Steps), n.Site())
		scanInputs = append(scanInputs, zeros)
		input(nil, graph.TypeOf(graph.Float32), "step")
		S = 1
	}
	for k := range K { // captured values: the enclosing graph's names
		b.names[body.Inputs[C+a.Sequences+k]] = e.names[ins[C+A+a.Sequences+k]]
	}
	for _, m := range reachable(body.Outputs) {
		if _, named := b.names[m]; named {
			continue
		}
		var err error
		switch {
		case m.Kind() == graph.KindInput:
			err = fmt.Errorf("the body reads %v, which is not one of its inputs", m)
		case m.Kind() != graph.KindOp:
			err = b.leaf(m)
		default:
			err = b.op(m)
		}
		if err != nil {
			return fmt.Errorf("Scan's body: %v", err)
		}
	}
	outputs := func(from, count int, opType string, extra func(i int) []string) {
		for i := range count {
			o := body.Outputs[from+i]
			name := b.fresh(names[from+i] + "/body")
			b.emit(o, opType, append(extra(i), b.names[o]), name, nil)
			b.g.Output = append(b.g.Output, valueInfo(name, o.Type()))
		}
	}
	none := func(int) []string { return nil }
	outputs(0, C, "Identity", none)
	outputs(C, A, "Add", func(i int) []string { return []string{sums[i]} })
	outputs(C+A, len(body.Outputs)-2*C-A, "Identity", none)
	for i := range C { // the carry each step began with
		name := b.fresh(names[len(names)-C+i] + "/body")
		b.emit(n, "Identity", []string{carries[i]}, name, nil)
		b.g.Output = append(b.g.Output, valueInfo(name, body.Inputs[i].Type()))
	}
	attrs := []*onnxpb.AttributeProto{
		{Name: ptr("body"), Type: ptr(onnxpb.AttributeProto_GRAPH), G: b.g},
		attrInt("num_scan_inputs", S),
	}
	if a.Reverse {
		attrs = append(attrs, attrInts("scan_input_directions", repeat(S, 1)), attrInts("scan_output_directions", repeat(len(names)-C-A, 1)))
	}
	site := n.Site()
	e.g.Node = append(e.g.Node, &onnxpb.NodeProto{OpType: ptr("Scan"), Name: ptr(base), Input: scanInputs, Output: names, Attribute: attrs, DocString: &site})
	return nil
}

// namesOf returns the value names of nodes.
func namesOf(e *exporter, nodes []*graph.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = e.names[n]
	}
	return out
}

// repeat is n copies of v.
func repeat[T any](n int, v T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

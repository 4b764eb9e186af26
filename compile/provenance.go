package compile

import (
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Absorbed returns the graph nodes a fused instruction (pass "fuse")
// computes, one per step of its expression in evaluation order, Node last;
// nil for any other instruction. Nodes the compiler made have no graph node
// and are left out.
func (in *Instruction) Absorbed() []*graph.Node {
	f, ok := in.Op.(*ops.FusedOp)
	if !ok {
		return nil
	}
	var nodes []*graph.Node
	for _, s := range f.Steps() {
		if s.Node != nil {
			nodes = append(nodes, s.Node)
		}
	}
	return nodes
}

// Culprit returns the graph node whose value first goes NaN or infinite on
// the way to element elem of the instruction's output, given the values
// of its inputs: for a fused instruction, the node of the first step that
// computes a bad value there; otherwise, or if no step does, Node. The
// steps are recomputed from the inputs, so a fused instruction that wrote
// its output over an input's slot names Node.
func (in *Instruction) Culprit(inputs []*tensor.Dense, elem int) *graph.Node {
	f, ok := in.Op.(*ops.FusedOp)
	if !ok || slices.Contains(in.In, in.Out[0]) {
		return in.Node
	}
	if j := f.FirstNonFinite(inputs, elem); j >= 0 && f.Steps()[j].Node != nil {
		return f.Steps()[j].Node
	}
	return in.Node
}

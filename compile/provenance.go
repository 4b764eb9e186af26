package compile

import (
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Absorbed returns the graph nodes a fused instruction (pass "fuse")
// computes, one per step of its expression in evaluation order (Node among
// them); nil for any other instruction. Nodes the compiler made have no graph node
// and are left out.
func (in *Instruction) Absorbed() []*graph.Node {
	f := in.Fused()
	if f == nil {
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
	if in == nil {
		return nil
	}
	f := in.Fused()
	if f == nil || slices.ContainsFunc(in.Out, func(s int) bool { return slices.Contains(in.In, s) }) {
		return in.Node
	}
	if j := f.FirstNonFinite(inputs, elem); j >= 0 && f.Steps()[j].Node != nil {
		return f.Steps()[j].Node
	}
	return in.Node
}

// Fused returns the fused op a fused instruction runs, of one output or
// several; nil for any other (or a nil) instruction.
func (in *Instruction) Fused() *ops.FusedOp {
	if in == nil {
		return nil
	}
	switch op := in.Op.(type) {
	case *ops.FusedOp:
		return op
	case nil:
		if m, ok := in.Multi.(ops.FusedMulti); ok {
			return m.Fused()
		}
	}
	return nil
}

package compile

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Styles of the program's DOT drawing beyond graph.DotStyle's.
const (
	dotStyleInstruction = `shape=box, style="rounded,filled", fillcolor="#fff3cd"`
	dotStyleChain       = `style=bold, color="#adb5bd"`
	dotStyleUpdate      = `style=dashed, color="#198754", constraint=false, label="update"`
	dotStyleFused       = `style="rounded,dashed"; color="#b08800"`
	dotStyleFusedNode   = `shape=ellipse, style=dotted`
	dotStyleFusedEdge   = `style=dotted`
)

// WriteDot writes p as a Graphviz DOT digraph of what a machine runs: the
// instructions, in execution order, as a chain of boxes labelled "#i Op";
// the slots as nodes labelled with their number, their type and every graph
// node they hold, styled as graph.WriteDot styles those nodes; an edge from
// each slot an instruction reads to the instruction and from the
// instruction to each slot it writes; and a dashed edge for each parameter
// update (a loop on the parameter's slot where the update is computed in
// place). A fused instruction (pass "fuse") is drawn inside a cluster with
// the graph nodes it computes, one per step of its expression, and a dotted
// edge for each value a step passes to another (and each output step's to
// the instruction). The same program always gives the same bytes.
func WriteDot(w io.Writer, p *Program) error {
	if p == nil {
		return errors.New("nabla: compile.WriteDot: nil program")
	}
	if w == nil {
		return errors.New("nabla: compile.WriteDot: nil writer")
	}
	held, outputs := p.slotContents()
	var b strings.Builder
	b.WriteString("digraph program {\n")
	var label strings.Builder // reused: a slot may hold thousands of nodes
	for i, s := range p.slots {
		label.Reset()
		fmt.Fprintf(&label, "slot %d\n%v", i, s.Type)
		for _, n := range held[i] {
			fmt.Fprintf(&label, "\nn%d %s", n.ID(), graph.DotOpLabel(n))
			if n.Name() != "" {
				fmt.Fprintf(&label, " %q", n.Name())
			}
		}
		fmt.Fprintf(&b, "\ts%d [label=%s, %s];\n", i, graph.DotQuote(label.String()), graph.DotStyle(s.Kind, outputs[i]))
	}
	for i := range p.instrs {
		label := fmt.Sprintf("#%d %s", i, instructionLabel(&p.instrs[i]))
		if f := p.instrs[i].Fused(); f != nil {
			writeFusedCluster(&b, i, label, f)
			continue
		}
		fmt.Fprintf(&b, "\ti%d [label=%s, %s];\n", i, graph.DotQuote(label), dotStyleInstruction)
	}
	for i := 1; i < len(p.instrs); i++ {
		fmt.Fprintf(&b, "\ti%d -> i%d [%s];\n", i-1, i, dotStyleChain)
	}
	for i, in := range p.instrs {
		for _, s := range in.In {
			fmt.Fprintf(&b, "\ts%d -> i%d;\n", s, i)
		}
		for _, s := range in.Out {
			fmt.Fprintf(&b, "\ti%d -> s%d;\n", i, s)
		}
	}
	for _, u := range p.updates {
		fmt.Fprintf(&b, "\ts%d -> s%d [%s];\n", u.From, u.Slot, dotStyleUpdate)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFusedCluster draws fused instruction i, labelled label, in a
// cluster with a node per step of its expression (fi_j for step j), named
// after the graph node the step computes.
func writeFusedCluster(b *strings.Builder, i int, label string, f *ops.FusedOp) {
	fmt.Fprintf(b, "\tsubgraph cluster_i%d {\n\t\tlabel=%s;\n\t\t%s;\n", i, graph.DotQuote(label), dotStyleFused)
	fmt.Fprintf(b, "\t\ti%d [label=%s, %s];\n", i, graph.DotQuote(label), dotStyleInstruction)
	steps := f.Steps()
	for j, s := range steps {
		stepLabel := s.Op.Name()
		if l, ok := s.Op.(graph.DotLabeler); ok {
			stepLabel = l.DotLabel()
		}
		if n := s.Node; n != nil {
			stepLabel = fmt.Sprintf("n%d %s", n.ID(), stepLabel)
			if n.Name() != "" {
				stepLabel += fmt.Sprintf(" %q", n.Name())
			}
		}
		fmt.Fprintf(b, "\t\tf%d_%d [label=%s, %s];\n", i, j, graph.DotQuote(stepLabel), dotStyleFusedNode)
	}
	for j, s := range steps {
		for _, a := range s.Args {
			if k := a - f.NumInputs(); k >= 0 {
				fmt.Fprintf(b, "\t\tf%d_%d -> f%d_%d [%s];\n", i, k, i, j, dotStyleFusedEdge)
			}
		}
	}
	for _, j := range f.Outputs() {
		fmt.Fprintf(b, "\t\tf%d_%d -> i%d [%s];\n", i, j, i, dotStyleFusedEdge)
	}
	b.WriteString("\t}\n")
}

// instructionLabel is the op's DOT label, or its name.
func instructionLabel(in *Instruction) string {
	var op any = in.Op
	if in.Op == nil {
		op = in.Multi
	}
	if l, ok := op.(graph.DotLabeler); ok {
		return l.DotLabel()
	}
	return in.Name()
}

// slotContents lists, for each slot, the graph nodes it holds in the order
// they appear (the slot's own node, the nodes instructions write into it,
// then requested outputs, which compilation may have merged into another
// value), and marks the slots holding requested outputs.
func (p *Program) slotContents() (held [][]*graph.Node, outputs []bool) {
	held = make([][]*graph.Node, len(p.slots))
	outputs = make([]bool, len(p.slots))
	seen := map[*graph.Node]bool{}
	hold := func(s int, n *graph.Node) {
		if n != nil && !seen[n] && s >= 0 && s < len(held) {
			seen[n] = true
			held[s] = append(held[s], n)
		}
	}
	for i, s := range p.slots {
		hold(i, s.Node)
	}
	for i := range p.instrs {
		in := &p.instrs[i]
		outs := in.Node.Outputs()
		if f := in.Fused(); f != nil {
			outs = mapSlice(f.Outputs(), func(j int) *graph.Node { return f.Steps()[j].Node })
		}
		for k, s := range in.Out {
			if k < len(outs) {
				hold(s, outs[k])
			}
		}
	}
	for _, n := range p.outputs {
		if s, ok := p.SlotOf(n); ok {
			hold(s, n)
			outputs[s] = true
		}
	}
	return held, outputs
}

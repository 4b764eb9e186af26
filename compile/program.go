package compile

import (
	"fmt"
	"strconv"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Program is a compiled graph: instructions over numbered slots, ready for
// vm.New. It is immutable and may be shared across goroutines. The methods
// of a nil *Program return zero values: no graph, instructions or slots.
type Program struct {
	graph     *graph.Graph
	instrs    []Instruction
	slots     []Slot
	slotNodes [][]*graph.Node // the nodes each slot holds, in turn
	inputs    []*graph.Node
	params    []*graph.Node
	outputs   []*graph.Node
	nodes     map[*graph.Node]int // requested outputs, inputs and params -> slot
	updates   []Update
}

// Instruction computes one op application: it reads the In slots and
// writes the Out slots (several for a multi-output op). A slot may hold
// values of different shapes in turn (of one dtype and size), so each
// operand comes with the type it has at this instruction. An Out slot may
// also be an In slot, when the op computes in place (graph.InPlacer).
type Instruction struct {
	Op       graph.Op      // a single-output op, or nil
	Multi    graph.MultiOp // a multi-output op, or nil
	Node     *graph.Node   // the graph node it computes, for errors and DOT
	In       []int
	Out      []int
	InTypes  []graph.Type // the types of In's values
	OutTypes []graph.Type // the types of Out's values
	// Bodies are the programs of the subgraphs the op runs (a loop's
	// body; see graph.SubgraphOp), in the op's order.
	Bodies []*Program
}

// Name is the instruction's op name ("" for a nil or zero Instruction).
func (in *Instruction) Name() string {
	switch {
	case in == nil:
		return ""
	case in.Op != nil:
		return in.Op.Name()
	case in.Multi != nil:
		return in.Multi.Name()
	}
	return ""
}

// Slot is storage in a machine for one value at a time: several computed
// values whose lifetimes do not overlap may share a slot (see SlotNodes).
// They have the same dtype and number of elements.
type Slot struct {
	Type  graph.Type    // the type of the slot's first value
	Kind  graph.Kind    // input, param and const slots are not computed
	Node  *graph.Node   // the first graph node held in the slot
	Const *tensor.Dense // a constant slot's value
}

// Update writes the value of slot From into parameter Param's slot after
// every instruction has run. From is Slot when the compiler computes the
// value in the parameter's own slot (pass inplace), after every
// instruction reading the old value: nothing is left to write.
type Update struct {
	Param *graph.Node
	Slot  int
	From  int
}

// Graph returns the graph the program was compiled from.
func (p *Program) Graph() *graph.Graph {
	if p == nil {
		return nil
	}
	return p.graph
}

// Instructions returns the program's instructions in execution order. The
// slice must not be modified.
func (p *Program) Instructions() []Instruction {
	if p == nil {
		return nil
	}
	return p.instrs
}

// Slots returns the program's slots. The slice must not be modified.
func (p *Program) Slots() []Slot {
	if p == nil {
		return nil
	}
	return p.slots
}

// SlotNodes returns the graph nodes whose values the slot holds in turn
// during a run, in execution order, then the requested outputs that
// compilation found equal to one of them (x·1 is x). The slice must not be
// modified.
func (p *Program) SlotNodes(slot int) []*graph.Node {
	if p == nil || slot < 0 || slot >= len(p.slotNodes) {
		return nil
	}
	return p.slotNodes[slot]
}

// Inputs returns the input nodes a run must feed, in creation order.
func (p *Program) Inputs() []*graph.Node {
	if p == nil {
		return nil
	}
	return p.inputs
}

// Outputs returns the requested output nodes, in the order given to Compile.
func (p *Program) Outputs() []*graph.Node {
	if p == nil {
		return nil
	}
	return p.outputs
}

// Params returns the parameters the program reads or updates.
func (p *Program) Params() []*graph.Node {
	if p == nil {
		return nil
	}
	return p.params
}

// Updates returns the parameter updates applied after each run.
func (p *Program) Updates() []Update {
	if p == nil {
		return nil
	}
	return p.updates
}

// SlotOf returns the slot holding node, for the program's outputs, inputs
// and parameters.
func (p *Program) SlotOf(n *graph.Node) (int, bool) {
	if p == nil {
		return 0, false
	}
	s, ok := p.nodes[n]
	return s, ok
}

// String lists the program, one instruction a line, then its outputs and
// updates:
//
//	%0 = Exp x
//	%1 = Scale(0.5) %0
//	%0 = Mul %0 2
//	return %1 %0
//	w ← %0
//	v ← (in place)
//
// Ops show their DOT label (graph.DotLabeler) or name; inputs and
// parameters go by name, scalar constants by value, and computed slots are
// numbered %0, %1, … as they are first written: an instruction writing a
// slot already named reuses its storage. An update computed in its
// parameter's slot (the instruction writes the parameter) is "in place".
// The programs of an instruction's subgraphs (a Scan's body) follow it,
// indented.
func (p *Program) String() string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	names := make([]string, len(p.slots))
	temps := 0
	name := func(slot int) string {
		if names[slot] != "" {
			return names[slot]
		}
		s := p.slots[slot]
		switch {
		case s.Kind == graph.KindConst && s.Type.IsScalar():
			names[slot] = graph.ScalarString(s.Const)
		case s.Kind == graph.KindConst:
			names[slot] = "const" + graph.ShapeString(s.Type.Shape)
		case s.Kind != graph.KindOp && s.Node.Name() != "":
			names[slot] = s.Node.Name()
		case s.Kind != graph.KindOp:
			names[slot] = fmt.Sprintf("%v#%d", s.Kind, s.Node.ID())
		default:
			names[slot] = "%" + strconv.Itoa(temps)
			temps++
		}
		return names[slot]
	}
	list := func(slots []int, sep string) string {
		return strings.Join(mapSlice(slots, name), sep)
	}
	for i := range p.instrs {
		in := &p.instrs[i]
		args := list(in.In, " ") // named first: in place, an input is an output
		fmt.Fprintf(&b, "%s = %s", list(in.Out, ", "), instructionLabel(in))
		if args != "" {
			b.WriteString(" " + args)
		}
		b.WriteByte('\n')
		for k, body := range in.Bodies {
			fmt.Fprintf(&b, "  body %d:\n", k)
			for _, line := range strings.SplitAfter(strings.TrimSuffix(body.String(), "\n"), "\n") {
				b.WriteString("    " + line)
			}
			b.WriteByte('\n')
		}
	}
	if len(p.outputs) > 0 {
		b.WriteString("return " + list(mapSlice(p.outputs, func(n *graph.Node) int { return p.nodes[n] }), " ") + "\n")
	}
	for _, u := range p.updates {
		from := name(u.From)
		if u.From == u.Slot {
			from = "(in place)"
		}
		fmt.Fprintf(&b, "%s ← %s\n", name(u.Slot), from)
	}
	return b.String()
}

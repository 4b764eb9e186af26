package compile

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Program is a compiled graph: instructions over numbered slots, ready for
// vm.New. It is immutable and may be shared across goroutines.
type Program struct {
	graph   *graph.Graph
	instrs  []Instruction
	slots   []Slot
	inputs  []*graph.Node
	params  []*graph.Node
	nodes   map[*graph.Node]int // requested outputs, inputs and params -> slot
	outputs []*graph.Node
	updates []Update
}

// Instruction computes one op application: it reads the In slots and
// writes the Out slots (several for a multi-output op).
type Instruction struct {
	Op    graph.Op      // a single-output op, or nil
	Multi graph.MultiOp // a multi-output op, or nil
	Node  *graph.Node   // the graph node it computes, for errors and DOT
	In    []int
	Out   []int
}

// Name is the instruction's op name.
func (in *Instruction) Name() string {
	if in.Op != nil {
		return in.Op.Name()
	}
	return in.Multi.Name()
}

// Slot is one value's storage in a machine.
type Slot struct {
	Type  graph.Type
	Kind  graph.Kind    // input, param and const slots are not computed
	Node  *graph.Node   // the (first) graph node held in the slot
	Const *tensor.Dense // a constant slot's value
}

// Update writes the value of slot From into parameter Param's slot after
// every instruction has run.
type Update struct {
	Param *graph.Node
	Slot  int
	From  int
}

// Graph returns the graph the program was compiled from.
func (p *Program) Graph() *graph.Graph { return p.graph }

// Instructions returns the program's instructions in execution order. The
// slice must not be modified.
func (p *Program) Instructions() []Instruction { return p.instrs }

// Slots returns the program's slots. The slice must not be modified.
func (p *Program) Slots() []Slot { return p.slots }

// Inputs returns the input nodes a run must feed, in creation order.
func (p *Program) Inputs() []*graph.Node { return p.inputs }

// Outputs returns the requested output nodes, in the order given to Compile.
func (p *Program) Outputs() []*graph.Node { return p.outputs }

// Params returns the parameters the program reads or updates.
func (p *Program) Params() []*graph.Node { return p.params }

// Updates returns the parameter updates applied after each run.
func (p *Program) Updates() []Update { return p.updates }

// SlotOf returns the slot holding node, for the program's outputs, inputs
// and parameters.
func (p *Program) SlotOf(n *graph.Node) (int, bool) {
	s, ok := p.nodes[n]
	return s, ok
}

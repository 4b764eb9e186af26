package ops

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// CondBranch is one branch of a Cond: its outputs from the operands. It is
// called once, to build the branch's graph.
type CondBranch func(operands []*graph.Node) []*graph.Node

// Cond computes then(operands) when pred is nonzero and els(operands)
// otherwise. pred holds one value, of any dtype; the branches return the
// same number of outputs, of the same types.
//
// Each branch is built once, in a graph of its own nested in the
// innermost graph of pred and the operands (graph.NewSub), as Scan's body
// is; a branch may read any node of the enclosing graphs, parameters
// included: those are captured, and gradients flow to them. Only the
// branch pred selects runs: a machine compiles each branch into a program
// of its own and runs one of them. An op a branch applies to captured
// values alone, reading no operand, is built where those values are, as
// any op is, and runs whichever branch is taken: give a branch the values
// it must compute on only when taken as operands. Inside a loop's body
// (Scan), the Cond is built in the body when pred or an operand is a
// value of the body; the branches then read the body's values as
// operands or by capture alike. A vm.Runner traces the branches again at
// another batch size; they must then read the same values of the
// enclosing graphs (the same nodes, or those their functions make again
// with the same ops from them, random draws excepted), none computed from
// the batch: pass values computed from the batch as operands.
// Batched by compile.Vmap with a predicate that differs across the
// examples, both branches run, for every example, and each example's
// outputs are picked from its branch: their values and derivatives are
// those of its own run, but the time is both branches'.
//
// Cond is differentiable to any order, in both modes, everywhere but at
// pred's switching point: its gradient is another Cond, on the same pred,
// whose branches are the vector–Jacobian products of these branches, and
// its forward rule is a Cond whose branches push tangents through them.
// pred gets no gradient (the result is piecewise constant in it).
//
// A branch that panics, fails to build, or returns outputs whose number
// or types differ from the other branch's is an error recorded on the
// graph, naming the caller's file:line, as for any op.
func Cond(pred *graph.Node, then, els CondBranch, operands []*graph.Node) []*graph.Node {
	return buildCond(pred, then, els, operands, false)
}

// buildCond is Cond; gate marks the Cond of a loop's step that runs the
// user's body in its then branch (gatedScan), whose derivatives' errors
// are the body's (see branchGradError).
func buildCond(pred *graph.Node, then, els CondBranch, operands []*graph.Node, gate bool) []*graph.Node {
	s := graph.CallerSite()
	all := append([]*graph.Node{pred}, operands...)
	g := graph.Innermost(all...)
	outputs := 1 // how many nodes an error returns: as many as a branch returned, if more
	fail := func(format string, args ...any) []*graph.Node {
		return repeat(g.Fail(&graph.Error{Op: "Cond", Err: fmt.Errorf(format, args...), Site: s}), outputs)
	}
	for i, n := range all {
		if n == nil {
			if g == nil {
				g = firstGraph(all)
			}
			if i == 0 {
				return fail("pred is nil")
			}
			return fail("operand %d is nil", i-1)
		}
	}
	if p := graph.Poisoned(all...); p != nil {
		return []*graph.Node{p}
	}
	if g == nil {
		g = pred.Graph()
		return fail("pred and operands belong to unrelated graphs")
	}
	if then == nil || els == nil {
		return fail("a branch is nil")
	}
	tr := &condTracer{graph: g, branches: [2]CondBranch{then, els}, gate: gate}
	op, outer, returned, err := tr.trace(typesOf(operands))
	outputs = max(outputs, returned)
	if err != nil {
		return fail("%v", err)
	}
	if pred.Type().Size() != 1 {
		return fail("pred has type %v: it must hold one value", pred.Type())
	}
	return graph.ApplyMulti(op, append(all, outer...)...)
}

// branchNames name Cond's branches in errors.
var branchNames = [2]string{"then", "else"}

// condTracer builds a Cond's op from its branches for given operand types:
// once when the Cond is built, again when it is replayed on inputs of
// other shapes (graph.Replay).
type condTracer struct {
	graph    *graph.Graph
	branches [2]CondBranch
	gate     bool // a loop's step (see buildCond)
}

// trace builds each branch in a nested graph and returns the op, the
// nodes of enclosing graphs the branches read (the then branch's first),
// and the most outputs a branch returned.
func (tr *condTracer) trace(operands []graph.Type) (op *condOp, outer []*graph.Node, returned int, err error) {
	op = &condOp{operands: len(operands), tracer: tr, gate: tr.gate}
	for b, branch := range tr.branches {
		name := branchNames[b] + " branch"
		sub := tr.graph.NewSub()
		ins := make([]*graph.Node, len(operands))
		for i, t := range operands {
			ins[i] = sub.Input(fmt.Sprintf("operand%d", i), t.DType, t.Shape...)
		}
		outs, _, terr := traceIn(sub, name, func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) { return branch(c), nil }, ins, nil)
		returned = max(returned, len(outs))
		if terr != nil {
			return nil, nil, returned, terr
		}
		outs = slices.Clone(outs)
		if err := captureOutputs(sub, name, outs); err != nil {
			return nil, nil, returned, err
		}
		o, captured := sub.Captures()
		if err := checkBodyLeaves(sub, name, "operands", slices.Concat(ins, captured)); err != nil {
			return nil, nil, returned, err
		}
		op.branches[b] = &graph.Subgraph{Inputs: slices.Concat(ins, captured), Outputs: outs}
		op.captures[b] = len(captured)
		outer = append(outer, o...)
	}
	if err := op.agree(); err != nil {
		return nil, nil, returned, err
	}
	op.outer = outer
	return op, outer, returned, nil
}

// condOp runs one of two subgraphs, the branches. Its inputs are the
// predicate, the operands (N), which both branches read, and the values
// each branch captured (K then, K else). A branch's inputs are the
// operands and its captured values; both branches have outputs of the
// same types, the op's.
type condOp struct {
	branches [2]*graph.Subgraph // then, else
	operands int
	captures [2]int
	tracer   *condTracer   // traces the branches again for other types; nil for a derivative's Cond
	outer    []*graph.Node // the values of enclosing graphs the traced branches read
	gate     bool          // a loop's step (see buildCond), as are its derivatives' Conds
}

// agree checks that the branches' outputs have the same number and types.
func (op *condOp) agree() error {
	a, b := op.branches[0].Outputs, op.branches[1].Outputs
	if len(a) != len(b) {
		return fmt.Errorf("the then branch returns %d outputs, the else branch %d", len(a), len(b))
	}
	if len(a) == 0 {
		return fmt.Errorf("the branches return no outputs")
	}
	for j := range a {
		if !a[j].Type().Equal(b[j].Type()) {
			return fmt.Errorf("the then branch returns output %d of type %v, the else branch of type %v", j, a[j].Type(), b[j].Type())
		}
	}
	return nil
}

// input is the op input that branch b's input i reads.
func (op *condOp) input(b, i int) int {
	if i < op.operands || b == 0 {
		return 1 + i
	}
	return 1 + i + op.captures[0]
}

func (op *condOp) Name() string { return "Cond" }

// SubgraphInput is the op input that branch b's input i reads (see
// graph.SubgraphBinder): a branch runs once per run of the op.
func (op *condOp) SubgraphInput(b, i int) (int, bool) { return op.input(b, i), false }

// SubgraphRuns is 1: the op runs one branch once.
func (op *condOp) SubgraphRuns(int) int { return 1 }

// HoistedDraws is nil: what a branch's function made in the enclosing
// graphs runs once per run of the Cond, as the branch does.
func (op *condOp) HoistedDraws(int) []*graph.Node { return nil }

// Subgraphs is the branches, then and else.
func (op *condOp) Subgraphs() []*graph.Subgraph { return op.branches[:] }

func (op *condOp) Types(in []graph.Type) ([]graph.Type, error) {
	if want := 1 + op.operands + op.captures[0] + op.captures[1]; len(in) != want {
		return nil, fmt.Errorf("%d inputs for a predicate, %d operands and %d captured values", len(in), op.operands, want-1-op.operands)
	}
	if in[0].Size() != 1 {
		return nil, fmt.Errorf("the predicate has type %v: it must hold one value", in[0])
	}
	for b, br := range op.branches {
		for i, n := range br.Inputs {
			if t := in[op.input(b, i)]; !t.Equal(n.Type()) {
				return nil, fmt.Errorf("input %d has type %v, want %v", op.input(b, i), t, n.Type())
			}
		}
	}
	return typesOf(op.branches[0].Outputs), nil
}

// taken is the branch the predicate selects: 0 (then) when it is nonzero.
func taken(pred *tensor.Dense) int {
	if nonzero(pred, 0) {
		return 0
	}
	return 1
}

func (op *condOp) Forward(out, in []*tensor.Dense) error { return op.ForwardExec(nil, out, in) }

// ForwardExec runs the taken branch on the runner the machine lends for
// it, or on an interpreter.
func (op *condOp) ForwardExec(e *graph.Exec, out, in []*tensor.Dense) error {
	b := taken(in[0])
	r := e.Runner(b)
	if r == nil {
		var err error
		if r, err = graph.NewInterpreter(op.branches[b]); err != nil {
			return err
		}
	}
	for i := range op.branches[b].Inputs {
		if buf := r.In(i); buf != nil {
			graph.CopyValues(buf, in[op.input(b, i)])
		}
	}
	if err := r.Run(); err != nil {
		return fmt.Errorf("%s branch: %v", branchNames[b], err)
	}
	for j := range out {
		graph.CopyValues(out[j], r.Out(j))
	}
	return nil
}

// Retype traces the branches again for operands of other types
// (graph.Replay: vm.Runner at another batch size). The branches must read
// the same values of the enclosing graph (readsSameValues), none of them
// replayed: a value computed from the replayed inputs is to be given to
// Cond as an operand.
func (op *condOp) Retype(in []graph.Type, replayed []bool) (any, error) {
	if op.tracer == nil {
		return nil, fmt.Errorf("this Cond cannot be traced again (it is a derivative's)")
	}
	N := op.operands
	if len(in) < 1+N {
		return nil, fmt.Errorf("%d inputs for a predicate and %d operands", len(in), N)
	}
	for k := 1 + N; k < len(in); k++ {
		if replayed[k] && k-1-N < len(op.outer) {
			return nil, fmt.Errorf("a branch reads %v, which is computed from the replayed inputs: give it to Cond as an operand", op.outer[k-1-N])
		}
	}
	again, outer, _, err := op.tracer.trace(in[1 : 1+N])
	if err != nil {
		return nil, err
	}
	if !slices.Equal(outer, op.outer) {
		if !readsSameValues(outer, op.outer) {
			return nil, fmt.Errorf("traced again for %v, the branches read other values of the enclosing graph", graph.TypesString(in))
		}
		again.outer = op.outer // values made again: the op reads those made first, its node's inputs
	}
	return again, nil
}

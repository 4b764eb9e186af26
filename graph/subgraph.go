package graph

import (
	"fmt"

	"gorgonia.org/tensor"
)

// NewSub returns an empty graph nested in g, for a subgraph an op runs as
// a function (a loop's body). Ops applied in it may read nodes of g and of
// g's enclosing graphs: each such node is captured once, standing in the
// nested graph as an input (Captures lists them).
func (g *Graph) NewSub() *Graph {
	if g == nil {
		return nil
	}
	return &Graph{parent: g, captureOf: map[*Node]*Node{}}
}

// Parent returns the graph g is nested in (nil for a top-level graph).
func (g *Graph) Parent() *Graph {
	if g == nil {
		return nil
	}
	return g.parent
}

// Captures returns the nodes of enclosing graphs that ops of g read, in
// the order they were first read, and the input nodes of g standing for
// them.
func (g *Graph) Captures() (outer, inner []*Node) {
	if g == nil {
		return nil, nil
	}
	return g.captured[:len(g.captured):len(g.captured)], g.captureIns[:len(g.captureIns):len(g.captureIns)]
}

// encloses reports whether g is h or one of the graphs h is nested in.
func (g *Graph) encloses(h *Graph) bool {
	for ; h != nil; h = h.parent {
		if h == g {
			return true
		}
	}
	return false
}

// capture returns the node of g standing for n, a node of an enclosing
// graph: an input, captured through every graph in between.
func (g *Graph) capture(n *Node) *Node {
	if n.g == g {
		return n
	}
	if c, ok := g.captureOf[n]; ok {
		return c
	}
	// Constants too are captured as inputs, not copied: a derivative
	// with respect to a constant (forward mode takes some) must reach
	// the body.
	from := g.parent.capture(n)
	c := g.add(&Node{kind: KindInput, typ: n.typ, name: captureName(n), site: n.site})
	g.captured = append(g.captured, from)
	g.captureIns = append(g.captureIns, c)
	g.captureOf[n] = c
	return c
}

func captureName(n *Node) string {
	if n.name != "" {
		return n.name
	}
	return fmt.Sprintf("%s#%d", n.OpName(), n.id)
}

// Capture returns the node of g standing for n: n itself when it is g's,
// its capture when it belongs to a graph enclosing g, and nil otherwise.
func (g *Graph) Capture(n *Node) *Node {
	if g == nil || n == nil || n.g == nil || !n.g.encloses(g) {
		return nil
	}
	return g.capture(n)
}

// Innermost returns the graph of the given nodes that the others' graphs
// enclose (nested graphs, see NewSub), or nil when there is none.
func Innermost(nodes ...*Node) *Graph { return innermost(nodes) }

// innermost returns the graph of the given nodes that the others' graphs
// enclose, or nil when they are not nested in one another.
func innermost(nodes []*Node) *Graph {
	var g *Graph
	for _, n := range nodes {
		if n == nil || n.g == nil {
			continue
		}
		switch {
		case g == nil || g.encloses(n.g):
			g = n.g
		case !n.g.encloses(g):
			return nil
		}
	}
	return g
}

// Subgraph is a function an op runs, made of nodes of one graph: each call
// feeds Inputs (input nodes of that graph) and computes Outputs.
type Subgraph struct {
	Inputs  []*Node
	Outputs []*Node
}

// SubgraphOp is implemented by ops that run subgraphs (a loop's body, say).
// A compiler compiles each subgraph into a program of its own, and a
// machine lends the op's kernel a Runner for each through Exec.Runner.
type SubgraphOp interface {
	Subgraphs() []*Subgraph
}

// SubgraphBinder is implemented by SubgraphOps that say what their
// subgraphs' inputs read, for checks that look through them (compile's
// check of random draws).
type SubgraphBinder interface {
	SubgraphOp
	// SubgraphInput returns the op input that input i of subgraph k reads
	// (-1 when none does), and whether the input takes a new value at each
	// run of the subgraph within one run of the op (a loop's carries and
	// the steps' slices of its sequences) rather than the same one.
	SubgraphInput(k, i int) (in int, perRun bool)
	// SubgraphRuns is the most times one run of the op runs subgraph k.
	SubgraphRuns(k int) int
	// HoistedDraws returns the random ops (Drawer) that the function
	// building subgraph k made in enclosing graphs, since they read no
	// value of the subgraph, and whose values the subgraph reads: they
	// draw once per run of the op, and every run of the subgraph reads
	// the same draws.
	HoistedDraws(k int) []*Node
}

// OutputPruner is implemented by multi-output ops that can spare the work
// and memory of outputs nothing reads (a loop's stored history, say).
// Prune is given which outputs are read; it returns an op computing the
// same values for those, and values with no elements for the others (its
// Types says which), or nil to keep the op as it is. Compilers call it on
// their own copy of the program; the graph keeps the op.
type OutputPruner interface {
	Prune(used []bool) MultiOp
}

// ElementDeps is implemented by ops that know which input elements each
// output element may depend on; sparsity patterns of Jacobians and
// Hessians (compile.JacobianPattern) follow them, and take an op without
// it to mix every element of its inputs. Deps calls read(i, k) for each
// element k of input i that output element e may depend on (flat,
// row-major indices): never fewer than its derivative reads.
type ElementDeps interface {
	Deps(in []Type, out Type, e int, read func(input, elem int))
}

// Runner runs one subgraph: the caller fills the buffers In returns,
// calls Run, and reads the buffers Out returns. The buffers belong to the
// runner and keep their identity across calls, so a loop allocates
// nothing. A kernel must not keep them beyond its own run.
type Runner interface {
	// In returns the buffer of the subgraph's input i, or nil when the
	// subgraph does not read that input.
	In(i int) *tensor.Dense
	// Run computes the outputs from the inputs.
	Run() error
	// Out returns the buffer holding output i after Run. It may be an
	// input's buffer (an output that is an input).
	Out(i int) *tensor.Dense
}

// Runner returns the runner a machine lends for the running op's
// subgraph i, or nil (a nil Exec: constant folding, gradcheck), in which
// case the kernel interprets the subgraph with NewInterpreter.
func (e *Exec) Runner(i int) Runner {
	if e == nil || i < 0 || i >= len(e.runners) {
		return nil
	}
	return e.runners[i]
}

// WithRunners returns an Exec sharing e's workers and state that lends
// runners to an op running subgraphs. Machines call it.
func (e *Exec) WithRunners(runners []Runner) *Exec {
	if e == nil {
		e = NewExec(nil)
	}
	return &Exec{kernel: e.kernel, runners: runners}
}

// interpreter is the Runner of a subgraph computed node by node, each op
// through its Forward, with buffers made once.
type interpreter struct {
	ins   []*tensor.Dense
	outs  []*tensor.Dense
	steps []step
}

type step struct {
	op    Op
	multi MultiOp
	in    []*tensor.Dense
	out   []*tensor.Dense
}

// NewInterpreter returns a Runner computing sub without compiling it, for
// kernels lent no runner. Its buffers are made here.
func NewInterpreter(sub *Subgraph) (Runner, error) {
	if sub == nil {
		return nil, fmt.Errorf("nabla: NewInterpreter: the subgraph is nil")
	}
	r := &interpreter{ins: make([]*tensor.Dense, len(sub.Inputs))}
	vals := map[*Node]*tensor.Dense{}
	for i, n := range sub.Inputs {
		if n == nil || n.err != nil || n.kind != KindInput {
			return nil, fmt.Errorf("subgraph input %d (%v) is not an input node", i, n)
		}
		r.ins[i] = NewDenseOf(n.typ)
		vals[n] = r.ins[i]
	}
	var order []*Node
	seen := map[*Node]bool{}
	var visit func(n *Node) error
	visit = func(n *Node) error {
		if seen[n] {
			return nil
		}
		seen[n] = true
		if _, ok := vals[n]; ok {
			return nil
		}
		switch n.kind {
		case KindConst, KindParam:
			vals[n] = n.value
			return nil
		case KindInput:
			return fmt.Errorf("subgraph reads input %v, which is not one of its inputs", n)
		}
		for _, in := range n.inputs {
			if err := visit(in); err != nil {
				return err
			}
		}
		order = append(order, n)
		return nil
	}
	for _, n := range sub.Outputs {
		if n == nil || n.err != nil {
			return nil, fmt.Errorf("subgraph output %v is nil or poisoned", n)
		}
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	for _, n := range order {
		if _, ok := vals[n]; ok {
			continue // computed with its group
		}
		s := step{op: n.op, multi: n.multi}
		for _, in := range n.inputs {
			s.in = append(s.in, vals[in])
		}
		for _, o := range n.Outputs() {
			t := NewDenseOf(o.typ)
			vals[o] = t
			s.out = append(s.out, t)
		}
		r.steps = append(r.steps, s)
	}
	for _, n := range sub.Outputs {
		r.outs = append(r.outs, vals[n])
	}
	return r, nil
}

func (r *interpreter) In(i int) *tensor.Dense  { return denseAt(r.ins, i) }
func (r *interpreter) Out(i int) *tensor.Dense { return denseAt(r.outs, i) }

// denseAt returns ts[i], or nil when i is out of range.
func denseAt(ts []*tensor.Dense, i int) *tensor.Dense {
	if i < 0 || i >= len(ts) {
		return nil
	}
	return ts[i]
}

func (r *interpreter) Run() error {
	for _, s := range r.steps {
		var err error
		if s.op != nil {
			err = s.op.Forward(s.out[0], s.in)
		} else {
			err = s.multi.Forward(s.out, s.in)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

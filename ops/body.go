package ops

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Helpers shared by the ops whose arguments are Go functions traced into
// nested graphs (graph.NewSub): Scan's body, Cond's branches.

// traceBody calls the user's body, turning a panic into an error.
func traceBody(body ScanBody, carry, x []*graph.Node) (newCarry, y []*graph.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panicked: %v", r)
		}
	}()
	newCarry, y = body(carry, x)
	return newCarry, y, nil
}

// tracedError is the error of a nested graph (a body's, a branch's) as
// part of the error of the op holding it, which starts "nabla: " and ends
// with the caller's line: its own "nabla: " is left out, and its line
// where that is the caller's; a line of its own follows the op it names
// ("Add at model.go:43: dtypes differ …"). It unwraps to the error.
type tracedError struct {
	msg string
	err error
}

func (e *tracedError) Error() string { return e.msg }

func (e *tracedError) Unwrap() error { return e.err }

// traced is err, a nested graph's (or its function's: a panic), as the
// error of the op holding it tells it (see tracedError).
func traced(err error) error {
	gerr, ok := err.(*graph.Error)
	if !ok || gerr == nil {
		return &tracedError{msg: strings.TrimPrefix(err.Error(), "nabla: "), err: err}
	}
	what := "unknown error"
	if gerr.Err != nil {
		what = gerr.Err.Error()
	}
	op := gerr.Op
	if gerr.Site != "" && gerr.Site != graph.CallerSite() {
		op += " at " + gerr.Site
	}
	return &tracedError{msg: op + ": " + what, err: err}
}

// traceIn is traceBody for a body named what ("body", "then branch")
// traced in the nested graph sub: a panic, or an error the body's ops
// record on sub, is an error saying what failed (see traced).
func traceIn(sub *graph.Graph, what string, body ScanBody, carry, x []*graph.Node) (newCarry, y []*graph.Node, err error) {
	newCarry, y, err = traceBody(body, carry, x)
	if err == nil {
		err = sub.Err()
	}
	if err != nil {
		return newCarry, y, fmt.Errorf("%s: %w", what, traced(err))
	}
	return newCarry, y, nil
}

// caught calls build, a user's function (named what) that builds on g,
// and returns the error an op it built recorded (see graph.Graph.Catch),
// taken off the graph, as the error of the op running it tells it ("f:
// Add at model.go:43: …"); nil when it recorded none.
func caught(g *graph.Graph, what string, build func()) error {
	if err := g.Catch(build); err != nil {
		return fmt.Errorf("%s: %w", what, traced(err))
	}
	return nil
}

// captureOutputs replaces each node a body (named what) returns with the
// node of sub standing for it, refusing nil and poisoned nodes and nodes
// of graphs that do not enclose sub.
func captureOutputs(sub *graph.Graph, what string, outs []*graph.Node) error {
	for i, n := range outs {
		if n == nil || n.Err() != nil {
			return fmt.Errorf("%s returns a nil or poisoned node: %v", what, n)
		}
		outs[i] = sub.Capture(n)
		if outs[i] == nil {
			return fmt.Errorf("%s returns %v, a node of an unrelated graph", what, n)
		}
	}
	return nil
}

// checkBodyLeaves refuses inputs and parameters made inside a body (named
// what): a body's inputs are the given ones (fed as feed says) and its
// captured values, and parameters belong to the enclosing graph (where
// optimisers find them).
func checkBodyLeaves(sub *graph.Graph, what, feed string, inputs []*graph.Node) error {
	for _, n := range sub.Nodes() {
		switch {
		case n.Kind() == graph.KindParam:
			return fmt.Errorf("%s makes parameter %v: make parameters outside the %s and read them there", what, n, what)
		case n.Kind() == graph.KindInput && !slices.Contains(inputs, n):
			return fmt.Errorf("%s makes input %v: feed values as %s, or read inputs of the enclosing graph", what, n, feed)
		}
	}
	return nil
}

// typesOf is the nodes' types.
func typesOf(nodes []*graph.Node) []graph.Type {
	ts := make([]graph.Type, len(nodes))
	for i, n := range nodes {
		ts[i] = n.Type()
	}
	return ts
}

// firstGraph is the graph of the first node that has one.
func firstGraph(nodes []*graph.Node) *graph.Graph {
	for _, n := range nodes {
		if g := n.Graph(); g != nil {
			return g
		}
	}
	return nil
}

func repeat(n *graph.Node, k int) []*graph.Node {
	out := make([]*graph.Node, k)
	for i := range out {
		out[i] = n
	}
	return out
}

// nonzero reports whether element i of t is not zero.
func nonzero(t *tensor.Dense, i int) bool {
	switch t.Dtype() {
	case graph.Float32:
		return t.Float32s()[i] != 0
	case graph.Float64:
		return t.Float64s()[i] != 0
	case graph.Int32:
		return t.Int32s()[i] != 0
	case graph.Int64:
		return t.Int64s()[i] != 0
	}
	return false
}

// graphMarks returns the number of nodes g and each graph enclosing it
// hold, before a body is traced: the nodes past the marks are those the
// body's function made.
func graphMarks(g *graph.Graph) map[*graph.Graph]int {
	marks := map[*graph.Graph]int{}
	for ; g != nil; g = g.Parent() {
		marks[g] = g.Len()
	}
	return marks
}

// hoistedDraws returns the random ops (graph.Drawer) among the nodes of
// enclosing graphs that a body's function made (past marks) and from
// which the values the body captured (outer) are computed through such
// nodes alone.
func hoistedDraws(marks map[*graph.Graph]int, outer []*graph.Node) []*graph.Node {
	var draws []*graph.Node
	seen := map[*graph.Node]bool{}
	stack := slices.Clone(outer)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		mark, ok := marks[n.Graph()]
		if seen[n] || !ok || n.ID() < mark {
			continue
		}
		seen[n] = true
		if _, ok := n.Op().(graph.Drawer); ok && n.Kind() == graph.KindOp {
			draws = append(draws, n)
		}
		stack = append(stack, n.Inputs()...)
	}
	return draws
}

// readsSameValues reports whether outer, the values of enclosing graphs that a
// body traced again reads, are those it read as traced first (old), in
// order: the same nodes, or nodes that the body's function made again
// with the same ops, parameters and operands (an op it applies to
// captured values alone, reading none of the body's, is made in their
// graph at each trace). Random draws made again, and ops holding bodies
// of their own, are not taken for the same values.
func readsSameValues(outer, old []*graph.Node) bool {
	if len(outer) != len(old) {
		return false
	}
	for i, n := range outer {
		if !computesSameValue(n, old[i]) {
			return false
		}
	}
	return true
}

// computesSameValue reports whether a, made by a trace, computes b's value.
func computesSameValue(a, b *graph.Node) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Kind() != b.Kind() || !a.Type().Equal(b.Type()) || len(a.Inputs()) != len(b.Inputs()) {
		return false
	}
	switch a.Kind() {
	case graph.KindConst:
		x, y := graph.Float64s(a.Value()), graph.Float64s(b.Value())
		return slices.EqualFunc(x, y, func(u, v float64) bool { return math.Float64bits(u) == math.Float64bits(v) })
	case graph.KindOp:
		op := a.Op()
		if _, draws := op.(graph.Drawer); op == nil || draws || !reflect.DeepEqual(op, b.Op()) {
			return false // a multi-output op (a loop), a draw, another op
		}
		for i, x := range a.Inputs() {
			if !computesSameValue(x, b.Inputs()[i]) {
				return false
			}
		}
		return true
	}
	return false // inputs and parameters are the same nodes or other values
}
